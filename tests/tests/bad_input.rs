//! Bad input from clients: each gets a structured error or a clean close,
//! and the host keeps serving everyone else without losing a pane.

mod support;

use panehost_ipc::{Encoding, HandshakeReply, Request, ServerMessage, PROTOCOL_VERSION};
use std::io::Write;
use std::os::unix::net::UnixStream;
use support::command::wait_for;
use support::*;

/// A host with one running pane, and a check that both are still fine.
struct Witness {
    host: TestHost,
    pane: panehost_ipc::PaneId,
}

impl Witness {
    fn new() -> Witness {
        let host = TestHost::start();
        let pane = host.connect(Encoding::Bincode).start(start_params("shell", &[])).id;
        Witness { host, pane }
    }

    /// The host still answers, and the pane still runs.
    fn assert_serving(&self) {
        let mut conn = self.host.connect(Encoding::Json);
        let panehost_ipc::Response::Panes { panes } = conn.ok(Request::List { labels: Default::default() }) else {
            panic!()
        };
        assert!(panes.iter().any(|pane| pane.id == self.pane && pane.state == panehost_ipc::PaneState::Running));
    }

    fn raw(&self) -> UnixStream {
        let stream = UnixStream::connect(&self.host.socket).unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        stream
    }
}

/// How many descriptors the process holds open.
fn open_descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).map(Iterator::count).unwrap_or(0)
}

fn handshake_reply(stream: &mut UnixStream) -> HandshakeReply {
    serde_json::from_slice(&read_frame(stream).expect("a handshake reply")).unwrap()
}

fn refused_code(reply: HandshakeReply) -> String {
    match reply {
        HandshakeReply::Refused { code, .. } => code,
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[test]
fn unknown_pane_and_runtime_and_zero_size_are_structured_errors() {
    let witness = Witness::new();
    let mut conn = witness.host.connect(Encoding::Bincode);
    let unknown = panehost_ipc::PaneId::from("p-nope");
    for request in [
        Request::Inspect { pane: unknown.clone() },
        Request::Interrupt { pane: unknown.clone(), terminate: false },
        Request::Close { pane: unknown.clone() },
        Request::Events { pane: unknown.clone(), from: None },
    ] {
        assert_eq!(conn.call(request).unwrap_err().code, "UNKNOWN_PANE");
    }
    assert_eq!(conn.call(Request::Start(start_params("no-such-runtime", &[]))).unwrap_err().code, "UNKNOWN_RUNTIME");
    let mut zero = start_params("shell", &[]);
    zero.size = Some(panehost_ipc::Size { cols: 80, rows: 0 });
    assert_eq!(conn.call(Request::Start(zero)).unwrap_err().code, "INVALID_ARGUMENT");
    assert_eq!(conn.call(Request::Unsubscribe { subscription: 99 }).unwrap_err().code, "UNKNOWN_SUBSCRIPTION");
    assert_eq!(
        conn.call(Request::Start(start_params("fixture", &["rm", "-rf", "/"]))).unwrap_err().code,
        "INVALID_ARGUMENT"
    );
    witness.assert_serving();
    witness.host.stop();
}

#[test]
fn malformed_frames_are_answered_and_the_connection_goes_on() {
    let witness = Witness::new();
    for encoding in [Encoding::Json, Encoding::Bincode] {
        let mut conn = witness.host.connect(encoding);
        let garbage: &[u8] = match encoding {
            Encoding::Json => br#"{"id":5,"request":{"teleport":{"to":"mars"}}}"#,
            Encoding::Bincode => &[5, 250, 1, 2, 3],
        };
        write_frame(&mut conn.stream, garbage);
        match conn.read() {
            ServerMessage::Error { id, error } => {
                assert_eq!(id, Some(5));
                assert_eq!(error.code, "MALFORMED_REQUEST");
            }
            other => panic!("{other:?}"),
        }
        write_frame(&mut conn.stream, b"\xff\xfe not anything");
        assert!(matches!(conn.read(), ServerMessage::Error { id: None, error } if error.code == "MALFORMED_REQUEST"));
        // The same connection still works.
        conn.ok(Request::List { labels: Default::default() });
    }
    witness.assert_serving();
    witness.host.stop();
}

#[test]
fn an_oversized_frame_is_refused_without_reading_it() {
    let witness = Witness::new();
    let mut conn = witness.host.connect(Encoding::Bincode);
    // Claim 4 GiB; send nothing more.
    conn.stream.write_all(&u32::MAX.to_be_bytes()).unwrap();
    assert!(matches!(conn.read(), ServerMessage::Error { id: None, error } if error.code == "FRAME_TOO_LARGE"));
    assert!(read_frame(&mut conn.stream).is_none(), "the host closes the connection");
    // An oversized hello.
    let mut raw = witness.raw();
    raw.write_all(&(1u32 << 20).to_be_bytes()).unwrap();
    assert_eq!(refused_code(handshake_reply(&mut raw)), "FRAME_TOO_LARGE");
    witness.assert_serving();
    witness.host.stop();
}

#[test]
fn requests_before_the_handshake_and_wrong_versions_are_refused() {
    let witness = Witness::new();
    let mut raw = witness.raw();
    let request = panehost_ipc::encode(
        Encoding::Json,
        &panehost_ipc::RequestFrame { id: 1, request: Request::List { labels: Default::default() } },
    )
    .unwrap();
    write_frame(&mut raw, &request);
    assert_eq!(refused_code(handshake_reply(&mut raw)), "HANDSHAKE_REQUIRED");
    assert!(read_frame(&mut raw).is_none());

    let mut raw = witness.raw();
    write_frame(&mut raw, format!(r#"{{"protocol":{},"encoding":"json"}}"#, PROTOCOL_VERSION + 1).as_bytes());
    match handshake_reply(&mut raw) {
        HandshakeReply::Refused { code, protocol, .. } => {
            assert_eq!(code, "PROTOCOL_MISMATCH");
            assert_eq!(protocol, PROTOCOL_VERSION);
        }
        other => panic!("{other:?}"),
    }
    witness.assert_serving();
    witness.host.stop();
}

#[test]
fn a_client_that_disconnects_mid_frame_harms_no_one() {
    let witness = Witness::new();
    let mut conn = witness.host.connect(Encoding::Bincode);
    conn.stream.write_all(&100u32.to_be_bytes()).unwrap();
    conn.stream.write_all(&[1, 2, 3]).unwrap();
    drop(conn);
    let mut raw = witness.raw();
    raw.write_all(&[0, 0]).unwrap();
    drop(raw);
    witness.assert_serving();
    witness.host.stop();
}

#[test]
fn ten_thousand_connections_opened_and_dropped_leave_memory_bounded() {
    let witness = Witness::new();
    witness.assert_serving();
    let before = witness.host.rss_kib();
    let descriptors_before = open_descriptors(witness.host.pid());
    for round in 0..10_000 {
        let mut stream = UnixStream::connect(&witness.host.socket).unwrap();
        // Some say hello, some start one and vanish, some say nothing.
        match round % 3 {
            0 => write_frame(&mut stream, br#"{"protocol":1,"encoding":"bincode"}"#),
            1 => stream.write_all(&[0, 0, 0, 9, b'{']).unwrap(),
            _ => {}
        }
    }
    witness.assert_serving();
    // On a loaded machine the host may still be working through the
    // connections dropped last; what they leave behind is measured once
    // it has let go of them all.
    wait_for("the host to let go of the dropped connections", || {
        let now = open_descriptors(witness.host.pid());
        if now <= descriptors_before + 8 {
            Ok(())
        } else {
            Err(format!("{now} descriptors open, {descriptors_before} before"))
        }
    });
    // And the memory they held goes back to the system.
    wait_for("the host's memory to fall back within 64 MiB of where it was", || {
        let after = witness.host.rss_kib();
        if after < before + 64 * 1024 {
            Ok(())
        } else {
            Err(format!("host grew from {before} KiB to {after} KiB"))
        }
    });
    witness.host.stop();
}
