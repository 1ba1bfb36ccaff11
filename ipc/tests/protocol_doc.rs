//! docs/PROTOCOL.md agrees with the wire types.
//!
//! Every fenced example tagged `json hello`, `json handshake`, `json request`
//! or `json server` must decode as the message it claims to be; together the
//! examples must show every request, every response, every event and every
//! stream start; and the document must name every error and limitation code.

use panehost_ipc::{
    decode, limitation, Encoding, ErrorCode, Event, HandshakeReply, Hello, PaneState, Request, RequestFrame, Response,
    ResumeRequest, ServerMessage, StreamStart, WaitTarget, PROTOCOL_REVISION,
};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use std::collections::BTreeSet;

mod support;

/// An enum's variant names, as a set.
fn variant_set<T: DeserializeOwned>() -> BTreeSet<&'static str> {
    support::variant_names::<T>().into_iter().collect()
}

const DOC_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/PROTOCOL.md");

/// The kinds of tagged examples, by their fence info string.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Hello,
    Handshake,
    Request,
    Server,
}

impl Kind {
    fn from_info(info: &str) -> Option<Kind> {
        match info {
            "json hello" => Some(Kind::Hello),
            "json handshake" => Some(Kind::Handshake),
            "json request" => Some(Kind::Request),
            "json server" => Some(Kind::Server),
            _ => None,
        }
    }
}

/// One fenced code block.
#[derive(Debug)]
struct Block {
    /// 1-based line number of the opening fence.
    line: usize,
    /// The info string, whitespace-normalised (`json request`).
    info: String,
    text: String,
}

fn read_doc() -> String {
    std::fs::read_to_string(DOC_PATH).unwrap_or_else(|err| panic!("cannot read {DOC_PATH}: {err}"))
}

/// Every fenced (```) code block of a Markdown document.
fn fenced_blocks(doc: &str) -> Vec<Block> {
    let mut blocks = Vec::new();
    let mut open: Option<(usize, usize, String, Vec<&str>)> = None;
    for (index, line) in doc.lines().enumerate() {
        let trimmed = line.trim_start();
        let ticks = trimmed.chars().take_while(|&c| c == '`').count();
        match &mut open {
            None => {
                if ticks >= 3 {
                    let info = trimmed[ticks..].split_whitespace().collect::<Vec<_>>().join(" ");
                    open = Some((index + 1, ticks, info, Vec::new()));
                }
            }
            Some((start, fence, info, lines)) => {
                if ticks >= *fence && trimmed[ticks..].trim().is_empty() {
                    blocks.push(Block { line: *start, info: std::mem::take(info), text: lines.join("\n") });
                    open = None;
                } else {
                    lines.push(line);
                }
            }
        }
    }
    if let Some((start, ..)) = open {
        panic!("PROTOCOL.md line {start}: code block is never closed");
    }
    blocks
}

/// The tagged JSON examples with their kinds.
fn examples(doc: &str) -> Vec<(Kind, Block)> {
    let mut examples = Vec::new();
    for block in fenced_blocks(doc) {
        let first_word = block.info.split(' ').next().unwrap_or("");
        if first_word != "json" {
            continue;
        }
        match Kind::from_info(&block.info) {
            Some(kind) => examples.push((kind, block)),
            None => panic!(
                "PROTOCOL.md line {}: a json block must be tagged `json hello`, `json handshake`, \
                 `json request` or `json server`, not `{}`",
                block.line, block.info
            ),
        }
    }
    examples
}

/// The variant name of an externally tagged JSON enum value: the string of a
/// unit variant, or the only key of an object.
fn variant_of(value: &Value) -> Option<String> {
    match value {
        Value::String(name) => Some(name.clone()),
        Value::Object(map) if map.len() == 1 => map.keys().next().cloned(),
        _ => None,
    }
}

/// Every value found under `key` anywhere inside `value`.
fn values_under<'v>(value: &'v Value, key: &str, found: &mut Vec<&'v Value>) {
    match value {
        Value::Object(map) => {
            for (name, inner) in map {
                if name == key {
                    found.push(inner);
                }
                values_under(inner, key, found);
            }
        }
        Value::Array(items) => items.iter().for_each(|inner| values_under(inner, key, found)),
        _ => {}
    }
}

/// What the examples show, by JSON key.
#[derive(Default)]
struct Seen {
    requests: BTreeSet<String>,
    server_messages: BTreeSet<String>,
    responses: BTreeSet<String>,
    events: BTreeSet<String>,
    stream_starts: BTreeSet<String>,
    handshake_replies: BTreeSet<String>,
    pane_states: BTreeSet<String>,
    resume_requests: BTreeSet<String>,
    error_codes: Vec<(usize, String)>,
    limitations: Vec<(usize, String)>,
}

fn check_examples(doc: &str) -> Seen {
    let examples = examples(doc);
    assert!(!examples.is_empty(), "PROTOCOL.md has no tagged JSON examples");
    let mut seen = Seen::default();
    let mut failures = Vec::new();

    for (kind, block) in &examples {
        let bytes = block.text.as_bytes();
        let decoded = match kind {
            Kind::Hello => serde_json::from_slice::<Hello>(bytes).map(|_| ()).map_err(|e| e.to_string()),
            Kind::Handshake => serde_json::from_slice::<HandshakeReply>(bytes).map(|_| ()).map_err(|e| e.to_string()),
            Kind::Request => decode::<RequestFrame>(Encoding::Json, bytes).map(|_| ()).map_err(|e| e.to_string()),
            Kind::Server => decode::<ServerMessage>(Encoding::Json, bytes).map(|_| ()).map_err(|e| e.to_string()),
        };
        if let Err(error) = decoded {
            failures.push(format!("line {} (`{}`): {error}", block.line, block.info));
            continue;
        }

        let value: Value = serde_json::from_slice(bytes).expect("decoded above, so it is JSON");
        let line = block.line;
        match kind {
            Kind::Hello => {}
            Kind::Handshake => {
                seen.handshake_replies.extend(variant_of(&value));
                if let Some(code) = value.pointer("/refused/code").and_then(Value::as_str) {
                    seen.error_codes.push((line, code.to_owned()));
                }
            }
            Kind::Request => {
                seen.requests.extend(variant_of(&value["request"]));
                let mut resumes = Vec::new();
                values_under(&value["request"], "resume", &mut resumes);
                seen.resume_requests.extend(resumes.into_iter().filter_map(variant_of));
            }
            Kind::Server => {
                seen.server_messages.extend(variant_of(&value));
                if let Some(body) = value.pointer("/response/body") {
                    seen.responses.extend(variant_of(body));
                }
                if let Some(start) = value.pointer("/response/body/subscribed/start") {
                    seen.stream_starts.extend(variant_of(start));
                }
                if let Some(event) = value.pointer("/event/event") {
                    seen.events.extend(variant_of(event));
                }
                if let Some(error) = value.pointer("/error/error") {
                    if let Some(code) = error["code"].as_str() {
                        seen.error_codes.push((line, code.to_owned()));
                    }
                    if let Some(limitation) = error["limitation"].as_str() {
                        seen.limitations.push((line, limitation.to_owned()));
                    }
                }
                let mut states = Vec::new();
                values_under(&value, "state", &mut states);
                seen.pane_states.extend(states.into_iter().filter_map(variant_of));
            }
        }
    }

    assert!(failures.is_empty(), "PROTOCOL.md examples that do not decode:\n{}", failures.join("\n"));
    seen
}

fn assert_all_shown(what: &str, expected: BTreeSet<&'static str>, seen: &BTreeSet<String>) {
    let missing: Vec<&str> = expected.iter().copied().filter(|name| !seen.contains(*name)).collect();
    assert!(missing.is_empty(), "PROTOCOL.md shows no example of these {what} variants: {missing:?}");
}

#[test]
fn every_tagged_example_decodes() {
    check_examples(&read_doc());
}

#[test]
fn examples_show_every_variant() {
    let seen = check_examples(&read_doc());
    assert_all_shown("Request", variant_set::<Request>(), &seen.requests);
    assert_all_shown("ServerMessage", variant_set::<ServerMessage>(), &seen.server_messages);
    assert_all_shown("Response", variant_set::<Response>(), &seen.responses);
    assert_all_shown("Event", variant_set::<Event>(), &seen.events);
    assert_all_shown("StreamStart", variant_set::<StreamStart>(), &seen.stream_starts);
    assert_all_shown("HandshakeReply", variant_set::<HandshakeReply>(), &seen.handshake_replies);
    assert_all_shown("PaneState", variant_set::<PaneState>(), &seen.pane_states);
    assert_all_shown("ResumeRequest", variant_set::<ResumeRequest>(), &seen.resume_requests);
}

#[test]
fn examples_use_only_known_codes() {
    let seen = check_examples(&read_doc());
    for (line, code) in &seen.error_codes {
        assert!(ErrorCode::parse(code).is_some(), "PROTOCOL.md line {line}: unknown error code {code}");
    }
    for (line, code) in &seen.limitations {
        assert!(limitation::ALL.contains(&code.as_str()), "PROTOCOL.md line {line}: unknown limitation code {code}");
    }
}

#[test]
fn every_error_and_limitation_code_is_documented() {
    let doc = read_doc();
    let missing: Vec<&str> =
        ErrorCode::ALL.iter().map(|code| code.as_str()).filter(|code| !doc.contains(&format!("`{code}`"))).collect();
    assert!(missing.is_empty(), "PROTOCOL.md does not name these error codes: {missing:?}");
    let missing: Vec<&str> =
        limitation::ALL.iter().copied().filter(|code| !doc.contains(&format!("`{code}`"))).collect();
    assert!(missing.is_empty(), "PROTOCOL.md does not name these limitation codes: {missing:?}");
}

#[test]
fn the_fence_parser_sees_tags_and_line_numbers() {
    let doc = "text\n```json request\n{\"id\":1,\"request\":{\"list\":{}}}\n```\n\n```text\nx\n```\n";
    let blocks = fenced_blocks(doc);
    assert_eq!(blocks.len(), 2);
    assert_eq!((blocks[0].line, blocks[0].info.as_str()), (2, "json request"));
    assert_eq!(blocks[0].text, "{\"id\":1,\"request\":{\"list\":{}}}");
    assert_eq!(examples(doc).len(), 1);
    assert!(variant_set::<Request>().contains("list"));
}

// --- hex payloads ------------------------------------------------------------

/// The bytes of a `hex ...` block: on each line, whatever follows `#` is a
/// comment, and in a dump line (`00000000  00 00 ...  |....|`) the leading
/// offset and the `|...|` column are left out; what remains is hex byte
/// pairs.
fn hex_bytes(block: &Block) -> Vec<u8> {
    let mut bytes = Vec::new();
    for line in block.text.lines() {
        let line = line.split('#').next().unwrap_or("");
        let line = line.split('|').next().unwrap_or("");
        let mut tokens = line.split_whitespace().peekable();
        if tokens.peek().is_some_and(|first| first.len() == 8) {
            tokens.next();
        }
        for token in tokens {
            let byte = u8::from_str_radix(token, 16).ok().filter(|_| token.len() == 2);
            bytes.push(byte.unwrap_or_else(|| panic!("PROTOCOL.md line {}: `{token}` is not a hex byte", block.line)));
        }
    }
    bytes
}

/// What a `hex` block's info string says of its bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct HexKind {
    /// A whole frame (a 4-byte length, then the payload) or a payload.
    frame: bool,
    encoding: Encoding,
    /// A request frame, or a server message.
    request: bool,
}

fn hex_kind(block: &Block) -> Option<HexKind> {
    let words: Vec<&str> = block.info.split(' ').collect();
    if words.first() != Some(&"hex") {
        return None;
    }
    let kind = match &words[1..] {
        ["frame", encoding, direction] => (true, *encoding, *direction),
        [encoding, direction] => (false, *encoding, *direction),
        _ => panic!("PROTOCOL.md line {}: a hex block is tagged `hex [frame] ENCODING request|server`", block.line),
    };
    let encoding = match kind.1 {
        "json" => Encoding::Json,
        "bincode" => Encoding::Bincode,
        other => panic!("PROTOCOL.md line {}: unknown encoding {other}", block.line),
    };
    let request = match kind.2 {
        "request" => true,
        "server" => false,
        other => panic!("PROTOCOL.md line {}: `{other}` is neither request nor server", block.line),
    };
    Some(HexKind { frame: kind.0, encoding, request })
}

/// Every `hex` block with its kind, its payload, and the `json` block right
/// after it (the next fenced block), which shows the same message.
fn hex_examples(doc: &str) -> Vec<(Block, HexKind, Vec<u8>, Block)> {
    let blocks = fenced_blocks(doc);
    let mut found = Vec::new();
    for (index, block) in blocks.iter().enumerate() {
        let Some(kind) = hex_kind(block) else { continue };
        let mut bytes = hex_bytes(block);
        if kind.frame {
            assert!(bytes.len() >= 4, "PROTOCOL.md line {}: a frame has a 4-byte length", block.line);
            let length = u32::from_be_bytes(bytes[..4].try_into().unwrap()) as usize;
            bytes.drain(..4);
            assert_eq!(length, bytes.len(), "PROTOCOL.md line {}: the length prefix and the payload", block.line);
        }
        let next = blocks.get(index + 1).unwrap_or_else(|| panic!("PROTOCOL.md line {}: no JSON after", block.line));
        let expected = if kind.request { "json request" } else { "json server" };
        assert_eq!(next.info, expected, "PROTOCOL.md line {}: the block after a hex block shows its JSON", block.line);
        found.push((
            Block { line: block.line, info: block.info.clone(), text: block.text.clone() },
            kind,
            bytes,
            Block { line: next.line, info: next.info.clone(), text: next.text.clone() },
        ));
    }
    found
}

/// The hex payloads of PROTOCOL.md, as the test of the running host sends
/// them; shared through this function's checks.
#[test]
fn every_hex_payload_decodes_to_the_json_beside_it_and_encodes_back() {
    let doc = read_doc();
    let examples = hex_examples(&doc);
    assert!(examples.len() >= 6, "PROTOCOL.md shows only {} hex payloads", examples.len());
    let mut failures = Vec::new();
    for (block, kind, bytes, json) in &examples {
        let line = block.line;
        if kind.request {
            let shown: RequestFrame = serde_json::from_str(&json.text).unwrap();
            match decode::<RequestFrame>(kind.encoding, bytes) {
                Ok(decoded) if decoded == shown => {}
                Ok(decoded) => failures.push(format!("line {line}: decodes to {decoded:?}, the JSON shows {shown:?}")),
                Err(error) => failures.push(format!("line {line}: does not decode: {error}")),
            }
            if panehost_ipc::encode(kind.encoding, &shown).unwrap() != *bytes && kind.encoding == Encoding::Bincode {
                failures.push(format!("line {line}: the JSON beside it encodes to other bytes"));
            }
        } else {
            let shown: ServerMessage = serde_json::from_str(&json.text).unwrap();
            match decode::<ServerMessage>(kind.encoding, bytes) {
                Ok(decoded) if decoded == shown => {}
                Ok(decoded) => failures.push(format!("line {line}: decodes to {decoded:?}, the JSON shows {shown:?}")),
                Err(error) => failures.push(format!("line {line}: does not decode: {error}")),
            }
            if panehost_ipc::encode(kind.encoding, &shown).unwrap() != *bytes && kind.encoding == Encoding::Bincode {
                failures.push(format!("line {line}: the JSON beside it encodes to other bytes"));
            }
        }
    }
    assert!(failures.is_empty(), "PROTOCOL.md hex payloads:\n{}", failures.join("\n"));
}

// --- the host's examples show every field ------------------------------------

/// What the host writes shows every field: an example of a message the host
/// sends, decoded and written again by serde, is the example (keys in any
/// order). A field left out of an example (say `labels` of a pane) makes it
/// differ.
#[test]
fn every_example_of_what_the_host_sends_shows_every_field() {
    let mut failures = Vec::new();
    for (kind, block) in examples(&read_doc()) {
        let shown: Value = serde_json::from_str(&block.text).unwrap();
        // In the order of the fields, as the host writes it.
        let written = match kind {
            Kind::Server => serde_json::to_string(&serde_json::from_value::<ServerMessage>(shown.clone()).unwrap()),
            Kind::Handshake => serde_json::to_string(&serde_json::from_value::<HandshakeReply>(shown.clone()).unwrap()),
            Kind::Hello | Kind::Request => continue,
        }
        .unwrap();
        if serde_json::from_str::<Value>(&written).unwrap() != shown {
            failures.push(format!("line {}: the host writes\n  {written}", block.line));
        }
    }
    assert!(
        failures.is_empty(),
        "PROTOCOL.md examples that differ from what the host writes:\n{}",
        failures.join("\n")
    );
}

// --- tables ------------------------------------------------------------------

/// One Markdown table: the line of its header, its header cells, its rows.
#[derive(Debug)]
struct Table {
    line: usize,
    header: Vec<String>,
    rows: Vec<Vec<String>>,
}

fn cells(line: &str) -> Vec<String> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(|cell| cell.trim().to_owned()).collect()
}

/// Every table outside code blocks.
fn tables(doc: &str) -> Vec<Table> {
    let mut tables: Vec<Table> = Vec::new();
    let mut in_code = false;
    let mut current: Option<Table> = None;
    let lines: Vec<&str> = doc.lines().collect();
    for (index, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.starts_with("```") {
            in_code = !in_code;
        }
        if in_code || !trimmed.starts_with('|') {
            tables.extend(current.take());
            continue;
        }
        match &mut current {
            None => {
                let separator = lines.get(index + 1).is_some_and(|next| next.trim_start().starts_with("|-"));
                if separator {
                    current = Some(Table { line: index + 1, header: cells(line), rows: Vec::new() });
                }
            }
            Some(table) => {
                if !trimmed.starts_with("|-") {
                    table.rows.push(cells(line));
                }
            }
        }
    }
    tables.extend(current);
    tables
}

/// The table whose header is exactly `header`.
fn table<'t>(tables: &'t [Table], header: &[&str]) -> &'t Table {
    let found: Vec<&Table> = tables.iter().filter(|table| table.header == header).collect();
    assert_eq!(found.len(), 1, "PROTOCOL.md has {} tables headed {header:?}", found.len());
    found[0]
}

/// The names in backticks in a cell, in order.
fn ticked(cell: &str) -> Vec<String> {
    cell.split('`').skip(1).step_by(2).map(str::to_owned).collect()
}

#[test]
fn the_variant_index_table_lists_every_variant_of_every_enum_in_order() {
    let doc = read_doc();
    let tables = tables(&doc);
    let indices = table(&tables, &["Enum", "Index: variant"]);
    let enums: Vec<(&str, Vec<&'static str>)> = vec![
        ("Request", support::variant_names::<Request>()),
        ("ServerMessage", support::variant_names::<ServerMessage>()),
        ("Response", support::variant_names::<Response>()),
        ("Event", support::variant_names::<Event>()),
        ("StreamStart", support::variant_names::<StreamStart>()),
        ("PaneState", support::variant_names::<PaneState>()),
        ("ResumeRequest", support::variant_names::<ResumeRequest>()),
        ("WaitTarget", support::variant_names::<WaitTarget>()),
        ("Encoding", support::variant_names::<Encoding>()),
    ];
    let listed: Vec<String> = indices.rows.iter().map(|row| ticked(&row[0]).join("")).collect();
    assert_eq!(listed, enums.iter().map(|(name, _)| name.to_string()).collect::<Vec<_>>(), "the enums the table lists");
    for (row, (name, variants)) in indices.rows.iter().zip(&enums) {
        let expected: Vec<String> =
            variants.iter().enumerate().map(|(index, variant)| format!("{index} `{variant}`")).collect();
        let shown = row[1].split(" (").next().unwrap_or("");
        assert_eq!(shown, expected.join(", "), "PROTOCOL.md line {}: the variants of {name}", indices.line);
    }
}

#[test]
fn the_operations_table_names_every_request_and_its_answer_in_order() {
    let doc = read_doc();
    let tables = tables(&doc);
    let operations = table(&tables, &["Request", "Answer", "Purpose"]);
    let shown: Vec<(String, String)> =
        operations.rows.iter().map(|row| (ticked(&row[0]).join(""), ticked(&row[1]).join(""))).collect();
    let expected: Vec<(String, String)> = panehost_ipc::request::ANSWERS
        .iter()
        .map(|(request, answer)| (request.to_string(), answer.to_string()))
        .collect();
    assert_eq!(shown, expected, "PROTOCOL.md line {}: request::ANSWERS", operations.line);
}

#[test]
fn the_events_table_names_every_event_in_order() {
    let doc = read_doc();
    let tables = tables(&doc);
    let events = table(&tables, &["Event", "Fields", "Meaning"]);
    let shown: Vec<String> = events.rows.iter().flat_map(|row| ticked(&row[0])).collect();
    assert_eq!(shown, support::variant_names::<Event>(), "PROTOCOL.md line {}", events.line);
    for row in &events.rows {
        let names = ticked(&row[0]);
        let watch_only = names.iter().all(|name| {
            !panehost_ipc::event::STREAMS
                .iter()
                .any(|(event, streams)| event == name && streams.contains(&panehost_ipc::event::stream::PANE))
        });
        assert_eq!(watch_only, row[2].contains("Only on a `watch`"), "PROTOCOL.md: the row of {names:?} says where");
    }
}

#[test]
fn the_code_tables_list_every_code_in_order() {
    let doc = read_doc();
    let tables = tables(&doc);
    let errors = table(&tables, &["Code", "Where", "When"]);
    let shown: Vec<String> = errors.rows.iter().map(|row| ticked(&row[0]).join("")).collect();
    assert_eq!(shown, ErrorCode::NAMES, "PROTOCOL.md line {}: the error codes", errors.line);
    let limitations = table(&tables, &["Code", "Meaning"]);
    let shown: Vec<String> = limitations.rows.iter().map(|row| ticked(&row[0]).join("")).collect();
    assert_eq!(shown, limitation::ALL, "PROTOCOL.md line {}: the limitation codes", limitations.line);
    let reasons = table(&tables, &["Reason", "When"]);
    let shown: Vec<String> = reasons.rows.iter().map(|row| ticked(&row[0]).join("")).collect();
    assert_eq!(shown, panehost_ipc::event::end_reason::ALL, "PROTOCOL.md line {}: the reasons of ended", reasons.line);
}

#[test]
fn every_value_of_every_vocabulary_is_documented() {
    let doc = read_doc();
    let mut missing = Vec::new();
    for vocabulary in panehost_ipc::vocabulary::ALL {
        for value in vocabulary.values {
            if !doc.contains(&format!("`{value}`")) {
                missing.push(format!("{}: {value}", vocabulary.name));
            }
        }
        if !doc.contains(&format!("`{}`", vocabulary.name)) {
            missing.push(format!("the vocabulary's name {}", vocabulary.name));
        }
    }
    assert!(missing.is_empty(), "PROTOCOL.md does not name these values in backticks: {missing:?}");
}

// --- the revision ------------------------------------------------------------

/// Every place that states the current revision states the crate's: the
/// version line at the top and in section 11, the Hello table, the hello
/// and welcome examples (but the one of an older client, which is
/// refused), a refusal's message; and section 11's table has a row for
/// each revision from 1 to the current one.
#[test]
fn the_revision_is_the_current_one_everywhere() {
    let doc = read_doc();
    let current = PROTOCOL_REVISION;
    let mut stated = 0;
    for (index, line) in doc.lines().enumerate() {
        for marker in ["revision **", "`PROTOCOL_REVISION`: **"] {
            for (at, _) in line.match_indices(marker) {
                let digits: String = line[at + marker.len()..].chars().take_while(char::is_ascii_digit).collect();
                assert_eq!(digits, current.to_string(), "PROTOCOL.md line {}: {line}", index + 1);
                stated += 1;
            }
        }
        if let Some(at) = line.find("for a client of this document") {
            let before = &line[..at];
            let value = before.rsplit('`').nth(1).unwrap_or("");
            assert_eq!(value, current.to_string(), "PROTOCOL.md line {}: {line}", index + 1);
            stated += 1;
        }
        if let Some(rest) = line.strip_prefix("PROTOCOL_REVISION = ") {
            assert_eq!(rest, current.to_string(), "PROTOCOL.md line {}: the Python example's revision", index + 1);
            stated += 1;
        }
        if let Some(at) = line.find("use a client of revision ") {
            let digits: String = line[at + 25..].chars().take_while(char::is_ascii_digit).collect();
            assert_eq!(digits, current.to_string(), "PROTOCOL.md line {}", index + 1);
            stated += 1;
        }
    }
    assert!(stated >= 5, "PROTOCOL.md states the revision in only {stated} places the test knows");

    for (kind, block) in examples(&doc) {
        let value: Value = serde_json::from_str(&block.text).unwrap();
        let revision = match kind {
            Kind::Hello => value.get("revision"),
            Kind::Handshake => value.pointer("/welcome/revision"),
            _ => None,
        };
        let Some(revision) = revision else { continue };
        let old_client = value["client"].as_str().is_some_and(|client| client.starts_with("old-"));
        if !old_client {
            assert_eq!(revision, &json!(current), "PROTOCOL.md line {}: an example of another revision", block.line);
        }
    }

    let tables = tables(&doc);
    let revisions = table(&tables, &["Revision", "What it added"]);
    let shown: Vec<String> = revisions.rows.iter().map(|row| row[0].clone()).collect();
    let expected: Vec<String> = (1..=current).map(|revision| revision.to_string()).collect();
    assert_eq!(shown, expected, "PROTOCOL.md line {}: a row per revision", revisions.line);
}
