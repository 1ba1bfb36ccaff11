//! docs/PROTOCOL.md agrees with a real host: each `json hello` example is
//! answered with the `json handshake` shown after it, each bincode request
//! payload shown in hex is read by the host as the request beside it, the
//! documented answers to malformed frames are the host's words, and the
//! Python client of section 12 runs as written.

mod support;

use panehost_ipc::{decode, Encoding, HandshakeReply, RequestFrame, ServerMessage};
use std::os::unix::net::UnixStream;
use support::command::run_to_end;
use support::*;

const DOC_PATH: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/PROTOCOL.md");

/// One fenced code block: the line of its opening fence, its info string
/// (whitespace-normalised) and its text.
struct Block {
    line: usize,
    info: String,
    text: String,
}

fn blocks() -> Vec<Block> {
    let doc = std::fs::read_to_string(DOC_PATH).expect("docs/PROTOCOL.md is readable");
    let mut blocks = Vec::new();
    let mut open: Option<(usize, String, Vec<&str>)> = None;
    for (index, line) in doc.lines().enumerate() {
        let trimmed = line.trim_start();
        match &mut open {
            None => {
                if let Some(info) = trimmed.strip_prefix("```") {
                    open = Some((index + 1, info.split_whitespace().collect::<Vec<_>>().join(" "), Vec::new()));
                }
            }
            Some((start, info, lines)) => {
                if trimmed.starts_with("```") && trimmed.trim_start_matches('`').trim().is_empty() {
                    blocks.push(Block { line: *start, info: std::mem::take(info), text: lines.join("\n") });
                    open = None;
                } else {
                    lines.push(line);
                }
            }
        }
    }
    blocks
}

/// The bytes of a `hex` block (see PROTOCOL.md section 2): comments after
/// `#`, a dump's offset and text column left out.
fn hex_bytes(block: &Block) -> Vec<u8> {
    let mut bytes = Vec::new();
    for line in block.text.lines() {
        let line = line.split('#').next().unwrap_or("").split('|').next().unwrap_or("");
        let mut tokens = line.split_whitespace().peekable();
        if tokens.peek().is_some_and(|first| first.len() == 8) {
            tokens.next();
        }
        bytes.extend(tokens.map(|token| u8::from_str_radix(token, 16).expect("a hex byte")));
    }
    bytes
}

fn open_raw(host: &TestHost) -> UnixStream {
    let stream = UnixStream::connect(&host.socket).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    stream
}

fn handshake(stream: &mut UnixStream, hello: &[u8]) -> HandshakeReply {
    write_frame(stream, hello);
    serde_json::from_slice(&read_frame(stream).expect("a handshake reply")).expect("a handshake reply is JSON")
}

#[test]
fn every_hello_example_is_answered_as_shown() {
    let host = TestHost::start();
    let blocks = blocks();
    let mut checked = 0;
    for pair in blocks.windows(2) {
        let [hello, shown] = pair else { unreachable!() };
        if hello.info != "json hello" {
            continue;
        }
        assert_eq!(shown.info, "json handshake", "PROTOCOL.md line {}: a hello is followed by its reply", hello.line);
        let shown: HandshakeReply = serde_json::from_str(&shown.text).unwrap();
        let mut stream = open_raw(&host);
        let mut reply = handshake(&mut stream, hello.text.as_bytes());
        // The host's name and version are for people; the rest is the contract.
        if let (HandshakeReply::Welcome(got), HandshakeReply::Welcome(expected)) = (&mut reply, &shown) {
            got.host.clone_from(&expected.host);
        }
        assert_eq!(reply, shown, "PROTOCOL.md line {}: the host's reply to {}", hello.line, hello.text);
        checked += 1;
    }
    assert!(checked >= 4, "only {checked} hello examples");
}

/// Reads server messages until the one answering `id` (events of a `watch`
/// may come first).
fn answer_to(stream: &mut UnixStream, encoding: Encoding, id: u64) -> ServerMessage {
    loop {
        let frame = read_frame(stream).expect("an answer before the connection ends");
        let message: ServerMessage = decode(encoding, &frame).expect("a server message");
        match &message {
            ServerMessage::Response { id: answered, .. } | ServerMessage::Error { id: Some(answered), .. }
                if *answered == id =>
            {
                return message
            }
            ServerMessage::Error { id: None, error } => panic!("a connection error: {error}"),
            _ => {}
        }
    }
}

#[test]
fn every_hex_request_is_read_by_the_host_as_the_json_beside_it() {
    let host = TestHost::start();
    let blocks = blocks();
    let mut checked = 0;
    for pair in blocks.windows(2) {
        let [hex, json] = pair else { unreachable!() };
        let words: Vec<&str> = hex.info.split(' ').collect();
        let (frame, encoding) = match words.as_slice() {
            ["hex", "frame", encoding, "request"] => (true, *encoding),
            ["hex", encoding, "request"] => (false, *encoding),
            _ => continue,
        };
        let encoding = if encoding == "json" { Encoding::Json } else { Encoding::Bincode };
        let mut bytes = hex_bytes(hex);
        if frame {
            bytes.drain(..4);
        }
        let shown: RequestFrame = serde_json::from_str(&json.text).unwrap();
        let mut stream = open_raw(&host);
        let hello = panehost_ipc::Hello::new(encoding, "protocol doc");
        let reply = handshake(&mut stream, &serde_json::to_vec(&hello).unwrap());
        assert!(matches!(reply, HandshakeReply::Welcome(_)), "{reply:?}");
        write_frame(&mut stream, &bytes);
        let line = hex.line;
        match answer_to(&mut stream, encoding, shown.id) {
            ServerMessage::Response { body, .. } => {
                assert_eq!(body.name(), shown.request.answer(), "PROTOCOL.md line {line}: the answer");
            }
            ServerMessage::Error { error, .. } => {
                // Read as the request it is: only what it names is missing
                // on a new host (the pane p1, an installed CLI).
                assert!(
                    ["UNKNOWN_PANE", "RUNTIME_NOT_AVAILABLE", "UNKNOWN_RUNTIME", "LOGIN_NOT_REQUIRED"]
                        .contains(&error.code.as_str()),
                    "PROTOCOL.md line {line}: the host did not read it as {}: {error}",
                    json.text
                );
            }
            ServerMessage::Event { .. } => unreachable!(),
        }
        checked += 1;
    }
    assert!(checked >= 7, "only {checked} hex requests");
}

/// The `json server` block that contains `needle`.
fn documented(needle: &str) -> ServerMessage {
    let blocks = blocks();
    let found: Vec<&Block> =
        blocks.iter().filter(|block| block.info == "json server" && block.text.contains(needle)).collect();
    assert_eq!(found.len(), 1, "PROTOCOL.md has {} server examples with {needle}", found.len());
    serde_json::from_str(&found[0].text).unwrap()
}

#[test]
fn the_documented_answers_to_malformed_frames_are_the_hosts() {
    let host = TestHost::start();
    let mut stream = open_raw(&host);
    let hello = panehost_ipc::Hello::new(Encoding::Json, "protocol doc");
    assert!(matches!(handshake(&mut stream, &serde_json::to_vec(&hello).unwrap()), HandshakeReply::Welcome(_)));
    for (frame, needle) in
        [(&br#"{"id":41,"request":{"teleport":{}}}"#[..], "`teleport`"), (&b"{x"[..], "key must be a string")]
    {
        write_frame(&mut stream, frame);
        let got: ServerMessage = decode(Encoding::Json, &read_frame(&mut stream).unwrap()).unwrap();
        assert_eq!(got, documented(needle), "the answer to {}", String::from_utf8_lossy(frame));
    }
}

#[test]
fn the_python_client_runs_as_written() {
    let blocks = blocks();
    let python: Vec<&Block> = blocks.iter().filter(|block| block.info == "python").collect();
    assert_eq!(python.len(), 1, "PROTOCOL.md has one Python client");
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &["sleep", "60"]));
    let script = host.dir.path().join("client.py");
    std::fs::write(&script, &python[0].text).unwrap();

    let mut command = std::process::Command::new("python3");
    command.arg(&script).env("PANEHOST_SOCKET", &host.socket);
    let outcome = run_to_end(command, None);
    assert_eq!(outcome.code(), Some(0), "the Python client failed: {outcome:?}");
    let expected = format!("{} shell running 80x24", pane.id);
    assert!(outcome.stdout.lines().any(|line| line == expected), "{outcome:?}");

    // Its checks of section 1 refuse a socket directory others may enter.
    let open_dir = host.dir.path().join("open");
    std::fs::create_dir(&open_dir).unwrap();
    std::os::unix::fs::symlink(&host.socket, open_dir.join("host.sock")).unwrap();
    std::fs::set_permissions(&open_dir, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let mut command = std::process::Command::new("python3");
    command.arg(&script).env("PANEHOST_SOCKET", open_dir.join("host.sock"));
    let outcome = run_to_end(command, None);
    assert_ne!(outcome.code(), Some(0), "{outcome:?}");
    assert!(outcome.stderr.contains("lets others in"), "{outcome:?}");
    conn.ok(panehost_ipc::Request::Close { pane: pane.id });
}
