//! What a host says is shown, not obeyed: a host that answers every request
//! with terminal escapes in every string (the clipboard, `ESC ] 52`; a
//! title, `ESC ] 0`; a clear, `ESC [ 2J`; CSI as one C1 character, U+009B)
//! gets them printed escaped by every `panehost` subcommand that prints
//! what it said, in text and in `--json`, on standard output and in error
//! messages.
//!
//! The host here is this test: it serves the socket itself and speaks the
//! protocol through the ipc crate's types, so a host reached with
//! `--remote`, or any program on the socket, is what it stands for.

mod support;

use panehost_ipc::{
    decode, decode_request, encode, ByteBuf, Cursor, Encoding, ErrorBody, Event, ExitStatus, HandshakeReply, Hello,
    InputModes, InterruptReport, InterruptStep, PaneDetail, PaneHistory, PaneId, PaneState, PaneSummary, PaneSweep,
    Receipt, Request, Response, RuntimeInfo, ScreenSnapshot, ServerMessage, Size, StreamStart, Subscription,
    TurnReport, Usage, WaitMatch, WaitTarget, Welcome, PROTOCOL_REVISION, PROTOCOL_VERSION,
};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use support::command::{run_to_end, Outcome};
use support::*;

/// What every string the host sends ends with.
const ESCAPES: &str = "\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b]0;owned\x07\u{9b}31m\u{7f}";

/// The escapes as the text output shows them.
const SHOWN_IN_TEXT: &str = "\\u{1b}]52;c;cHduZWQ=\\u{7}\\u{1b}[2J\\u{1b}]0;owned\\u{7}\\u{9b}31m\\u{7f}";

/// The escapes as `--json` shows them.
const SHOWN_IN_JSON: &str = "\\u001b]52;c;cHduZWQ=\\u0007\\u001b[2J\\u001b]0;owned\\u0007\\u009b31m\\u007f";

/// The pane whose every request is refused, with a hostile error.
const REFUSED_PANE: &str = "refused";

/// A string the host sends: `field`, then the escapes.
fn hostile(field: &str) -> String {
    format!("{field}{ESCAPES}")
}

/// A sweep whose method is hostile.
fn sweep() -> PaneSweep {
    PaneSweep { method: hostile("method"), ended: 1, survivors: vec![7] }
}

/// A host of the test's own on a socket in a private directory; every
/// connection is served on a thread of its own.
struct HostileHost {
    dir: tempfile::TempDir,
    socket: PathBuf,
    stopping: Arc<AtomicBool>,
    acceptor: Option<JoinHandle<()>>,
}

impl HostileHost {
    fn start() -> HostileHost {
        let dir = tempfile::tempdir().unwrap();
        let run = dir.path().join("run");
        std::fs::create_dir(&run).unwrap();
        std::fs::set_permissions(&run, std::fs::Permissions::from_mode(0o700)).unwrap();
        let socket = run.join("host.sock");
        let listener = UnixListener::bind(&socket).unwrap();
        let stopping = Arc::new(AtomicBool::new(false));
        let acceptor = {
            let stopping = stopping.clone();
            std::thread::spawn(move || {
                for stream in listener.incoming() {
                    if stopping.load(Ordering::SeqCst) {
                        return;
                    }
                    let Ok(stream) = stream else { continue };
                    std::thread::spawn(move || serve(stream));
                }
            })
        };
        HostileHost { dir, socket, stopping, acceptor: Some(acceptor) }
    }

    /// `panehost --socket S --state-dir D ARGS...`, with an environment of
    /// its own.
    fn command(&self, args: &[&str]) -> Command {
        let mut command = Command::new(panehost_bin());
        command
            .arg("--socket")
            .arg(&self.socket)
            .arg("--state-dir")
            .arg(self.dir.path().join("state"))
            .args(args)
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", self.dir.path())
            .env("LANG", "C.UTF-8");
        command
    }

    fn run(&self, args: &[&str]) -> Outcome {
        run_to_end(self.command(args), None)
    }
}

impl Drop for HostileHost {
    fn drop(&mut self) {
        self.stopping.store(true, Ordering::SeqCst);
        // Wakes the accept loop, which then sees it is to stop.
        let _ = UnixStream::connect(&self.socket);
        if let Some(acceptor) = self.acceptor.take() {
            let _ = acceptor.join();
        }
    }
}

/// One connection: the handshake, then an answer for every request, until
/// the client goes.
fn serve(mut stream: UnixStream) {
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let Some(hello) = read_frame(&mut stream) else { return };
    let hello: Hello = serde_json::from_slice(&hello).unwrap();
    let welcome = HandshakeReply::Welcome(Welcome {
        protocol: PROTOCOL_VERSION,
        revision: PROTOCOL_REVISION,
        host: hostile("host"),
        encoding: hello.encoding,
    });
    write_frame(&mut stream, &serde_json::to_vec(&welcome).unwrap());
    let encoding = hello.encoding;
    while let Some(frame) = read_frame(&mut stream) {
        let request = decode_request(encoding, &frame).unwrap_or_else(|error| panic!("{error:?}"));
        for message in answer(request.id, request.request) {
            write_frame(&mut stream, &encode(encoding, &message).unwrap());
        }
    }
}

/// The messages that answer one request: an answer (an error for the
/// refused pane) and, for a subscription, its events to its end.
fn answer(id: u64, request: Request) -> Vec<ServerMessage> {
    let response = |body| ServerMessage::Response { id, body };
    let event = |event| ServerMessage::Event { subscription: 1, event };
    if names_the_refused_pane(&request) {
        let error =
            ErrorBody { code: hostile("CODE"), message: hostile("message"), limitation: Some(hostile("limit")) };
        return vec![ServerMessage::Error { id: Some(id), error }];
    }
    match request {
        Request::Start(_) | Request::Login { .. } => vec![response(Response::Started(summary()))],
        Request::List { .. } => vec![response(Response::Panes { panes: vec![summary()] })],
        Request::Inspect { .. } => {
            vec![response(Response::Inspected(PaneDetail { pane: summary(), screen: snapshot() }))]
        }
        Request::History { .. } => vec![response(Response::History(PaneHistory {
            pane: PaneId(hostile("id")),
            from: 0,
            to: 10,
            text: format!("{}\n{}\n", hostile("history-1"), hostile("history-2")),
            truncated: false,
        }))],
        Request::Runtimes {} => vec![response(Response::Runtimes { runtimes: vec![runtime()] })],
        Request::ProbeRuntime { .. } => vec![response(Response::Receipt(receipt()))],
        Request::Ask { .. } => vec![response(Response::Answered(TurnReport {
            source: hostile("source"),
            started_offset: 0,
            completed_offset: 10,
            duration_ms: 5,
            added_text: format!("{}\n{}", hostile("added-1"), hostile("added-2")),
            usage: Usage { kind: hostile("usage"), ..Usage::default() },
            exit_code: Some(0),
        }))],
        Request::WaitFor(_) => vec![response(Response::Waited(WaitMatch {
            pane: PaneId(hostile("id")),
            target: WaitTarget::Screen,
            offset: 10,
            matched: format!("{}\n{}", hostile("matched-1"), hostile("matched-2")),
        }))],
        Request::Interrupt { .. } => vec![response(Response::Interrupted(InterruptReport {
            pane: PaneId(hostile("id")),
            outcome: hostile("outcome"),
            steps: vec![InterruptStep { action: hostile("action"), detail: hostile("detail"), at_ms: 1 }],
            sweep: Some(sweep()),
        }))],
        Request::Close { .. } => {
            vec![response(Response::Closed { pane: PaneId(hostile("id")), status: signalled(), sweep: Some(sweep()) })]
        }
        Request::Watch {} => vec![
            response(Response::Watching { subscription: 1, panes: vec![summary()] }),
            event(Event::PaneStarted { pane: summary() }),
            event(Event::PaneActivity { pane: PaneId(hostile("id")), activity: hostile("activity") }),
            event(Event::PaneExited { pane: PaneId(hostile("id")), status: signalled() }),
            event(Event::PaneList { panes: vec![summary()], missed: 3 }),
            event(Event::PaneEnded { pane: PaneId(hostile("id")), reason: hostile("pane-reason") }),
            event(Event::Ended { reason: hostile("watch-reason") }),
        ],
        Request::Events { pane, .. } => vec![
            response(Response::Subscribed(Subscription {
                subscription: 1,
                pane,
                generation: 1,
                start: StreamStart::Snapshot { snapshot: snapshot(), skipped_from: None },
            })),
            event(Event::TurnStarted { offset: 0, source: hostile("source") }),
            event(Event::AwaitingInput { offset: 0, source: hostile("source"), detail: hostile("detail") }),
            event(Event::Exited { status: signalled(), offset: 0 }),
            event(Event::Ended { reason: hostile("reason") }),
        ],
        other => {
            let message = format!("this host answers no {other:?}");
            vec![ServerMessage::Error {
                id: Some(id),
                error: ErrorBody { code: hostile("CODE"), message, limitation: None },
            }]
        }
    }
}

fn names_the_refused_pane(request: &Request) -> bool {
    let pane = match request {
        Request::Send(params) => &params.pane,
        Request::Inspect { pane }
        | Request::Resize { pane, .. }
        | Request::Ask { pane, .. }
        | Request::Close { pane }
        | Request::History { pane, .. }
        | Request::Interrupt { pane, .. }
        | Request::Notify { pane, .. } => pane,
        _ => return false,
    };
    pane.as_str() == REFUSED_PANE
}

fn summary() -> PaneSummary {
    PaneSummary {
        id: PaneId(hostile("id")),
        runtime: hostile("runtime"),
        generation: 1,
        state: PaneState::Running,
        pid: 4242,
        size: Size { cols: 80, rows: 24 },
        offset: 10,
        cwd: hostile("cwd"),
        title: hostile("title"),
        created_at_ms: 1,
        activity: hostile("activity"),
        completion: hostile("completion"),
        restored_by: hostile("restored-by"),
        labels: [(hostile("label"), hostile("value"))].into_iter().collect(),
    }
}

fn snapshot() -> ScreenSnapshot {
    let text = format!("{}\n{}", hostile("row-1"), hostile("row-2"));
    ScreenSnapshot {
        offset: 0,
        size: Size { cols: 80, rows: 24 },
        formatted: ByteBuf(text.clone().into_bytes()),
        text,
        cursor: Cursor { row: 1, col: 0, visible: true },
        title: hostile("screen-title"),
        alternate_screen: false,
        modes: InputModes::default(),
        trimmed: false,
    }
}

fn signalled() -> ExitStatus {
    ExitStatus { code: 130, signal: Some(hostile("signal")) }
}

fn receipt() -> Receipt {
    Receipt {
        runtime: hostile("receipt-runtime"),
        passed: true,
        detail: hostile("receipt-detail"),
        path: hostile("receipt-path"),
        version: Some(hostile("receipt-version")),
        sha256: hostile("sha"),
        fingerprint: Some(hostile("fingerprint")),
        taken_at_ms: 1,
        elapsed_ms: 2,
        read_only_enforced: true,
    }
}

fn runtime() -> RuntimeInfo {
    let mut info: RuntimeInfo = serde_json::from_value(serde_json::json!({
        "id": hostile("runtime-id"),
        "display_name": hostile("display-name"),
        "supported": true,
        "available": false,
        "resume_modes": [hostile("resume")],
        "limitations": [hostile("limitation")],
    }))
    .unwrap();
    info.version = Some(hostile("version"));
    info.unavailable_reason = Some(hostile("unavailable"));
    info.readiness = hostile("readiness");
    info.readiness_gate = Some(hostile("gate"));
    info.sign_in = hostile("sign-in");
    info.version_floor = Some(hostile("floor"));
    info.floor_status = Some(hostile("floor-status"));
    info.permission_profiles = vec![hostile("profile")];
    info
}

/// The characters a terminal acts on, but for the newline that ends a line.
fn obeyed(text: &str) -> Vec<char> {
    text.chars().filter(|c| c.is_control() && *c != '\n').collect()
}

/// How the escapes of `field` look in text output.
fn shown_in_text(field: &str) -> String {
    format!("{field}{SHOWN_IN_TEXT}")
}

/// Fails unless neither stream holds a character a terminal acts on and
/// the output shows each of `fields` with its escapes as `shown` writes
/// them.
fn assert_shown_not_obeyed(args: &[&str], outcome: &Outcome, fields: &[&str], shown: fn(&str) -> String) {
    for (name, stream) in [("standard output", &outcome.stdout), ("standard error", &outcome.stderr)] {
        assert!(obeyed(stream).is_empty(), "panehost {args:?} wrote {:?} raw to {name}: {stream:?}", obeyed(stream));
    }
    let all = format!("{}{}", outcome.stdout, outcome.stderr);
    for field in fields {
        let expected = shown(field);
        assert!(all.contains(&expected), "panehost {args:?} does not show {expected:?}: {outcome:?}");
    }
}

#[test]
fn every_subcommand_shows_what_a_host_said_escaped() {
    let host = HostileHost::start();
    let cases: &[(&[&str], &[&str])] = &[
        (&["ls"], &["id", "runtime", "title", "label", "value"]),
        (&["inspect", "p1"], &["id", "runtime"]),
        (&["history", "p1"], &["history-1", "history-2"]),
        // The narrow table cuts its lines at 100 columns.
        (&["runtimes"], &["runtime-id"]),
        (
            &["runtimes", "--wide"],
            &["runtime-id", "sign-in", "floor", "floor-status", "resume", "profile", "limitation"],
        ),
        (&["runtimes", "--probe", "x"], &["receipt-runtime", "receipt-path", "receipt-version", "receipt-detail"]),
        (&["ask", "p1", "hello"], &["added-1", "added-2"]),
        (&["wait", "p1", "x"], &["matched-1", "matched-2"]),
        (&["interrupt", "p1"], &["id", "outcome", "action", "detail"]),
        (&["close", "p1"], &["signal"]),
        (&["start", "shell"], &["id"]),
        (&["login", "shell"], &["id"]),
        (&["watch"], &["id", "runtime", "activity", "signal", "pane-reason", "watch-reason"]),
    ];
    for (args, fields) in cases {
        let outcome = host.run(args);
        assert_shown_not_obeyed(args, &outcome, fields, shown_in_text);
    }

    // The screen's rows stay rows; what is inside a row is escaped.
    let args = ["inspect", "p1"];
    let outcome = host.run(&args);
    assert!(outcome.status.success(), "{outcome:?}");
    assert_shown_not_obeyed(&args, &outcome, &["row-1", "row-2", "title"], shown_in_text);
    assert!(
        outcome.stdout.contains(&format!("{}\n{}\n", shown_in_text("row-1"), shown_in_text("row-2"))),
        "{outcome:?}"
    );
}

#[test]
fn a_hosts_error_is_shown_escaped() {
    let host = HostileHost::start();
    let cases: &[&[&str]] = &[
        &["inspect", REFUSED_PANE],
        &["ask", REFUSED_PANE, "hello"],
        &["resize", REFUSED_PANE, "80x24"],
        &["send", REFUSED_PANE, "text"],
        &["close", REFUSED_PANE],
        &["history", REFUSED_PANE],
    ];
    for args in cases {
        let outcome = host.run(args);
        assert_eq!(outcome.code(), Some(1), "panehost {args:?}: {outcome:?}");
        assert_shown_not_obeyed(args, &outcome, &["CODE", "message", "limit"], shown_in_text);
    }
    // `notify`, which a hook runs, says what went wrong on standard error.
    let mut notify = host.command(&["notify", "--event", "turn_completed", "{}"]);
    notify.env("PANEHOST_PANE", REFUSED_PANE);
    let outcome = run_to_end(notify, None);
    assert_eq!(outcome.code(), Some(0), "{outcome:?}");
    assert_shown_not_obeyed(&["notify"], &outcome, &["CODE", "message"], shown_in_text);
    // An error that is not the answer to a request: the watch's end.
    let outcome = host.run(&["watch"]);
    assert_eq!(outcome.code(), Some(1), "{outcome:?}");
    assert!(outcome.stderr.contains(&shown_in_text("watch-reason")), "{outcome:?}");
}

#[test]
fn json_output_stays_json_and_shows_the_escapes_escaped() {
    let host = HostileHost::start();
    let shown_in_json = |field: &str| format!("{field}{SHOWN_IN_JSON}");
    let cases: &[(&[&str], &[&str])] = &[
        (&["ls", "--json"], &["id", "runtime", "title", "cwd", "label", "value"]),
        (&["inspect", "p1", "--json"], &["id", "row-1", "row-2", "screen-title"]),
        (&["history", "p1", "--json"], &["history-1"]),
        (&["runtimes", "--json"], &["runtime-id", "display-name"]),
        (&["runtimes", "--probe", "x", "--json"], &["receipt-detail"]),
        (&["ask", "p1", "hello", "--json"], &["source", "added-1", "usage"]),
        (&["wait", "p1", "x", "--json"], &["matched-1"]),
        (&["interrupt", "p1", "--json"], &["outcome", "detail"]),
        (&["close", "p1", "--json"], &["signal"]),
        (&["start", "shell", "--json"], &["id"]),
        (&["watch", "--json"], &["id", "activity", "pane-reason", "watch-reason"]),
        (&["events", "p1", "--json"], &["row-1", "screen-title", "source", "detail", "signal", "reason"]),
        (&["up"], &["host"]),
    ];
    for (args, fields) in cases {
        let outcome = host.run(args);
        assert_shown_not_obeyed(args, &outcome, fields, |field| format!("{field}{SHOWN_IN_JSON}"));
        let mut held = Vec::new();
        for line in outcome.stdout.lines() {
            let value: serde_json::Value = serde_json::from_str(line).unwrap_or_else(|error| {
                panic!("panehost {args:?} printed a line that is not JSON ({error}): {line:?}")
            });
            held.extend(strings(&value));
        }
        // The strings are the host's, escapes and all.
        for field in *fields {
            assert!(held.iter().any(|held| held.contains(&hostile(field))), "panehost {args:?}: {outcome:?}");
        }
        assert!(outcome.stdout.contains(&shown_in_json(fields[0])), "{outcome:?}");
    }
}

/// Every string in `value`, keys too.
fn strings(value: &serde_json::Value) -> Vec<String> {
    match value {
        serde_json::Value::String(text) => vec![text.clone()],
        serde_json::Value::Array(items) => items.iter().flat_map(strings).collect(),
        serde_json::Value::Object(map) => {
            map.iter().flat_map(|(key, item)| [key.clone()].into_iter().chain(strings(item))).collect()
        }
        _ => Vec::new(),
    }
}

#[test]
fn the_control_bridge_relays_the_hosts_frames_inert() {
    let host = HostileHost::start();
    let input = b"{\"id\":1,\"request\":{\"list\":{}}}\n{\"id\":2,\"request\":{\"inspect\":{\"pane\":\"refused\"}}}\n";
    let outcome = run_to_end(host.command(&["control"]), Some(input));
    assert!(outcome.status.success(), "{outcome:?}");
    assert_shown_not_obeyed(&["control"], &outcome, &["title", "message"], |field| format!("{field}{SHOWN_IN_JSON}"));
    let frames: Vec<serde_json::Value> =
        outcome.stdout.lines().map(|line| serde_json::from_str(line).unwrap()).collect();
    assert_eq!(frames.len(), 2, "{outcome:?}");
    assert_eq!(frames[0]["response"]["body"]["panes"]["panes"][0]["title"], hostile("title"));
    assert_eq!(frames[1]["error"]["error"]["message"], hostile("message"));
}

/// The fake host answers as the protocol says: its frames decode.
#[test]
fn the_hostile_host_speaks_the_protocol() {
    let host = HostileHost::start();
    let mut connection = Connection::open(&host.socket, Encoding::Json);
    match connection.ok(Request::List { labels: Default::default() }) {
        Response::Panes { panes } => assert_eq!(panes[0].title, hostile("title")),
        other => panic!("{other:?}"),
    }
    let frame =
        encode(Encoding::Bincode, &ServerMessage::Response { id: 1, body: Response::Started(summary()) }).unwrap();
    let _: ServerMessage = decode(Encoding::Bincode, &frame).unwrap();
}
