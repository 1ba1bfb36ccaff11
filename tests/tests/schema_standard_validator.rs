//! A standard JSON Schema validator, with no checker of its own, accepts
//! what a real host sends: Python's `jsonschema` (draft 2020-12, its
//! format checker on, so the `uint*` formats are unknown formats it
//! ignores, and the ranges beside them are what it checks) validates
//! every frame of a session against docs/protocol.schema.json. It also
//! refuses an integer beyond its range, which only `maximum` says.

mod support;

use serde_json::{json, Value};
use std::os::unix::net::UnixStream;
use support::command::run_to_end;
use support::*;

const SCHEMA: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/protocol.schema.json");

/// Validates each `[definition, message]` of the JSON file argv[2] against
/// `$defs/<definition>` of the schema argv[1]; prints the count, or the
/// first errors and exits 1.
const VALIDATE: &str = r##"
import json, sys
from jsonschema import Draft202012Validator
schema = json.load(open(sys.argv[1]))
Draft202012Validator.check_schema(schema)
messages = json.load(open(sys.argv[2]))
failures = []
for definition, message in messages:
    validator = Draft202012Validator({"$ref": "#/$defs/" + definition, "$defs": schema["$defs"]},
                                     format_checker=Draft202012Validator.FORMAT_CHECKER)
    for error in validator.iter_errors(message):
        failures.append(f"{definition}: {error.message[:300]}")
if failures:
    print("\n".join(failures[:20]))
    sys.exit(1)
print(len(messages))
"##;

/// Sends a request frame and returns every frame the host sends until the
/// one answering it.
fn exchange(stream: &mut UnixStream, request: Value, seen: &mut Vec<Value>) {
    let id = request["id"].clone();
    write_frame(stream, request.to_string().as_bytes());
    loop {
        let frame = read_frame(stream).expect("an answer");
        let message: Value = serde_json::from_slice(&frame).expect("the host writes JSON");
        let answers = message.pointer("/response/id") == Some(&id) || message.pointer("/error/id") == Some(&id);
        seen.push(json!(["ServerMessage", message]));
        if answers {
            return;
        }
    }
}

/// Whether Python's `jsonschema` is there. Without it the test is skipped
/// with a note, unless `PANEHOST_REQUIRE_JSONSCHEMA=1` (CI installs it and
/// sets that): then it fails.
fn jsonschema_available() -> bool {
    let mut command = std::process::Command::new("python3");
    command.args(["-c", "import jsonschema"]);
    if run_to_end(command, None).code() == Some(0) {
        return true;
    }
    assert!(
        std::env::var("PANEHOST_REQUIRE_JSONSCHEMA").as_deref() != Ok("1"),
        "this test needs Python's jsonschema (python3 -m pip install jsonschema)"
    );
    eprintln!("skipped: Python's jsonschema is not installed (python3 -m pip install jsonschema)");
    false
}

/// Runs the validator over `messages`; its output and whether it passed.
fn validate(host: &TestHost, messages: &[Value]) -> (bool, String) {
    let dir = host.dir.path();
    let script = dir.join("validate.py");
    let file = dir.join("messages.json");
    std::fs::write(&script, VALIDATE).unwrap();
    std::fs::write(&file, serde_json::to_vec(messages).unwrap()).unwrap();
    let mut command = std::process::Command::new("python3");
    command.arg(&script).arg(SCHEMA).arg(&file);
    let outcome = run_to_end(command, None);
    assert!(
        !outcome.stderr.contains("No module named 'jsonschema'"),
        "this test needs Python's jsonschema (python3 -m pip install jsonschema)"
    );
    (outcome.code() == Some(0), format!("{}{}", outcome.stdout, outcome.stderr))
}

#[test]
fn pythons_jsonschema_validates_a_real_session_without_a_checker_of_its_own() {
    if !jsonschema_available() {
        return;
    }
    let host = TestHost::start();
    let mut stream = UnixStream::connect(&host.socket).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let mut seen = Vec::new();
    let hello = json!({"protocol": 1, "revision": panehost_ipc::PROTOCOL_REVISION, "encoding": "json", "client": "schema test"});
    seen.push(json!(["Hello", hello]));
    write_frame(&mut stream, hello.to_string().as_bytes());
    let welcome: Value = serde_json::from_slice(&read_frame(&mut stream).unwrap()).unwrap();
    seen.push(json!(["HandshakeReply", welcome]));

    let requests = [
        json!({"id": 1, "request": {"runtimes": {}}}),
        json!({"id": 2, "request": {"start": {"runtime": "shell", "command": ["sh", "-c", "echo schema-ok; sleep 30"], "labels": {"task": "7"}}}}),
        json!({"id": 3, "request": {"list": {"labels": {"task": "7"}}}}),
        json!({"id": 4, "request": {"watch": {}}}),
    ];
    for request in requests {
        seen.push(json!(["RequestFrame", request]));
        exchange(&mut stream, request, &mut seen);
    }
    let pane = seen
        .iter()
        .find_map(|entry| entry[1].pointer("/response/body/started/id").cloned())
        .expect("the shell started");
    let later = [
        json!({"id": 5, "request": {"wait_for": {"pane": pane, "pattern": "schema-ok", "target": "output", "from": 0}}}),
        json!({"id": 6, "request": {"events": {"pane": pane, "from": 0}}}),
        json!({"id": 7, "request": {"inspect": {"pane": pane}}}),
        json!({"id": 8, "request": {"history": {"pane": pane}}}),
        json!({"id": 9, "request": {"interrupt": {"pane": pane, "terminate": true}}}),
        json!({"id": 10, "request": {"close": {"pane": pane}}}),
        json!({"id": 11, "request": {"inspect": {"pane": "p-none"}}}),
        json!({"id": 12, "request": {"teleport": {}}}),
    ];
    for request in later {
        // The unknown operation is what the host answers MALFORMED_REQUEST;
        // only its answer is a message of the protocol.
        if request.pointer("/request/teleport").is_none() {
            seen.push(json!(["RequestFrame", request]));
        }
        exchange(&mut stream, request, &mut seen);
    }
    let kinds: Vec<String> = seen
        .iter()
        .filter_map(|entry| {
            let message = &entry[1];
            message
                .pointer("/response/body")
                .or(message.pointer("/event/event"))
                .and_then(|inner| inner.as_object().and_then(|object| object.keys().next().cloned()))
        })
        .collect();
    for kind in
        ["runtimes", "started", "panes", "watching", "waited", "subscribed", "inspected", "interrupted", "closed"]
    {
        assert!(kinds.iter().any(|seen| seen == kind), "the session has no {kind}: {kinds:?}");
    }
    let (passed, output) = validate(&host, &seen);
    assert!(passed, "Python's jsonschema refuses what the host sent:\n{output}");
    assert_eq!(output.trim(), seen.len().to_string());

    // Beyond u32: only the schema's `maximum` refuses it (the format is unknown to the validator).
    let too_big = json!(["ServerMessage", {"response": {"id": 1, "body": {"closed": {"pane": "p1", "status": {"code": 4_294_967_296_u64, "signal": null}, "sweep": null}}}}]);
    let (passed, output) = validate(&host, &[too_big]);
    assert!(!passed, "a u32 beyond its range was accepted: {output}");
    assert!(output.contains("4294967296"), "{output}");
}
