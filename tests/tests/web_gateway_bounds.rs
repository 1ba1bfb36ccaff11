//! `panehost web` bounds its clients, end to end: a real host, a real
//! gateway, real TCP connections from several loopback addresses.
//!
//! - The token holder is answered while a thousand connections that sent
//!   half a request are held, and each of those is closed once its head is
//!   overdue; the gateway runs with its soft open-file limit at the hard one,
//!   and a host it starts gets back the limit the gateway was given.
//! - At the per-address cap, and at the cap in all, the oldest connection
//!   without the token is closed to make room; when every place holds the
//!   token, a new connection is refused at once.
//! - A connection that sends nothing, or garbage, or stays kept-alive, is
//!   closed; one whose answer stalls is closed after the idle timeout.
//! - A WebSocket stays attached well past every timeout, and still works.
//!
//! Timings are measured and printed, never asserted tightly: "answered at
//! all while the others are held" is the property.

mod support;

use base64::Engine as _;
use rustix::event::{poll, PollFd, PollFlags};
use rustix::net::{AddressFamily, SocketType};
use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
use serde_json::Value;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpStream};
use std::process::Stdio;
use std::sync::mpsc;
use std::time::{Duration, Instant};
use support::command::*;
use support::*;

/// The gateway's deadline for a request's head (and keep-alive timeout):
/// `HEADER_READ_TIMEOUT` in client/src/cli/web/bounds.rs.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(5);

/// How long an answer may stall: `IDLE_TIMEOUT` there.
const IDLE_TIMEOUT: Duration = Duration::from_secs(30);

/// Half of a request's head: the blank line that would end it never comes.
const HALF_REQUEST: &str = "GET /api/panes HTTP/1.1\r\nHost: 127.0.0.1\r\n";

/// The caps a gateway prints at start.
#[derive(Debug, Clone, Copy)]
struct Caps {
    total: usize,
    per_peer: usize,
}

/// A running `panehost web` on a free loopback port.
struct Gateway {
    guard: ChildGuard,
    address: SocketAddr,
    token: String,
    caps: Caps,
}

impl Gateway {
    fn start(cli: &Cli) -> Gateway {
        let mut command = cli.command(&["web", "--listen", "127.0.0.1:0"]);
        command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut guard = ChildGuard(Some(command.spawn().unwrap()));
        let stdout = guard.child().stdout.take().unwrap();
        let stderr = guard.child().stderr.take().unwrap();
        let (sender, lines) = mpsc::channel::<String>();
        let stdout_lines = sender.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = stdout_lines.send(format!("stdout: {line}"));
            }
        });
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = sender.send(format!("stderr: {line}"));
            }
        });
        let (mut url, mut caps) = (None, None);
        let deadline = Instant::now() + WAIT;
        while url.is_none() || caps.is_none() {
            let line = lines
                .recv_timeout(deadline.saturating_duration_since(Instant::now()))
                .unwrap_or_else(|_| panic!("panehost web printed no URL and bounds within {WAIT:?}"));
            if let Some(line) = line.strip_prefix("stdout: ") {
                url = Some(line.to_owned());
            } else if let Some(found) = parse_caps(&line) {
                caps = Some(found);
            }
        }
        // http://127.0.0.1:PORT/#token=T
        let url = url.unwrap();
        let rest = url.strip_prefix("http://").expect("an http URL");
        let (authority, fragment) = rest.split_once("/#token=").expect("a token in the fragment");
        Gateway { guard, address: authority.parse().unwrap(), token: fragment.to_owned(), caps: caps.unwrap() }
    }

    fn pid(&mut self) -> u32 {
        self.guard.child().id()
    }

    /// A connection from `source` (any address of 127.0.0.0/8).
    fn connect_from(&self, source: Ipv4Addr) -> TcpStream {
        let socket = rustix::net::socket(AddressFamily::INET, SocketType::STREAM, None).unwrap();
        rustix::net::bind(&socket, &SocketAddrV4::new(source, 0)).unwrap();
        rustix::net::connect(&socket, &self.address).unwrap_or_else(|error| panic!("connect from {source}: {error}"));
        TcpStream::from(socket)
    }

    /// `GET path` with the token, on `stream`.
    fn send_with_token(&self, stream: &mut TcpStream, path: &str, close: bool) {
        let connection = if close { "close" } else { "keep-alive" };
        let head = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nConnection: {connection}\r\n\r\n",
            self.address, self.token
        );
        stream.write_all(head.as_bytes()).unwrap();
    }

    /// The token holder's `GET /api/panes` from `source`, on a new
    /// connection: the answer, and how long it took from connect to answer.
    fn list_panes_from(&self, source: Ipv4Addr) -> (Answer, Duration) {
        let started = Instant::now();
        let mut stream = self.connect_from(source);
        self.send_with_token(&mut stream, "/api/panes", true);
        let answer = read_answer(&mut stream).expect("an answer to the token holder");
        (answer, started.elapsed())
    }

    /// SIGTERM to the gateway's own pid; it exits 0.
    fn stop(mut self) {
        let pid = self.pid();
        let status = std::process::Command::new("kill").arg("-TERM").arg(pid.to_string()).status().unwrap();
        assert!(status.success());
        let status = self.guard.wait_for_exit("panehost web");
        assert!(status.success(), "panehost web exited with {status}");
    }
}

/// `panehost web: at most N connections, M per address; ...`
fn parse_caps(line: &str) -> Option<Caps> {
    let rest = line.split_once("at most ")?.1;
    let (total, rest) = rest.split_once(" connections, ")?;
    let per_peer = rest.split_once(" per address")?.0;
    Some(Caps { total: total.parse().ok()?, per_peer: per_peer.parse().ok()? })
}

/// An HTTP answer.
#[derive(Debug)]
struct Answer {
    status: u16,
    body: String,
}

/// Reads one answer (its head, then `Content-Length` bytes, or to the end).
fn read_answer(stream: &mut TcpStream) -> std::io::Result<Answer> {
    stream.set_read_timeout(Some(WAIT))?;
    let mut bytes = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(end) = bytes.windows(4).position(|window| window == b"\r\n\r\n") {
            break end + 4;
        }
        let read = stream.read(&mut chunk)?;
        if read == 0 {
            return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "closed before an answer"));
        }
        bytes.extend_from_slice(&chunk[..read]);
    };
    let head = String::from_utf8_lossy(&bytes[..head_end]).into_owned();
    let status = head.split_whitespace().nth(1).and_then(|code| code.parse().ok()).expect("a status line");
    let length = head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.eq_ignore_ascii_case("content-length").then(|| value.trim().parse::<usize>().ok()).flatten()
    });
    let mut body = bytes[head_end..].to_vec();
    match length {
        Some(length) => {
            while body.len() < length {
                let read = stream.read(&mut chunk)?;
                if read == 0 {
                    break;
                }
                body.extend_from_slice(&chunk[..read]);
            }
        }
        None => {
            stream.read_to_end(&mut body)?;
        }
    }
    Ok(Answer { status, body: String::from_utf8_lossy(&body).into_owned() })
}

/// True once the gateway has closed `stream` (it sent FIN or RST), without
/// reading what is buffered; waits at most `wait` for it.
fn closed_within(stream: &TcpStream, wait: Duration) -> bool {
    let flags = PollFlags::RDHUP | PollFlags::HUP | PollFlags::ERR;
    let deadline = Instant::now() + wait;
    loop {
        let mut fds = [PollFd::new(stream, flags)];
        let left = deadline.saturating_duration_since(Instant::now());
        let timeout =
            rustix::event::Timespec { tv_sec: left.as_secs() as i64, tv_nsec: i64::from(left.subsec_nanos()) };
        match poll(&mut fds, Some(&timeout)) {
            Ok(_) => {}
            Err(rustix::io::Errno::INTR) => continue,
            Err(error) => panic!("poll: {error}"),
        }
        if fds[0].revents().intersects(flags) {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
    }
}

/// True when the gateway has not closed `stream`.
fn is_open(stream: &TcpStream) -> bool {
    !closed_within(stream, Duration::ZERO)
}

/// Raises this test process's soft open-file limit to its hard limit; false
/// when that still leaves fewer than `needed` descriptors.
fn descriptors_for(needed: u64) -> bool {
    let limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        setrlimit(Resource::Nofile, Rlimit { current: limit.maximum, maximum: limit.maximum }).unwrap();
    }
    match getrlimit(Resource::Nofile).current {
        Some(soft) if soft < needed => {
            eprintln!("skipped: the hard open-file limit ({soft}) is below the {needed} descriptors this test needs");
            false
        }
        _ => true,
    }
}

/// `/proc/PID/limits`: the soft and hard open-file limits.
fn open_file_limits(pid: u32) -> (String, String) {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits.lines().find(|line| line.starts_with("Max open files")).expect("a Max open files line");
    let fields: Vec<&str> = line.split_whitespace().collect();
    (fields[3].to_owned(), fields[4].to_owned())
}

/// Opens `count` connections from `source`, each sending half a request.
fn half_requests(gateway: &Gateway, source: Ipv4Addr, count: usize) -> Vec<TcpStream> {
    (0..count)
        .map(|_| {
            let mut stream = gateway.connect_from(source);
            stream.write_all(HALF_REQUEST.as_bytes()).unwrap();
            stream
        })
        .collect()
}

/// Reads the terminal's messages until `deadline`, or until `done` is true
/// of one (then true). Fails if the gateway closes the terminal.
fn read_messages(
    socket: &mut tungstenite::WebSocket<TcpStream>,
    deadline: Instant,
    mut done: impl FnMut(&Value) -> bool,
) -> bool {
    use tungstenite::Message;
    while Instant::now() < deadline {
        match socket.read() {
            Ok(Message::Text(text)) => {
                let value: Value = serde_json::from_str(text.as_str()).unwrap();
                if done(&value) {
                    return true;
                }
            }
            Ok(Message::Close(frame)) => panic!("the gateway closed the terminal: {frame:?}"),
            Ok(_) => {}
            Err(tungstenite::Error::Io(error))
                if matches!(error.kind(), std::io::ErrorKind::WouldBlock | std::io::ErrorKind::TimedOut) => {}
            Err(error) => panic!("the terminal's socket failed: {error}"),
        }
    }
    false
}

fn assert_lists_panes(answer: &Answer) {
    assert_eq!(answer.status, 200, "{answer:?}");
    let value: Value = serde_json::from_str(&answer.body).unwrap_or_else(|error| panic!("{error}: {answer:?}"));
    assert!(value["panes"].is_array(), "{answer:?}");
}

// ---------------------------------------------------------------------------
// 1. Half requests cannot lock the token holder out
// ---------------------------------------------------------------------------

#[test]
fn the_token_holder_is_answered_while_a_thousand_half_requests_are_held() {
    // The gateway starts with the usual soft limit, below what this needs.
    let hard = getrlimit(Resource::Nofile).maximum;
    if hard.is_some_and(|hard| hard < 2_500) {
        eprintln!("skipped: the hard open-file limit ({hard:?}) leaves too little to raise");
        return;
    }
    setrlimit(Resource::Nofile, Rlimit { current: Some(1024), maximum: hard }).unwrap();
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let mut gateway = Gateway::start(&cli);
    assert!(descriptors_for(1_200));
    let pid = gateway.pid();
    let (soft, hard) = open_file_limits(pid);
    assert_eq!(soft, hard, "the gateway raised its soft open-file limit from 1024 to the hard one");
    // Four other local addresses, 250 each, all within the per-address cap.
    assert!(gateway.caps.per_peer >= 250 && gateway.caps.total > 1_000, "{:?}", gateway.caps);

    let opening = Instant::now();
    let mut held = Vec::new();
    for last in 2..=5 {
        held.extend(half_requests(&gateway, Ipv4Addr::new(127, 0, 0, last), 250));
    }
    let opened_in = opening.elapsed();
    let (answer, latency) = gateway.list_panes_from(Ipv4Addr::LOCALHOST);
    let answered_after = opening.elapsed();
    assert_lists_panes(&answer);
    let still_open = held.iter().filter(|stream| is_open(stream)).count();
    eprintln!(
        "1,000 half requests opened in {opened_in:?}; the token holder answered in {latency:?}, \
         with {still_open} of them still held"
    );
    if answered_after < HEADER_READ_TIMEOUT {
        assert_eq!(still_open, 1_000, "none is closed before its head is overdue");
    }

    // Each is closed once its head is overdue, and the gateway still serves.
    for stream in &held {
        assert!(closed_within(stream, WAIT), "a half request still held {:?} after opening", opening.elapsed());
    }
    eprintln!("all 1,000 closed {:?} after the first was opened", opening.elapsed());
    let (answer, _) = gateway.list_panes_from(Ipv4Addr::LOCALHOST);
    assert_lists_panes(&answer);
    gateway.stop();
    host.stop();
}

/// The gateway raised its own limit; a host it starts after the first one
/// ended gets the limit the gateway was given, which it hands on to its
/// panes' programs (some still use `select()`, which breaks above 1,023).
#[test]
fn a_host_the_gateway_starts_later_gets_the_open_file_limit_the_gateway_was_given() {
    let hard = getrlimit(Resource::Nofile).maximum;
    if hard.is_some_and(|hard| hard <= 1024) {
        eprintln!("skipped: the hard open-file limit ({hard:?}) leaves nothing to raise");
        return;
    }
    setrlimit(Resource::Nofile, Rlimit { current: Some(1024), maximum: hard }).unwrap();
    let mut host = TestHost::start();
    let cli = Cli::for_host(&host);
    let mut gateway = Gateway::start(&cli);
    let (soft, hard) = open_file_limits(gateway.pid());
    assert_eq!(soft, hard, "the gateway raised its soft open-file limit");

    // The host ends; the token holder's next request starts another.
    host.kill_hard();
    let (answer, _) = gateway.list_panes_from(Ipv4Addr::LOCALHOST);
    assert_lists_panes(&answer);
    // That host raises its own limit too, and hands the one it was given to
    // its panes' programs.
    let started = cli.json(&["start", "shell", "--json", "--", "sleep", "60"]);
    let pane = started["id"].as_str().expect("a pane id").to_owned();
    let list = cli.json(&["ls", "--json"]);
    let pid = find_pane(&list, &pane).expect("the pane is listed")["pid"].as_u64().unwrap() as u32;
    let (soft, _) = open_file_limits(pid);
    cli.ok(&["close", &pane]);
    cli.ok(&["stop"]);
    gateway.stop();
    assert_eq!(soft, "1024", "a pane of the host the gateway started got the gateway's raised limit");
}

// ---------------------------------------------------------------------------
// 2. The caps: the oldest without the token makes room; the token holder's
//    connections are never closed for another
// ---------------------------------------------------------------------------

#[test]
fn at_the_per_address_cap_the_oldest_half_requests_make_room() {
    if !descriptors_for(1_000) {
        return;
    }
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let gateway = Gateway::start(&cli);
    let cap = gateway.caps.per_peer;
    let source = Ipv4Addr::LOCALHOST;

    // Exactly the cap: every one held.
    let opening = Instant::now();
    let mut held = half_requests(&gateway, source, cap);
    let open = held.iter().filter(|stream| is_open(stream)).count();
    if opening.elapsed() < HEADER_READ_TIMEOUT {
        assert_eq!(open, cap, "all {cap} held at the cap");
    }
    // Twenty more from the same address: the twenty oldest are closed for them.
    held.extend(half_requests(&gateway, source, 20));
    for (index, stream) in held.iter().take(20).enumerate() {
        assert!(closed_within(stream, WAIT), "the oldest connection {index} is still held");
    }
    let elapsed = opening.elapsed();
    let newest_open = held[20..].iter().filter(|stream| is_open(stream)).count();
    eprintln!("the per-address cap {cap}: 20 oldest closed for 20 new, {newest_open} newest held, {elapsed:?}");
    if elapsed < HEADER_READ_TIMEOUT {
        assert_eq!(newest_open, cap, "the newest {cap} are held");
    }
    // The token holder, from the very same address, is answered.
    let (answer, latency) = gateway.list_panes_from(source);
    assert_lists_panes(&answer);
    eprintln!("the token holder from the same address answered in {latency:?}");
    gateway.stop();
    host.stop();
}

#[test]
fn at_the_cap_in_all_the_oldest_half_request_makes_room() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let gateway = Gateway::start(&cli);
    let Caps { total, per_peer } = gateway.caps;
    if !descriptors_for(total as u64 + 256) {
        return;
    }
    // The whole table, from as many addresses as the per-address cap needs.
    let opening = Instant::now();
    let mut held = Vec::new();
    let mut last = 10u8;
    while held.len() < total {
        let count = per_peer.min(total - held.len());
        held.extend(half_requests(&gateway, Ipv4Addr::new(127, 0, 1, last), count));
        last += 1;
    }
    let filled_in = opening.elapsed();
    let open = held.iter().filter(|stream| is_open(stream)).count();
    eprintln!("{total} connections opened from {} addresses in {filled_in:?}, {open} held", last - 10);
    if opening.elapsed() < HEADER_READ_TIMEOUT {
        assert_eq!(open, total, "all {total} held at the cap");
    }
    // One more, from an address with none: the oldest of all is closed for it,
    // and the token holder is answered.
    let (answer, latency) = gateway.list_panes_from(Ipv4Addr::new(127, 0, 2, 1));
    assert_lists_panes(&answer);
    assert!(closed_within(&held[0], WAIT), "the oldest connection is still held");
    let elapsed = opening.elapsed();
    eprintln!("at the cap in all ({total}), the token holder answered in {latency:?}");
    if elapsed < HEADER_READ_TIMEOUT {
        assert!(is_open(&held[1]) && is_open(&held[total - 1]), "only the oldest made room");
    }
    gateway.stop();
    host.stop();
}

#[test]
fn when_every_place_holds_the_token_a_new_connection_is_refused_at_once() {
    if !descriptors_for(1_000) {
        return;
    }
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let gateway = Gateway::start(&cli);
    let cap = gateway.caps.per_peer;
    let source = Ipv4Addr::new(127, 0, 0, 6);
    // The places stay the token holder's only while kept alive, within the
    // keep-alive timeout: on a machine too slow to fill them in time, try again.
    for attempt in 1..=3 {
        let filling = Instant::now();
        let mut vouched = Vec::new();
        for _ in 0..cap {
            let mut stream = gateway.connect_from(source);
            gateway.send_with_token(&mut stream, "/api/panes", false);
            assert_lists_panes(&read_answer(&mut stream).unwrap());
            vouched.push(stream);
        }
        let started = Instant::now();
        let mut refused = gateway.connect_from(source);
        let _ = refused.write_all(HALF_REQUEST.as_bytes());
        let answer = read_answer(&mut refused);
        let refused_in = started.elapsed();
        let all_held = vouched.iter().all(is_open);
        let in_time = filling.elapsed() < HEADER_READ_TIMEOUT;
        if !(all_held && in_time) {
            eprintln!("attempt {attempt}: filling {cap} places took {:?}; again", filling.elapsed());
            drop(vouched);
            continue;
        }
        match answer {
            Ok(answer) => assert_eq!(answer.status, 503, "{answer:?}"),
            Err(error) => assert!(
                matches!(error.kind(), std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::UnexpectedEof),
                "neither a 503 nor a close: {error}"
            ),
        }
        eprintln!("with {cap} places holding the token, a new connection was refused in {refused_in:?}");
        // Another address is still served.
        let (answer, _) = gateway.list_panes_from(Ipv4Addr::new(127, 0, 0, 7));
        assert_lists_panes(&answer);
        gateway.stop();
        host.stop();
        return;
    }
    panic!("could not fill {cap} places within the keep-alive timeout in 3 attempts");
}

// ---------------------------------------------------------------------------
// 3. The timeouts
// ---------------------------------------------------------------------------

#[test]
fn silent_garbage_and_kept_alive_connections_are_closed() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let gateway = Gateway::start(&cli);
    let started = Instant::now();
    // Nothing sent at all.
    let silent = gateway.connect_from(Ipv4Addr::LOCALHOST);
    // A head that never ends.
    let half = half_requests(&gateway, Ipv4Addr::LOCALHOST, 1).remove(0);
    // A whole answer, then nothing: kept alive, then closed.
    let mut kept_alive = gateway.connect_from(Ipv4Addr::LOCALHOST);
    gateway.send_with_token(&mut kept_alive, "/api/panes", false);
    assert_lists_panes(&read_answer(&mut kept_alive).unwrap());
    // Not HTTP: answered 400 and closed at once.
    let mut garbage = gateway.connect_from(Ipv4Addr::LOCALHOST);
    garbage.write_all(b"\x16\x03\x01 not a request\r\n\r\n").unwrap();
    let answer = read_answer(&mut garbage);
    assert!(
        answer.as_ref().map_or(true, |answer| answer.status == 400),
        "garbage is answered 400 or closed: {answer:?}"
    );
    assert!(closed_within(&garbage, WAIT), "garbage closes the connection");

    for (what, stream) in [("silent", &silent), ("half a head", &half), ("kept alive", &kept_alive)] {
        assert!(closed_within(stream, WAIT), "a {what} connection is still held after {:?}", started.elapsed());
        let after = started.elapsed();
        eprintln!("a {what} connection closed after {after:?}");
        assert!(after >= HEADER_READ_TIMEOUT / 2, "a {what} connection closed after {after:?}, before its deadline");
    }
    gateway.stop();
    host.stop();
}

/// The gateway's largest request head: `MAX_REQUEST_HEAD` in
/// client/src/cli/web/bounds.rs.
const MAX_REQUEST_HEAD: usize = 32 * 1024;

#[test]
fn the_largest_request_head_is_read_and_a_longer_one_is_refused() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let gateway = Gateway::start(&cli);
    // A token request whose head is `len` bytes long, padded by one header.
    let head_of = |len: usize| {
        let start = format!(
            "GET /api/panes HTTP/1.1\r\nHost: {}\r\nAuthorization: Bearer {}\r\nConnection: close\r\nX-Padding: ",
            gateway.address, gateway.token
        );
        let mut head = start.into_bytes();
        head.resize(len - 4, b'p');
        head.extend(b"\r\n\r\n");
        head
    };
    for (len, fits) in [(MAX_REQUEST_HEAD - 1, true), (MAX_REQUEST_HEAD, true), (MAX_REQUEST_HEAD + 1, false)] {
        let mut stream = gateway.connect_from(Ipv4Addr::LOCALHOST);
        let _ = stream.write_all(&head_of(len));
        let answer = read_answer(&mut stream);
        if fits {
            assert_lists_panes(&answer.unwrap_or_else(|error| panic!("a head of {len} bytes: {error}")));
        } else {
            match answer {
                Ok(answer) => assert_eq!(answer.status, 431, "a head of {len} bytes: {answer:?}"),
                Err(error) => assert!(
                    matches!(error.kind(), std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::UnexpectedEof),
                    "a head of {len} bytes is neither answered 431 nor closed: {error}"
                ),
            }
            assert!(closed_within(&stream, WAIT), "a head of {len} bytes leaves the connection open");
        }
    }
    gateway.stop();
    host.stop();
}

#[test]
fn an_answer_the_client_stops_reading_is_dropped_after_the_idle_timeout() {
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let gateway = Gateway::start(&cli);
    let stream = gateway.connect_from(Ipv4Addr::LOCALHOST);
    // Pipelined requests for the page, far more answer than the sockets
    // buffer, none of it read.
    let request = format!("GET / HTTP/1.1\r\nHost: {}\r\n\r\n", gateway.address);
    let mut writer = stream.try_clone().unwrap();
    let started = Instant::now();
    let requests = request.repeat(50_000);
    let write = std::thread::spawn(move || writer.write_all(requests.as_bytes()));
    assert!(
        closed_within(&stream, IDLE_TIMEOUT + WAIT),
        "a stalled answer is still held after {:?}",
        started.elapsed()
    );
    let after = started.elapsed();
    eprintln!("a stalled answer was dropped after {after:?}");
    assert!(after >= HEADER_READ_TIMEOUT, "dropped after {after:?}, sooner than any timeout");
    // The writer ends once the gateway has closed (or has read everything).
    let _ = write.join().unwrap();
    let (answer, _) = gateway.list_panes_from(Ipv4Addr::LOCALHOST);
    assert_lists_panes(&answer);
    gateway.stop();
    host.stop();
}

// ---------------------------------------------------------------------------
// 4. A WebSocket is exempt from both timeouts
// ---------------------------------------------------------------------------

#[test]
fn an_attached_terminal_outlives_every_timeout() {
    use tungstenite::client::IntoClientRequest as _;
    use tungstenite::Message;
    let host = TestHost::start();
    let cli = Cli::for_host(&host);
    let gateway = Gateway::start(&cli);
    let pane = cli.ok(&["start", "shell"]).trim().to_owned();

    let mut request = format!("ws://{}/ws?pane={pane}", gateway.address).into_client_request().unwrap();
    let headers = request.headers_mut();
    headers.insert("Origin", format!("http://{}", gateway.address).parse().unwrap());
    headers.insert("Sec-WebSocket-Protocol", format!("panehost, panehost.token.{}", gateway.token).parse().unwrap());
    let stream = gateway.connect_from(Ipv4Addr::LOCALHOST);
    let (mut socket, response) = tungstenite::client::client(request, stream.try_clone().unwrap()).unwrap();
    assert_eq!(response.status().as_u16(), 101);
    stream.set_read_timeout(Some(Duration::from_millis(500))).unwrap();

    assert!(read_messages(&mut socket, Instant::now() + WAIT, |value| value.get("start").is_some()), "no start");
    // Quiet for longer than the keep-alive and the idle timeouts together.
    let quiet = Instant::now();
    read_messages(&mut socket, quiet + HEADER_READ_TIMEOUT + IDLE_TIMEOUT + Duration::from_secs(2), |_| false);
    assert!(is_open(&stream), "the terminal is closed after {:?} of quiet", quiet.elapsed());

    let input = base64::engine::general_purpose::STANDARD.encode("echo ws-$((6*7))\r");
    socket.send(Message::text(serde_json::json!({ "input": input }).to_string())).unwrap();
    let mut output = Vec::new();
    let typed = read_messages(&mut socket, Instant::now() + WAIT, |value| {
        if let Some(data) = value["event"]["output"]["data"].as_str() {
            output.extend(base64::engine::general_purpose::STANDARD.decode(data).unwrap());
        }
        String::from_utf8_lossy(&output).contains("ws-42")
    });
    assert!(typed, "no ws-42 after {:?} of quiet; output: {:?}", quiet.elapsed(), String::from_utf8_lossy(&output));
    eprintln!("the terminal answered after {:?} of quiet", quiet.elapsed());
    drop(socket);
    cli.ok(&["close", &pane]);
    gateway.stop();
    host.stop();
}
