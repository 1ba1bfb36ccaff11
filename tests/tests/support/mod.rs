//! What every end-to-end test needs: a real host in a temp dir, and a
//! plain synchronous protocol connection to it.

#![allow(dead_code)]

pub mod bash;
pub mod command;

use panehost_ipc::{
    decode, encode, Encoding, ErrorBody, Event, HandshakeReply, Hello, Request, RequestFrame, Response, ServerMessage,
};
use std::collections::VecDeque;
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long any single wait in a test may take before it fails.
pub const WAIT: Duration = Duration::from_secs(20);

/// The directory cargo put the workspace's binaries in.
pub fn bin_dir() -> PathBuf {
    Path::new(env!("CARGO_BIN_EXE_panehost-fixture-agent")).parent().unwrap().to_path_buf()
}

/// The `panehost` binary under test.
pub fn panehost_bin() -> PathBuf {
    match std::env::var_os("PANEHOST_BIN") {
        Some(path) => PathBuf::from(path),
        None => {
            let path = bin_dir().join("panehost");
            assert!(
                path.exists(),
                "{} is missing: build the workspace's binaries first (cargo build --workspace)",
                path.display()
            );
            path
        }
    }
}

/// A host process of its own, in a temp dir, ended on drop.
pub struct TestHost {
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
    pub state_dir: PathBuf,
    pub home: PathBuf,
    /// The extra environment it was started with, for restarts too.
    extra_env: Vec<(String, String)>,
    /// The `panehost` it runs.
    program: PathBuf,
    child: Option<Child>,
}

impl TestHost {
    /// Starts `panehost host` and waits until it accepts connections.
    pub fn start() -> TestHost {
        TestHost::start_with_env(&[])
    }

    /// Like [`start`](Self::start), with extra environment for the host.
    pub fn start_with_env(extra_env: &[(&str, &str)]) -> TestHost {
        TestHost::start_program(&panehost_bin(), extra_env)
    }

    /// Like [`start_with_env`](Self::start_with_env), running `program`
    /// (a copy of `panehost`, with its keeper next to it).
    pub fn start_program(program: &Path, extra_env: &[(&str, &str)]) -> TestHost {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("run").join("host.sock");
        let state_dir = dir.path().join("state");
        let home = dir.path().join("home");
        std::fs::create_dir_all(&home).unwrap();
        let extra_env: Vec<(String, String)> =
            extra_env.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect();
        let program = program.to_path_buf();
        let child = spawn_host(&program, dir.path(), &socket, &state_dir, &home, &extra_env);
        let host = TestHost { dir, socket, state_dir, home, extra_env, program, child: Some(child) };
        host.wait_until_listening();
        host
    }

    /// Kills the host with SIGKILL (its panes' keepers live on) and waits
    /// until it is gone.
    pub fn kill_hard(&mut self) {
        let mut child = self.child.take().expect("a running host");
        child.kill().unwrap();
        child.wait().unwrap();
    }

    /// Kills the host with SIGKILL and starts the next one at once, without
    /// waiting for the killed one to be gone (as a supervisor that
    /// restarts it would); the killed one is reaped afterwards.
    pub fn kill_hard_and_restart_at_once(&mut self) {
        let mut killed = self.child.take().expect("a running host");
        let _ = Command::new("kill").arg("-KILL").arg(killed.id().to_string()).status();
        self.restart();
        killed.wait().unwrap();
    }

    /// Sends the host a signal (`-QUIT`, say) and waits for it to exit 0.
    pub fn signal_and_wait(&mut self, signal: &str) {
        let mut child = self.child.take().expect("a running host");
        let _ = Command::new("kill").arg(signal).arg(child.id().to_string()).status();
        let status = child.wait().unwrap();
        assert!(status.success(), "host exited with {status}");
    }

    /// Waits (within [`WAIT`]) for the host to exit on its own, say after
    /// `panehost stop`.
    pub fn wait_exited(&mut self) {
        let mut child = self.child.take().expect("a running host");
        let deadline = Instant::now() + WAIT;
        while child.try_wait().unwrap().is_none() {
            assert!(Instant::now() < deadline, "the host did not exit");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Starts a new host on the same socket and state directory, with the
    /// same environment.
    pub fn restart(&mut self) {
        assert!(self.child.is_none(), "stop or kill the host first");
        self.child = Some(spawn_host(
            &self.program,
            self.dir.path(),
            &self.socket,
            &self.state_dir,
            &self.home,
            &self.extra_env,
        ));
        self.wait_until_listening();
    }
}

fn spawn_host(
    program: &Path,
    dir: &Path,
    socket: &Path,
    state_dir: &Path,
    home: &Path,
    extra_env: &[(String, String)],
) -> Child {
    let log = std::fs::OpenOptions::new().create(true).append(true).open(dir.join("host.log")).unwrap();
    let path = format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir().display());
    Command::new(program)
        .arg("--socket")
        .arg(socket)
        .arg("--state-dir")
        .arg(state_dir)
        .arg("host")
        .env_clear()
        .env("PATH", path)
        .env("HOME", home)
        .env("SHELL", "/bin/sh")
        .env("LANG", "C.UTF-8")
        .env("PANEHOST_LOG", "debug")
        .envs(extra_env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(log)
        .spawn()
        .unwrap()
}

impl TestHost {
    fn wait_until_listening(&self) {
        let deadline = Instant::now() + WAIT;
        while UnixStream::connect(&self.socket).is_err() {
            assert!(Instant::now() < deadline, "host did not listen within {WAIT:?}; log:\n{}", self.log());
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// The host's log so far.
    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.path().join("host.log")).unwrap_or_default()
    }

    /// The host's pid.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().unwrap().id()
    }

    /// A new connection that has completed the handshake.
    pub fn connect(&self, encoding: Encoding) -> Connection {
        Connection::open(&self.socket, encoding)
    }

    /// Host memory (resident set), in KiB.
    pub fn rss_kib(&self) -> u64 {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid())).unwrap();
        let line = status.lines().find(|line| line.starts_with("VmRSS:")).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    }

    /// Sends SIGTERM and waits for a clean exit; fails on a crash.
    pub fn stop(mut self) -> String {
        let mut child = self.child.take().unwrap();
        terminate(&mut child);
        let status = child.wait().unwrap();
        let log = self.log();
        assert!(status.success(), "host exited with {status}; log:\n{log}");
        assert!(!log.contains("panicked"), "host panicked; log:\n{log}");
        log
    }
}

fn terminate(child: &mut Child) {
    let _ = Command::new("kill").arg("-TERM").arg(child.id().to_string()).status();
    let deadline = Instant::now() + WAIT;
    while Instant::now() < deadline {
        if child.try_wait().unwrap().is_some() {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    let _ = child.kill();
}

impl Drop for TestHost {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // What the host was doing when the test failed.
            let log = self.log();
            // Newest first: where a failure's output is shown cut short,
            // its last moments are what is left.
            let tail: Vec<&str> = log.lines().rev().take(80).collect();
            eprintln!("--- the last {} lines of the host's log, newest first ---", tail.len());
            for line in &tail {
                eprintln!("{line}");
            }
        }
        if let Some(mut child) = self.child.take() {
            terminate(&mut child);
            let _ = child.wait();
        }
    }
}

/// A synchronous protocol connection.
pub struct Connection {
    pub stream: UnixStream,
    pub encoding: Encoding,
    next_id: u64,
    pending_events: VecDeque<(u64, Event)>,
}

/// Writes one frame.
pub fn write_frame(stream: &mut UnixStream, payload: &[u8]) {
    stream.write_all(&(payload.len() as u32).to_be_bytes()).unwrap();
    stream.write_all(payload).unwrap();
}

/// Reads one frame; None at end of stream.
pub fn read_frame(stream: &mut UnixStream) -> Option<Vec<u8>> {
    let mut header = [0u8; 4];
    if stream.read_exact(&mut header).is_err() {
        return None;
    }
    let len = u32::from_be_bytes(header) as usize;
    assert!(len <= panehost_ipc::MAX_SERVER_FRAME_LEN, "host sent a {len}-byte frame");
    let mut payload = vec![0u8; len];
    stream.read_exact(&mut payload).ok()?;
    Some(payload)
}

impl Connection {
    /// Connects and completes the handshake.
    pub fn open(socket: &Path, encoding: Encoding) -> Connection {
        let mut stream = UnixStream::connect(socket).unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        let hello = Hello::new(encoding, "e2e");
        write_frame(&mut stream, &serde_json::to_vec(&hello).unwrap());
        let reply: HandshakeReply = serde_json::from_slice(&read_frame(&mut stream).unwrap()).unwrap();
        assert!(matches!(reply, HandshakeReply::Welcome(_)), "{reply:?}");
        Connection { stream, encoding, next_id: 1, pending_events: VecDeque::new() }
    }

    /// Sends a request; returns its id.
    pub fn send(&mut self, request: Request) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        let frame = encode(self.encoding, &RequestFrame { id, request }).unwrap();
        write_frame(&mut self.stream, &frame);
        id
    }

    /// The next server message: the events queued while waiting for an
    /// answer come first (they arrived first), then what the socket has.
    pub fn read(&mut self) -> ServerMessage {
        match self.pending_events.pop_front() {
            Some((subscription, event)) => ServerMessage::Event { subscription, event },
            None => self.receive(),
        }
    }

    /// Reads the next message from the socket.
    fn receive(&mut self) -> ServerMessage {
        let Some(frame) = read_frame(&mut self.stream) else {
            let mut probe = [0u8; 1];
            let _ = self.stream.set_nonblocking(true);
            let why = match std::io::Read::read(&mut self.stream, &mut probe) {
                Ok(0) => "the host closed the connection",
                _ => "no whole frame from the host within the wait",
            };
            let _ = self.stream.set_nonblocking(false);
            panic!("{why} ({WAIT:?})");
        };
        decode(self.encoding, &frame).unwrap()
    }

    /// Sends a request and waits for its answer, queueing events that
    /// arrive meanwhile.
    pub fn call(&mut self, request: Request) -> Result<Response, ErrorBody> {
        let id = self.send(request);
        loop {
            match self.receive() {
                ServerMessage::Response { id: answered, body } if answered == id => return Ok(body),
                ServerMessage::Error { id: Some(answered), error } if answered == id => return Err(error),
                ServerMessage::Event { subscription, event } => self.pending_events.push_back((subscription, event)),
                other => panic!("unexpected message while waiting for {id}: {other:?}"),
            }
        }
    }

    /// The next answer to any request, queueing events that arrive
    /// meanwhile: the request's id and its answer.
    pub fn next_answer(&mut self) -> (u64, Result<Response, ErrorBody>) {
        loop {
            match self.receive() {
                ServerMessage::Response { id, body } => return (id, Ok(body)),
                ServerMessage::Error { id: Some(id), error } => return (id, Err(error)),
                ServerMessage::Event { subscription, event } => self.pending_events.push_back((subscription, event)),
                other => panic!("unexpected message while waiting for an answer: {other:?}"),
            }
        }
    }

    /// Like [`call`](Self::call), failing the test on an error answer.
    pub fn ok(&mut self, request: Request) -> Response {
        self.call(request).unwrap_or_else(|err| panic!("request failed: {err}"))
    }

    /// The next event, from the queue or the socket.
    pub fn next_event(&mut self) -> (u64, Event) {
        if let Some(event) = self.pending_events.pop_front() {
            return event;
        }
        match self.receive() {
            ServerMessage::Event { subscription, event } => (subscription, event),
            other => panic!("expected an event, got {other:?}"),
        }
    }
}

/// Output of one subscription, checked to be contiguous as it arrives.
#[derive(Debug, Default)]
pub struct Transcript {
    pub bytes: Vec<u8>,
    /// Offset of `bytes[0]`.
    pub start: u64,
    pub events: Vec<Event>,
}

impl Transcript {
    /// A transcript that expects output from `start`.
    pub fn from(start: u64) -> Transcript {
        Transcript { start, ..Transcript::default() }
    }

    /// The offset one past the last byte received.
    pub fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }

    /// Records an event, checking output continuity.
    pub fn record(&mut self, event: Event) {
        match &event {
            Event::Output { offset, data } => {
                assert_eq!(*offset, self.end(), "output must continue exactly where it left off");
                self.bytes.extend_from_slice(data.as_slice());
            }
            Event::Resync { skipped_from, snapshot } => {
                assert_eq!(*skipped_from, self.end());
                self.start = snapshot.offset;
                self.bytes.clear();
            }
            _ => {}
        }
        self.events.push(event);
    }

    /// The output as text.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.bytes).into_owned()
    }
}

impl Connection {
    /// Reads events of `subscription` into `transcript` until `done` says so.
    pub fn follow_until(&mut self, subscription: u64, transcript: &mut Transcript, done: impl Fn(&Transcript) -> bool) {
        while !done(transcript) {
            let (id, event) = self.next_event();
            if id == subscription {
                transcript.record(event);
            }
        }
    }

    /// Reads until the output contains `needle`.
    /// Subscribes to `pane` from its first byte and follows it until
    /// `needle` has appeared; gives the subscription and what it saw.
    pub fn follow_from_start_until(&mut self, pane: &panehost_ipc::PaneId, needle: &str) -> (u64, Transcript) {
        let subscription = self.subscribe(pane, Some(0)).subscription;
        let mut transcript = Transcript::from(0);
        self.follow_until_text(subscription, &mut transcript, needle);
        (subscription, transcript)
    }

    pub fn follow_until_text(&mut self, subscription: u64, transcript: &mut Transcript, needle: &str) {
        self.follow_until(subscription, transcript, |t| t.text().contains(needle));
    }

    /// Reads until the subscription's `ended` event.
    pub fn follow_to_end(&mut self, subscription: u64, transcript: &mut Transcript) {
        self.follow_until(subscription, transcript, |t| matches!(t.events.last(), Some(Event::Ended { .. })));
    }

    /// Subscribes and returns the subscription and where it starts.
    pub fn subscribe(&mut self, pane: &panehost_ipc::PaneId, from: Option<u64>) -> panehost_ipc::Subscription {
        match self.ok(Request::Events { pane: pane.clone(), from }) {
            Response::Subscribed(subscription) => subscription,
            other => panic!("unexpected {other:?}"),
        }
    }

    /// Starts a pane and returns its summary.
    pub fn start(&mut self, params: panehost_ipc::StartParams) -> panehost_ipc::PaneSummary {
        match self.ok(Request::Start(params)) {
            Response::Started(summary) => summary,
            other => panic!("unexpected {other:?}"),
        }
    }

    /// Writes text as it is, without submitting a turn.
    pub fn type_raw(&mut self, pane: &panehost_ipc::PaneId, text: &str) {
        self.ok(Request::Send(panehost_ipc::SendParams {
            pane: pane.clone(),
            text: text.into(),
            ..Default::default()
        }));
    }

    /// Types a line into a pane (submitting it as a turn).
    pub fn type_line(&mut self, pane: &panehost_ipc::PaneId, line: &str) {
        self.ok(Request::Send(panehost_ipc::SendParams {
            pane: pane.clone(),
            text: line.into(),
            enter: true,
            ..Default::default()
        }));
    }
}

/// Start parameters for `runtime` with `command`.
pub fn start_params(runtime: &str, command: &[&str]) -> panehost_ipc::StartParams {
    panehost_ipc::StartParams {
        runtime: runtime.into(),
        command: command.iter().map(|arg| (*arg).to_owned()).collect(),
        ..Default::default()
    }
}

/// True while a process with this pid exists (a zombie counts as gone).
pub fn process_exists(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'),
        Err(_) => false,
    }
}

/// A directory of stand-in executables, to put first on a host's PATH.
pub struct FakeBin {
    pub dir: tempfile::TempDir,
}

impl FakeBin {
    pub fn new() -> FakeBin {
        FakeBin { dir: tempfile::tempdir().unwrap() }
    }

    /// An executable with exactly this text (a `#!` line first).
    pub fn program(&self, name: &str, text: &str) {
        use std::os::unix::fs::PermissionsExt;
        let path = self.dir.path().join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    /// A stand-in for an agent CLI: the program `text`, started with its
    /// terminal out of canonical mode, as every agent CLI reads its keys
    /// (the host waits for that before it submits). It still reads lines:
    /// the terminal turns the Enter into a newline.
    pub fn agent(&self, name: &str, text: &str) {
        use std::os::unix::fs::PermissionsExt;
        let inner = self.dir.path().join("stand-ins");
        std::fs::create_dir_all(&inner).unwrap();
        let path = inner.join(name);
        std::fs::write(&path, text).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        self.script(name, &format!("stty -icanon 2>/dev/null\nexec '{}' \"$@\"", path.display()));
    }

    /// A `/bin/sh` script with this body.
    pub fn script(&self, name: &str, body: &str) {
        self.program(name, &format!("#!/bin/sh\n{body}\n"));
    }

    /// A PATH with these programs first, then the workspace's binaries.
    pub fn path_env(&self) -> String {
        format!("{}:{}:/usr/local/bin:/usr/bin:/bin", self.dir.path().display(), bin_dir().display())
    }
}

/// Keeper processes of this host (by their socket under its state dir).
pub fn keeper_pids(host: &TestHost) -> Vec<u32> {
    let needle = host.state_dir.join("panes").join("keepers").display().to_string();
    std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|cmdline| String::from_utf8_lossy(&cmdline).contains(&needle))
                .unwrap_or(false)
        })
        .collect()
}

/// SIGKILL for the process of one of `host`'s panes, by pid, waiting until
/// it is gone. A pane's process that has ended already may have left its
/// pid to a process of another test (pids wrap at 32768 on many
/// machines): only a process that still holds this host's socket in its
/// environment, as every pane's process does, is ended.
#[allow(dead_code)]
pub fn kill_pane_process(host: &TestHost, pid: u32) {
    let needle = format!("PANEHOST_SOCKET={}", host.socket.display());
    let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
    if environ.split(|&byte| byte == 0).any(|entry| entry == needle.as_bytes()) {
        kill(pid);
    }
}

/// SIGKILL by pid, waiting until the process is gone. For a pid the test
/// found just now (as [`keeper_pids`] finds them); a pane's process that
/// may have ended goes through [`kill_pane_process`].
pub fn kill(pid: u32) {
    let _ = std::process::Command::new("kill").arg("-KILL").arg(pid.to_string()).status();
    let deadline = std::time::Instant::now() + WAIT;
    while process_exists(pid) {
        assert!(std::time::Instant::now() < deadline, "{pid} survived SIGKILL");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Waits until `pane` is quiet and its exact end is on disk (its end
/// marker says so and the host agrees); gives that end.
pub fn wait_until_settled(host: &TestHost, pane: &panehost_ipc::PaneId) -> u64 {
    let marker = host.state_dir.join("panes").join(format!("{pane}.end"));
    let deadline = Instant::now() + WAIT;
    loop {
        let exact = std::fs::read(&marker).ok().and_then(|bytes| match bytes.as_slice() {
            [b'E', end @ ..] => end.try_into().ok().map(u64::from_le_bytes),
            _ => None,
        });
        if let Some(exact) = exact {
            let Response::Panes { panes } =
                host.connect(Encoding::Json).ok(Request::List { labels: Default::default() })
            else {
                panic!()
            };
            if panes.iter().any(|summary| &summary.id == pane && summary.offset == exact) {
                return exact;
            }
        }
        assert!(Instant::now() < deadline, "{pane} never settled");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits until a program named `command` holds the terminal of process
/// `pid` (a shell's command is in the foreground).
#[allow(dead_code)]
pub fn wait_until_in_the_foreground(pid: u32, command: &str) {
    let deadline = Instant::now() + WAIT;
    loop {
        // Fields after the command name: state, ppid, pgrp, session,
        // tty_nr, tpgid (the terminal's foreground process group, which a
        // shell's job leads).
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let tpgid = stat.rsplit_once(')').and_then(|(_, rest)| rest.split_whitespace().nth(5).map(str::to_owned));
        let leader = tpgid.as_ref().and_then(|group| std::fs::read_to_string(format!("/proc/{group}/comm")).ok());
        if leader.as_deref().map(str::trim_end) == Some(command) {
            return;
        }
        assert!(Instant::now() < deadline, "{command} never held process {pid}'s terminal ({tpgid:?}: {leader:?})");
        std::thread::sleep(Duration::from_millis(10));
    }
}
