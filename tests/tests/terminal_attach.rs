//! `attach_terminal`: the host drives a terminal a client passes with the
//! request (`SCM_RIGHTS`). Here the terminal is a pseudo-terminal the test
//! holds: it types on the master side and reads what the host drew.

mod support;

use panehost_ipc::{encode, Encoding, Hello, PaneId, Request, RequestFrame, Response, ServerMessage, TerminalRelease};
use rustix::fs::OFlags;
use std::io::{IoSlice, Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::time::Instant;
use support::*;

/// A pseudo-terminal: the test's side (master) and the side a terminal
/// program would hold (the one passed to the host).
struct Pty {
    master: std::fs::File,
    terminal: OwnedFd,
}

impl Pty {
    fn open() -> Pty {
        let master = rustix::pty::openpt(rustix::pty::OpenptFlags::RDWR | rustix::pty::OpenptFlags::NOCTTY).unwrap();
        rustix::pty::grantpt(&master).unwrap();
        rustix::pty::unlockpt(&master).unwrap();
        let name = rustix::pty::ptsname(&master, Vec::new()).unwrap();
        let terminal = rustix::fs::open(
            name.as_c_str(),
            OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC,
            rustix::fs::Mode::empty(),
        )
        .unwrap();
        // Raw, as the attach client sets it: keys pass as they are.
        let mut modes = rustix::termios::tcgetattr(&terminal).unwrap();
        modes.make_raw();
        rustix::termios::tcsetattr(&terminal, rustix::termios::OptionalActions::Now, &modes).unwrap();
        let master = std::fs::File::from(master);
        set_read_timeout(&master);
        Pty { master, terminal }
    }

    /// Reads what the host drew until `needle` shows, within the wait.
    fn read_until(&mut self, seen: &mut Vec<u8>, needle: &str) {
        let deadline = Instant::now() + WAIT;
        while !String::from_utf8_lossy(seen).contains(needle) {
            assert!(
                Instant::now() < deadline,
                "{needle:?} never reached the terminal: {:?}",
                String::from_utf8_lossy(seen)
            );
            let mut ready = [rustix::event::PollFd::new(&self.master, rustix::event::PollFlags::IN)];
            let left = deadline.saturating_duration_since(Instant::now());
            let timeout = rustix::event::Timespec::try_from(left).unwrap();
            rustix::event::poll(&mut ready, Some(&timeout)).unwrap();
            let mut chunk = [0u8; 4096];
            match self.master.read(&mut chunk) {
                Ok(read) => seen.extend_from_slice(&chunk[..read]),
                Err(err) if err.kind() == std::io::ErrorKind::WouldBlock => {}
                Err(err) => panic!("reading the terminal: {err}"),
            }
        }
    }
}

/// The master reads without blocking forever: `read_until` polls it.
fn set_read_timeout(master: &std::fs::File) {
    let flags = rustix::fs::fcntl_getfl(master).unwrap();
    rustix::fs::fcntl_setfl(master, flags | OFlags::NONBLOCK).unwrap();
}

/// A connection that speaks JSON by hand, so that its first request can
/// carry descriptors.
fn handshaken(host: &TestHost) -> UnixStream {
    let mut stream = UnixStream::connect(&host.socket).unwrap();
    stream.set_read_timeout(Some(WAIT)).unwrap();
    write_frame(&mut stream, &serde_json::to_vec(&Hello::new(Encoding::Json, "terminal-test")).unwrap());
    read_frame(&mut stream).expect("a welcome");
    stream
}

/// Sends `request` as one frame with `descriptors` passed along.
fn send_with(stream: &UnixStream, id: u64, request: Request, descriptors: &[BorrowedFd<'_>]) {
    let payload = encode(Encoding::Json, &RequestFrame { id, request }).unwrap();
    let mut frame = (payload.len() as u32).to_be_bytes().to_vec();
    frame.extend_from_slice(&payload);
    let mut space = vec![MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(descriptors.len().max(1)))];
    let mut control = rustix::net::SendAncillaryBuffer::new(&mut space);
    if !descriptors.is_empty() {
        assert!(control.push(rustix::net::SendAncillaryMessage::ScmRights(descriptors)));
    }
    let sent =
        rustix::net::sendmsg(stream, &[IoSlice::new(&frame)], &mut control, rustix::net::SendFlags::empty()).unwrap();
    (&*stream).write_all(&frame[sent..]).unwrap();
}

fn attach_request(pane: &PaneId) -> Request {
    Request::AttachTerminal { pane: pane.clone(), detach_key: 0x1c }
}

/// The answer to request `id`, skipping anything else.
fn answer(stream: &mut UnixStream, id: u64) -> Result<Response, panehost_ipc::ErrorBody> {
    loop {
        let frame = read_frame(stream).expect("an answer before the end of the connection");
        match serde_json::from_slice::<ServerMessage>(&frame).unwrap() {
            ServerMessage::Response { id: answered, body } if answered == id => return Ok(body),
            ServerMessage::Error { id: Some(answered), error } if answered == id => return Err(error),
            _ => {}
        }
    }
}

fn released(stream: &mut UnixStream, id: u64) -> TerminalRelease {
    match answer(stream, id) {
        Ok(Response::TerminalReleased(release)) => release,
        other => panic!("expected terminal_released, got {other:?}"),
    }
}

fn open_descriptors(pid: u32) -> usize {
    std::fs::read_dir(format!("/proc/{pid}/fd")).unwrap().count()
}

#[test]
fn the_host_draws_the_screen_takes_keys_and_gives_the_terminal_back_on_the_detach_key() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    let subscription = conn.subscribe(&pane, Some(0)).subscription;
    let mut transcript = Transcript::from(0);
    conn.type_line(&pane, "echo drawn-$((6*7))");
    conn.follow_until_text(subscription, &mut transcript, "drawn-42");

    let mut pty = Pty::open();
    let flags_before = rustix::fs::fcntl_getfl(&pty.terminal).unwrap();
    let mut stream = handshaken(&host);
    send_with(&stream, 1, attach_request(&pane), &[pty.terminal.as_fd(), pty.terminal.as_fd()]);
    let mut seen = Vec::new();
    // The screen as it was, drawn on the terminal.
    pty.read_until(&mut seen, "drawn-42");
    // Keys typed on the terminal reach the pane; its output comes back.
    pty.master.write_all(b"echo typed-$((3*4))\r").unwrap();
    pty.read_until(&mut seen, "typed-12");
    conn.follow_until_text(subscription, &mut transcript, "typed-12");
    // Keys before the detach key in the same read still go in.
    pty.master.write_all(b"echo last\x1c").unwrap();
    let release = released(&mut stream, 1);
    assert_eq!((release.reason.as_str(), release.exit), ("detached", None));
    // The terminal is as it was passed: blocking, for the shell that reads
    // it next.
    assert_eq!(rustix::fs::fcntl_getfl(&pty.terminal).unwrap(), flags_before);
    conn.type_line(&pane, "");
    conn.follow_until_text(subscription, &mut transcript, "last");
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn the_panes_exit_and_the_clients_end_give_the_terminal_back() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &["sh", "-c", "read line; exit 3"])).id;
    let mut pty = Pty::open();
    let mut stream = handshaken(&host);
    send_with(&stream, 7, attach_request(&pane), &[pty.terminal.as_fd()]);
    // Typed on the terminal (kept there until the host reads it), read by
    // the pane, which exits.
    pty.master.write_all(b"go\r").unwrap();
    let release = released(&mut stream, 7);
    assert_eq!(release.reason, "exited");
    assert_eq!(release.exit.map(|status| status.code), Some(3));

    // A client that ends its requests gets its terminal back.
    let shell = conn.start(start_params("shell", &[])).id;
    let mut stream = handshaken(&host);
    send_with(&stream, 1, attach_request(&shell), &[pty.terminal.as_fd()]);
    let mut seen = Vec::new();
    pty.master.write_all(b"echo second-$((1+1))\r").unwrap();
    pty.read_until(&mut seen, "second-2");
    stream.shutdown(std::net::Shutdown::Write).unwrap();
    assert_eq!(released(&mut stream, 1).reason, "client_ended");
    // The pane runs on.
    let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: shell.clone() }) else { panic!() };
    assert_eq!(detail.pane.state, panehost_ipc::PaneState::Running);
    conn.ok(Request::Close { pane: shell });
    host.stop();
}

#[test]
fn echoes_written_at_once_and_floods_through_the_subscription_reach_the_terminal_each_byte_once_in_order() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    // Silent until a line is typed; then short lines (short reads, which
    // the reader hands the terminal at once) between floods (long reads,
    // which the attachment's subscription writes), and a last line.
    let script = "read go; i=0; while [ $i -lt 40 ]; do echo short-$i; \
                  if [ $((i % 8)) -eq 7 ]; then seq -f flood-$i-%g 1 2000; fi; i=$((i+1)); done; \
                  echo all-done; read end";
    let pane = conn.start(start_params("shell", &["sh", "-c", script])).id;
    let subscription = conn.subscribe(&pane, Some(0)).subscription;
    let mut transcript = Transcript::from(0);

    let mut pty = Pty::open();
    let mut stream = handshaken(&host);
    send_with(&stream, 1, attach_request(&pane), &[pty.terminal.as_fd()]);
    // Typed on the terminal: its echo is the first output.
    pty.master.write_all(b"go\r").unwrap();
    let mut seen = Vec::new();
    pty.read_until(&mut seen, "all-done\r\n");
    conn.follow_until_text(subscription, &mut transcript, "all-done\r\n");

    // The terminal shows the screen as it was (blank: nothing was printed
    // before the attachment), then every byte of the output once, in order.
    assert_eq!(transcript.start, 0, "the subscription missed nothing");
    assert!(
        seen.ends_with(&transcript.bytes),
        "the terminal's bytes after its first drawing are not the output: {} bytes against {}",
        seen.len(),
        transcript.bytes.len()
    );
    let drawing = String::from_utf8_lossy(&seen[..seen.len() - transcript.bytes.len()]);
    assert!(!drawing.contains("go") && !drawing.contains("short"), "output written twice: {drawing:?}");
    pty.master.write_all(b"\x1c").unwrap();
    assert_eq!(released(&mut stream, 1).reason, "detached");
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn without_a_terminal_the_answer_is_no_terminal_and_stray_descriptors_are_not_kept() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    let null = std::fs::File::open("/dev/null").unwrap();

    // No descriptor: from a JSON client that cannot pass one, for example.
    let mut stream = handshaken(&host);
    send_with(&stream, 1, attach_request(&pane), &[]);
    assert_eq!(answer(&mut stream, 1).unwrap_err().code, "NO_TERMINAL");

    // A descriptor that is not a terminal.
    let mut stream = handshaken(&host);
    send_with(&stream, 1, attach_request(&pane), &[null.as_fd()]);
    let refused = answer(&mut stream, 1).unwrap_err();
    assert_eq!(refused.code, "NO_TERMINAL", "{refused:?}");
    assert!(refused.message.contains("not a terminal"), "{refused:?}");

    // A terminal passed with a later request is not taken (nor kept).
    let pty = Pty::open();
    let mut stream = handshaken(&host);
    send_with(&stream, 1, Request::List { labels: Default::default() }, &[]);
    answer(&mut stream, 1).unwrap();
    send_with(&stream, 2, attach_request(&pane), &[pty.terminal.as_fd()]);
    assert_eq!(answer(&mut stream, 2).unwrap_err().code, "NO_TERMINAL");

    // Descriptors passed with any request cost the host nothing it keeps.
    let pid = host.pid();
    let before = open_descriptors(pid);
    for id in 3..203 {
        send_with(&stream, id, Request::List { labels: Default::default() }, &[null.as_fd(), null.as_fd()]);
        answer(&mut stream, id).unwrap();
    }
    let after = open_descriptors(pid);
    assert!(
        after <= before + 2,
        "the host holds {after} descriptors after 200 requests with two each, {before} before"
    );
    conn.ok(Request::Close { pane });
    host.stop();
}
