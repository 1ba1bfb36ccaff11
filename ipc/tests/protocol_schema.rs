//! docs/protocol.schema.json is what the wire types make, and it agrees
//! with serde: every tagged example of PROTOCOL.md and every message built
//! here validates, and a message changed in any one place validates exactly
//! when serde decodes it.

use panehost_ipc::schema::{protocol_schema, protocol_schema_text, SCHEMA_PATH};
use panehost_ipc::*;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// The command that writes the committed schema anew.
const REGENERATE: &str = "cargo run -p panehost-ipc --example protocol_schema";

fn repository_file(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

#[test]
fn the_committed_schema_is_the_one_the_types_make() {
    let path = repository_file(SCHEMA_PATH);
    let committed = std::fs::read_to_string(&path).unwrap_or_default();
    assert!(
        committed == protocol_schema_text(),
        "{SCHEMA_PATH} is not what the wire types make (a type, a serde attribute or a doc comment changed); \
         regenerate it:\n  {REGENERATE}"
    );
}

#[test]
fn the_schema_is_a_valid_draft_2020_12_schema() {
    let schema = protocol_schema();
    if let Err(error) = jsonschema::meta::validate(&schema) {
        panic!("the schema does not follow its meta-schema: {error}");
    }
}

/// The four messages that cross the socket, each with its decoder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Hello,
    HandshakeReply,
    RequestFrame,
    ServerMessage,
}

impl Kind {
    const ALL: [Kind; 4] = [Kind::Hello, Kind::HandshakeReply, Kind::RequestFrame, Kind::ServerMessage];

    fn name(self) -> &'static str {
        match self {
            Kind::Hello => "Hello",
            Kind::HandshakeReply => "HandshakeReply",
            Kind::RequestFrame => "RequestFrame",
            Kind::ServerMessage => "ServerMessage",
        }
    }

    /// Whether serde decodes `value` as this kind, the way the host and the
    /// client library read a frame.
    fn decodes(self, value: &Value) -> Result<(), String> {
        fn decode_as<T: DeserializeOwned>(value: &Value) -> Result<(), String> {
            let bytes = serde_json::to_vec(value).expect("a JSON value always serializes");
            decode::<T>(Encoding::Json, &bytes).map(|_| ()).map_err(|error| error.to_string())
        }
        match self {
            Kind::Hello => decode_as::<Hello>(value),
            Kind::HandshakeReply => decode_as::<HandshakeReply>(value),
            Kind::RequestFrame => decode_request(Encoding::Json, &serde_json::to_vec(value).unwrap())
                .map(|_| ())
                .map_err(|error| error.to_string()),
            Kind::ServerMessage => decode_as::<ServerMessage>(value),
        }
    }
}

/// A validator for each kind: the schema's `$defs`, entered at the kind's
/// own definition.
struct Validators(Vec<(Kind, jsonschema::Validator)>);

impl Validators {
    fn new() -> Validators {
        let schema = protocol_schema();
        let validators = Kind::ALL
            .iter()
            .map(|&kind| {
                let entry = json!({
                    "$schema": schema["$schema"],
                    "$ref": format!("#/$defs/{}", kind.name()),
                    "$defs": schema["$defs"],
                });
                let validator = jsonschema::validator_for(&entry)
                    .unwrap_or_else(|error| panic!("the schema of {} does not compile: {error}", kind.name()));
                (kind, validator)
            })
            .collect();
        Validators(validators)
    }

    fn check(&self, kind: Kind, value: &Value) -> Result<(), String> {
        let (_, validator) = self.0.iter().find(|(k, _)| *k == kind).expect("a validator per kind");
        let errors: Vec<String> =
            validator.iter_errors(value).map(|error| format!("{} at {}", error, error.instance_path())).collect();
        if errors.is_empty() {
            Ok(())
        } else {
            Err(errors.join("; "))
        }
    }
}

// --- the examples of PROTOCOL.md ----------------------------------------

/// Every fenced block tagged `json hello`, `json handshake`, `json request`
/// or `json server`, with its line and kind.
fn doc_examples() -> Vec<(usize, Kind, String)> {
    let doc = std::fs::read_to_string(repository_file("docs/PROTOCOL.md")).expect("docs/PROTOCOL.md is readable");
    let mut examples = Vec::new();
    let mut open: Option<(usize, Option<Kind>, Vec<&str>)> = None;
    for (index, line) in doc.lines().enumerate() {
        let trimmed = line.trim_start();
        match &mut open {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    let kind = match info.split_whitespace().collect::<Vec<_>>().join(" ").as_str() {
                        "json hello" => Some(Kind::Hello),
                        "json handshake" => Some(Kind::HandshakeReply),
                        "json request" => Some(Kind::RequestFrame),
                        "json server" => Some(Kind::ServerMessage),
                        _ => None,
                    };
                    open = Some((index + 1, kind, Vec::new()));
                }
            }
            Some((start, kind, lines)) => {
                if trimmed.starts_with("```") && trimmed.trim_start_matches('`').trim().is_empty() {
                    if let Some(kind) = kind {
                        examples.push((*start, *kind, lines.join("\n")));
                    }
                    open = None;
                } else {
                    lines.push(line);
                }
            }
        }
    }
    examples
}

#[test]
fn every_example_of_protocol_md_validates() {
    let validators = Validators::new();
    let examples = doc_examples();
    assert!(examples.len() >= 100, "PROTOCOL.md has only {} tagged examples", examples.len());
    let mut failures = Vec::new();
    for (line, kind, text) in &examples {
        let value: Value = match serde_json::from_str(text) {
            Ok(value) => value,
            Err(error) => {
                failures.push(format!("line {line}: not JSON: {error}"));
                continue;
            }
        };
        if let Err(error) = validators.check(*kind, &value) {
            failures.push(format!("line {line} ({}): {error}", kind.name()));
        }
    }
    assert!(failures.is_empty(), "PROTOCOL.md examples the schema refuses:\n{}", failures.join("\n"));
}

// --- messages built here --------------------------------------------------

fn snapshot() -> ScreenSnapshot {
    ScreenSnapshot {
        offset: 42,
        size: Size { cols: 80, rows: 24 },
        text: "$ ls\nfile".into(),
        formatted: ByteBuf::from(&b"\x1b[H$ ls\r\nfile\xff"[..]),
        cursor: Cursor { row: 1, col: 4, visible: true },
        title: "t".into(),
        alternate_screen: true,
        modes: InputModes { bracketed_paste: true, mouse: false, application_keypad: true, application_cursor: false },
        trimmed: false,
    }
}

fn summary(state: PaneState) -> PaneSummary {
    PaneSummary {
        id: PaneId::from("p1"),
        runtime: "shell".into(),
        generation: 1,
        state,
        pid: 1234,
        size: Size::DEFAULT,
        offset: 99,
        cwd: "/".into(),
        title: String::new(),
        created_at_ms: 1_700_000_000_000,
        activity: "idle".into(),
        restored_by: "started".into(),
        completion: "shell_integration".into(),
        labels: [("owner".to_owned(), "ada".to_owned())].into(),
    }
}

fn exited() -> PaneState {
    PaneState::Exited(ExitStatus { code: 130, signal: Some("SIGINT".into()) })
}

fn receipt() -> Receipt {
    Receipt {
        runtime: "claude".into(),
        passed: true,
        detail: "the answer carried the value".into(),
        path: "/usr/bin/claude".into(),
        version: Some("2.1.197".into()),
        sha256: "cd".repeat(32),
        fingerprint: Some("ef".repeat(32)),
        taken_at_ms: 1_700_000_000_000,
        elapsed_ms: 4_000,
        read_only_enforced: true,
    }
}

fn requests() -> Vec<Request> {
    let pane = PaneId::from("p1");
    vec![
        Request::Start(StartParams {
            runtime: "shell".into(),
            cwd: Some("/tmp".into()),
            size: Some(Size { cols: 100, rows: 30 }),
            command: vec!["sh".into(), "-c".into(), "echo hi".into()],
            model: Some("m".into()),
            resume: Some(ResumeRequest::Reference("abc".into())),
            max_wall_ms: Some(1000),
            permission_profile: Some("read_only".into()),
            accept_weaker_boundary: true,
            require_ready: true,
            rerun_after_host_loss: true,
            labels: [("owner".to_owned(), "ada".to_owned())].into(),
            env: [("TASK".to_owned(), "42".to_owned())].into(),
            allow_refused_version: true,
        }),
        Request::Start(StartParams { resume: Some(ResumeRequest::Latest), ..StartParams::default() }),
        Request::Send(SendParams {
            pane: pane.clone(),
            text: "ls".into(),
            bytes: ByteBuf::from(&[3u8, 0, 255][..]),
            enter: true,
        }),
        Request::Send(SendParams { pane: pane.clone(), bytes: ByteBuf::from("ab"), ..SendParams::default() }),
        Request::Interrupt { pane: pane.clone(), terminate: true },
        Request::Inspect { pane: pane.clone() },
        Request::Events { pane: pane.clone(), from: Some(7) },
        Request::Events { pane: pane.clone(), from: None },
        Request::Reconnect { pane: pane.clone(), generation: 2, offset: 1 << 40 },
        Request::Unsubscribe { subscription: 3 },
        Request::Resize { pane: pane.clone(), size: Size { cols: 2, rows: 1000 } },
        Request::List { labels: [("task".to_owned(), "42".to_owned())].into() },
        Request::Close { pane: pane.clone() },
        Request::Runtimes {},
        Request::Login { runtime: "claude".into(), cwd: None, size: Some(Size::DEFAULT) },
        Request::Ask { pane: pane.clone(), text: "hi".into(), timeout_ms: Some(5) },
        Request::Notify { pane: pane.clone(), token: "t".into(), event: "turn_completed".into(), payload: "{}".into() },
        Request::ProbeRuntime { runtime: "claude".into(), model: Some("m".into()), accept_weaker_boundary: true },
        Request::History { pane: pane.clone(), lines: Some(10) },
        Request::Watch {},
        Request::WaitFor(WaitForParams {
            pane: pane.clone(),
            pattern: "\\$ $".into(),
            target: WaitTarget::Output,
            from: Some(3),
            timeout_ms: Some(100),
        }),
        Request::WaitFor(WaitForParams { pane: pane.clone(), pattern: "x".into(), ..WaitForParams::default() }),
        Request::AttachTerminal { pane, detach_key: 0x1c },
    ]
}

fn responses() -> Vec<Response> {
    let pane = PaneId::from("p1");
    vec![
        Response::Started(summary(PaneState::Running)),
        Response::Sent { pane: pane.clone(), bytes: 3 },
        Response::Interrupted(InterruptReport {
            pane: pane.clone(),
            outcome: "turn_cancelled".into(),
            steps: vec![InterruptStep { action: "keys".into(), detail: "\\x03".into(), at_ms: 0 }],
            sweep: Some(PaneSweep { method: "process_tree".into(), ended: 1, survivors: vec![] }),
        }),
        Response::Inspected(PaneDetail { pane: summary(exited()), screen: snapshot() }),
        Response::Subscribed(Subscription {
            subscription: 1,
            pane: pane.clone(),
            generation: 1,
            start: StreamStart::Replay { from: 5 },
        }),
        Response::Subscribed(Subscription {
            subscription: 2,
            pane: pane.clone(),
            generation: 1,
            start: StreamStart::Snapshot { snapshot: snapshot(), skipped_from: Some(3) },
        }),
        Response::Subscribed(Subscription {
            subscription: 3,
            pane: pane.clone(),
            generation: 2,
            start: StreamStart::GenerationChanged { previous: 1, snapshot: snapshot() },
        }),
        Response::Unsubscribed { subscription: 1 },
        Response::Resized { pane: pane.clone(), size: Size::DEFAULT },
        Response::Panes { panes: vec![summary(PaneState::Running), summary(exited())] },
        Response::Closed {
            pane: pane.clone(),
            status: ExitStatus { code: 0, signal: None },
            sweep: Some(PaneSweep { method: "cgroup".into(), ended: 0, survivors: vec![4242] }),
        },
        Response::Runtimes {
            runtimes: vec![RuntimeInfo {
                id: "claude".into(),
                display_name: "Claude Code".into(),
                supported: true,
                available: true,
                path: Some("/usr/bin/claude".into()),
                version: Some("2.1.197".into()),
                unavailable_reason: None,
                resume_modes: vec!["REFERENCE".into()],
                limitations: vec![limitation::COMPLETION_UNOBSERVED.into()],
                sha256: Some("ab".repeat(32)),
                version_floor: Some("2.0.0".into()),
                floor_status: Some("at_or_above".into()),
                readiness: "ready".into(),
                readiness_gate: None,
                readiness_reason: None,
                sign_in: "signed_in".into(),
                sign_in_detail: Some("a credentials file".into()),
                receipt: Some(receipt()),
                receipt_valid: true,
                completion: "hook".into(),
                login: "in_terminal".into(),
                evidence: "captured_help".into(),
                permission_profiles: vec!["read_only".into()],
                default_permission_profile: Some("workspace_write".into()),
                version_refused: Some(VersionRefusal { from: "1.52.0".into(), before: None, reason: "retired".into() }),
                package: Some("pypi kimi-cli 1.52.0".into()),
                fingerprint: Some("01".repeat(32)),
            }],
        },
        Response::Answered(TurnReport {
            source: "shell_integration".into(),
            started_offset: 1,
            completed_offset: 9,
            duration_ms: 3,
            added_text: "done".into(),
            usage: Usage {
                kind: "measured".into(),
                input_tokens: Some(3),
                output_tokens: Some(4),
                cost_micro_usd: None,
            },
            exit_code: Some(2),
        }),
        Response::Notified {},
        Response::Receipt(receipt()),
        Response::History(PaneHistory { pane: pane.clone(), from: 0, to: 9, text: "a\nb".into(), truncated: false }),
        Response::Watching { subscription: 4, panes: vec![summary(PaneState::Running)] },
        Response::Waited(WaitMatch { pane: pane.clone(), target: WaitTarget::Screen, offset: 9, matched: "$ ".into() }),
        Response::TerminalReleased(TerminalRelease { pane: pane.clone(), reason: "detached".into(), exit: None }),
        Response::TerminalReleased(TerminalRelease {
            pane,
            reason: "exited".into(),
            exit: Some(ExitStatus { code: 3, signal: None }),
        }),
    ]
}

fn events() -> Vec<Event> {
    let pane = PaneId::from("p1");
    vec![
        Event::Output { offset: 0, data: ByteBuf::from(&b"\x1b[31mhi\xe2\x82"[..]) },
        Event::Output { offset: 8, data: ByteBuf::from("a") },
        Event::Resync { skipped_from: 1, snapshot: snapshot() },
        Event::Resized { size: Size { cols: 1000, rows: 250 } },
        Event::Exited { status: ExitStatus { code: 1, signal: None }, offset: 10 },
        Event::Ended { reason: "exited".into() },
        Event::TurnStarted { offset: 1, source: "input".into() },
        Event::TurnCompleted { offset: 2, source: "heuristic".into(), usage: Usage::unavailable(), exit_code: None },
        Event::TurnCompleted {
            offset: 5,
            source: "shell_integration".into(),
            usage: Usage::unavailable(),
            exit_code: Some(130),
        },
        Event::AwaitingInput { offset: 3, source: "hook".into(), detail: "waiting".into() },
        Event::ApprovalRequested { offset: 4, source: "hook".into(), detail: "Bash".into() },
        Event::PaneStarted { pane: summary(PaneState::Running) },
        Event::PaneActivity { pane: pane.clone(), activity: "busy".into() },
        Event::PaneExited { pane: pane.clone(), status: ExitStatus { code: 143, signal: Some("SIGTERM".into()) } },
        Event::PaneEnded { pane: pane.clone(), reason: "closed".into() },
        Event::PaneList { panes: vec![summary(exited())], missed: 12 },
        Event::PaneChanged { pane, size: Size { cols: 200, rows: 50 }, title: "build: tests".into() },
    ]
}

/// Every message built here, serialized by serde, with its kind.
fn messages() -> Vec<(Kind, Value)> {
    let mut messages: Vec<(Kind, Value)> = vec![
        (Kind::Hello, to_value(&Hello::new(Encoding::Json, "schema test"))),
        (Kind::Hello, to_value(&Hello::new(Encoding::Bincode, ""))),
        (
            Kind::HandshakeReply,
            to_value(&HandshakeReply::Welcome(Welcome {
                protocol: PROTOCOL_VERSION,
                revision: PROTOCOL_REVISION,
                host: "panehost 0.1.0".into(),
                encoding: Encoding::Json,
            })),
        ),
        (
            Kind::HandshakeReply,
            to_value(&HandshakeReply::Refused {
                code: "PROTOCOL_MISMATCH".into(),
                message: "this host speaks protocol 1".into(),
                protocol: PROTOCOL_VERSION,
            }),
        ),
    ];
    for (id, request) in requests().into_iter().enumerate() {
        messages.push((Kind::RequestFrame, to_value(&RequestFrame { id: id as u64 + u64::from(u32::MAX), request })));
    }
    for (id, body) in responses().into_iter().enumerate() {
        messages.push((Kind::ServerMessage, to_value(&ServerMessage::Response { id: id as u64, body })));
    }
    for event in events() {
        messages.push((Kind::ServerMessage, to_value(&ServerMessage::Event { subscription: 9, event })));
    }
    messages.push((
        Kind::ServerMessage,
        to_value(&ServerMessage::Error { id: Some(4), error: ErrorBody::new(ErrorCode::UnknownPane, "no pane p9") }),
    ));
    messages.push((
        Kind::ServerMessage,
        to_value(&ServerMessage::Error {
            id: None,
            error: ErrorBody::unsupported(limitation::NATIVE_RESUME_UNSUPPORTED, "x"),
        }),
    ));
    messages
}

/// A message as the JSON encoding writes it.
fn to_value<T: serde::Serialize>(message: &T) -> Value {
    let bytes = encode(Encoding::Json, message).expect("every message encodes");
    serde_json::from_slice(&bytes).expect("the JSON encoding is JSON")
}

/// The variant names a `oneOf` definition of the schema lists: the string
/// of a unit variant, the one key of any other.
fn schema_variants(definition: &str) -> BTreeSet<String> {
    let schema = protocol_schema();
    let variants = schema["$defs"][definition]["oneOf"].as_array().unwrap_or_else(|| panic!("{definition} is no enum"));
    variants
        .iter()
        .map(|variant| match variant["const"].as_str() {
            Some(name) => name.to_owned(),
            None => variant["required"][0].as_str().expect("an object variant names its key").to_owned(),
        })
        .collect()
}

/// The one key of an externally tagged object.
fn tag(value: &Value) -> String {
    let object = value.as_object().unwrap_or_else(|| panic!("not an object: {value}"));
    assert_eq!(object.len(), 1, "not externally tagged: {value}");
    object.keys().next().unwrap().clone()
}

#[test]
fn the_messages_built_here_show_every_variant_and_validate() {
    let validators = Validators::new();
    let messages = messages();
    let (mut requests, mut bodies, mut events, mut starts, mut server, mut replies) =
        (BTreeSet::new(), BTreeSet::new(), BTreeSet::new(), BTreeSet::new(), BTreeSet::new(), BTreeSet::new());
    for (kind, value) in &messages {
        if let Err(error) = validators.check(*kind, value) {
            panic!("serde wrote a {} the schema refuses: {error}\n{value:#}", kind.name());
        }
        match kind {
            Kind::Hello => {}
            Kind::HandshakeReply => {
                replies.insert(tag(value));
            }
            Kind::RequestFrame => {
                requests.insert(tag(&value["request"]));
            }
            Kind::ServerMessage => {
                server.insert(tag(value));
                if let Some(body) = value.pointer("/response/body") {
                    bodies.insert(tag(body));
                    if let Some(start) = body.pointer("/subscribed/start") {
                        starts.insert(tag(start));
                    }
                }
                if let Some(event) = value.pointer("/event/event") {
                    events.insert(tag(event));
                }
            }
        }
    }
    for (definition, seen) in [
        ("Request", requests),
        ("Response", bodies),
        ("Event", events),
        ("StreamStart", starts),
        ("ServerMessage", server),
        ("HandshakeReply", replies),
    ] {
        assert_eq!(seen, schema_variants(definition), "the variants of {definition} built here, and the schema's");
    }
}

// --- the schema and serde agree ------------------------------------------

/// What a message becomes with one thing changed: every key of every
/// object left out, or its value replaced with a value of another type;
/// and an unknown key added to every object.
fn mutants(value: &Value) -> Vec<(String, Value)> {
    let replacements = [
        json!(null),
        json!(true),
        json!(""),
        json!("x"),
        json!("aGk"),
        json!("aGl="),
        json!(-1),
        json!(7),
        json!(70000),
        json!({}),
        json!({"cols": 2, "rows": 2}),
    ];
    let mut found = Vec::new();
    let mut paths = Vec::new();
    collect_paths(value, String::new(), &mut paths);
    for (pointer, is_object) in paths {
        if is_object {
            let mut added = value.clone();
            added.pointer_mut(&pointer).unwrap().as_object_mut().unwrap().insert("zz_unknown".into(), json!(1));
            found.push((format!("{pointer}: an unknown key added"), added));
        }
        let Some((parent, key)) = pointer.rsplit_once('/') else { continue };
        let Some(object) = value.pointer(parent).and_then(Value::as_object) else { continue };
        let mut removed = value.clone();
        removed.pointer_mut(parent).unwrap().as_object_mut().unwrap().remove(key);
        found.push((format!("{pointer}: left out"), removed));
        for replacement in &replacements {
            if object.get(key) == Some(replacement) {
                continue;
            }
            let mut replaced = value.clone();
            *replaced.pointer_mut(&pointer).unwrap() = replacement.clone();
            found.push((format!("{pointer}: {replacement}"), replaced));
        }
    }
    found
}

/// The JSON pointer of every value inside `value` (not the root) that
/// stands under an object key, and whether it is an object itself; the
/// root's pointer too when it is an object.
fn collect_paths(value: &Value, pointer: String, paths: &mut Vec<(String, bool)>) {
    match value {
        Value::Object(object) => {
            paths.push((pointer.clone(), true));
            for (key, inner) in object {
                let inner_pointer = format!("{pointer}/{}", key.replace('~', "~0").replace('/', "~1"));
                if !inner.is_object() {
                    paths.push((inner_pointer.clone(), false));
                }
                collect_paths(inner, inner_pointer, paths);
            }
        }
        Value::Array(items) => {
            for (index, inner) in items.iter().enumerate() {
                collect_paths(inner, format!("{pointer}/{index}"), paths);
            }
        }
        _ => {}
    }
}

#[test]
fn a_message_changed_anywhere_validates_exactly_when_serde_decodes_it() {
    let validators = Validators::new();
    let mut disagreements = Vec::new();
    let mut tried = 0;
    for (kind, message) in messages() {
        for (change, mutant) in mutants(&message) {
            tried += 1;
            let decoded = kind.decodes(&mutant);
            let valid = validators.check(kind, &mutant);
            if decoded.is_ok() != valid.is_ok() {
                disagreements.push(format!(
                    "{} {change}: serde {}, schema {}",
                    kind.name(),
                    decoded.map_or_else(|error| format!("refuses it ({error})"), |()| "decodes it".to_owned()),
                    valid.map_or_else(|error| format!("refuses it ({error})"), |()| "accepts it".to_owned()),
                ));
            }
        }
    }
    assert!(tried > 5_000, "only {tried} changed messages were tried");
    assert!(
        disagreements.is_empty(),
        "{} of {tried} changed messages: the schema and serde disagree:\n{}",
        disagreements.len(),
        disagreements.iter().take(40).cloned().collect::<Vec<_>>().join("\n")
    );
}

#[test]
fn the_names_the_types_give_are_their_serde_tags() {
    for request in requests() {
        assert_eq!(tag(&to_value(&request)), request.name());
    }
    for response in responses() {
        assert_eq!(tag(&to_value(&response)), response.name());
    }
    for event in events() {
        assert_eq!(tag(&to_value(&event)), event.name());
    }
}
