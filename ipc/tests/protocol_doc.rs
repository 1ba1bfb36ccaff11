//! docs/PROTOCOL.md agrees with the wire types.
//!
//! Every fenced example tagged `json hello`, `json handshake`, `json request`
//! or `json server` must decode as the message it claims to be; together the
//! examples must show every request, every response, every event and every
//! stream start; and the document must name every error and limitation code.

use panehost_ipc::{
    decode, limitation, Encoding, ErrorCode, Event, HandshakeReply, Hello, PaneState, Request, RequestFrame, Response,
    ResumeRequest, ServerMessage, StreamStart,
};
use serde::de::{DeserializeOwned, Error as _, Visitor};
use serde_json::Value;
use std::collections::BTreeSet;

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

/// The serde names of an enum's variants, as its derived `Deserialize`
/// declares them (so the list follows the type, not this test).
fn variant_names<T: DeserializeOwned>() -> BTreeSet<&'static str> {
    struct Probe<'a>(&'a mut Vec<&'static str>);

    impl<'de> serde::Deserializer<'de> for Probe<'_> {
        type Error = serde::de::value::Error;

        fn deserialize_any<V: Visitor<'de>>(self, _visitor: V) -> Result<V::Value, Self::Error> {
            Err(Self::Error::custom("only enums are probed"))
        }

        fn deserialize_enum<V: Visitor<'de>>(
            self,
            _name: &'static str,
            variants: &'static [&'static str],
            _visitor: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.extend_from_slice(variants);
            Err(Self::Error::custom("probed"))
        }

        serde::forward_to_deserialize_any! {
            bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string bytes byte_buf
            option unit unit_struct newtype_struct seq tuple tuple_struct map struct identifier ignored_any
        }
    }

    let mut names = Vec::new();
    let _ = T::deserialize(Probe(&mut names));
    assert!(!names.is_empty(), "{} is not an enum", std::any::type_name::<T>());
    names.into_iter().collect()
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
    assert_all_shown("Request", variant_names::<Request>(), &seen.requests);
    assert_all_shown("ServerMessage", variant_names::<ServerMessage>(), &seen.server_messages);
    assert_all_shown("Response", variant_names::<Response>(), &seen.responses);
    assert_all_shown("Event", variant_names::<Event>(), &seen.events);
    assert_all_shown("StreamStart", variant_names::<StreamStart>(), &seen.stream_starts);
    assert_all_shown("HandshakeReply", variant_names::<HandshakeReply>(), &seen.handshake_replies);
    assert_all_shown("PaneState", variant_names::<PaneState>(), &seen.pane_states);
    assert_all_shown("ResumeRequest", variant_names::<ResumeRequest>(), &seen.resume_requests);
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
    assert!(variant_names::<Request>().contains("list"));
}
