//! What the keeper tests share: a keeper process driven as the host drives
//! it, connections to its panes, and reading with timeouts.

#![allow(dead_code)]

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
use rustix::process::{Pid, Signal};
use std::ffi::{OsStr, OsString};
use std::io::{IoSliceMut, Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::DirBuilderExt;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The executable a keeper is: `panehost`, run under the keeper's name.
pub const KEEPER: &str = env!("CARGO_BIN_EXE_panehost");
/// The name a keeper is run under.
pub const KEEPER_NAME: &str = "panehost-keeper";
/// How long any one expected event may take.
pub const TIMEOUT: Duration = Duration::from_secs(10);
/// Set for the re-executed test binary that plays a foreign user.
pub const FOREIGN_SOCKET_VAR: &str = "PANEHOST_KEEPER_TEST_FOREIGN_SOCKET";
pub const FOREIGN_REFUSED: &str = "foreign-peer-refused";

/// A private directory for one test's socket (and fifos), removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new() -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let path = std::env::temp_dir().join(format!("panehost-keeper-test-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::DirBuilder::new().mode(0o700).create(&path).expect("create the socket directory");
        Self(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A keeper process as its host drives it: pane requests on its stdin,
/// answers on its stdout. Ended by pid on drop if the test did not end it,
/// with the process groups of the panes the test has not seen exit.
pub struct KeeperProcess {
    pub process: Child,
    /// The keeper's pid.
    pub pid: i32,
    requests: Option<ChildStdin>,
    answers: ChildStdout,
    /// Children still to end on drop (their pids are their group ids).
    pub children: Vec<i32>,
    pub dir: TempDir,
}

impl KeeperProcess {
    /// Starts a keeper whose sockets go in `dir`; `adjust` may change the
    /// command (the host's own launch differs from the test's).
    pub fn start_in(dir: TempDir, adjust: impl FnOnce(&mut Command)) -> Self {
        let mut command = Command::new(KEEPER);
        command
            .arg0(KEEPER_NAME)
            .arg("--sockets")
            .arg(&dir.0)
            .env_clear()
            // The keeper's own environment must not reach its panes.
            .env("KEEPER_ONLY", "1")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        adjust(&mut command);
        let mut process = command.spawn().expect("spawn the keeper");
        let pid = i32::try_from(process.id()).unwrap();
        let requests = process.stdin.take();
        let answers = process.stdout.take().unwrap();
        Self { process, pid, requests, answers, children: Vec::new(), dir }
    }

    pub fn start() -> Self {
        Self::start_in(TempDir::new(), |_| {})
    }

    /// The socket path of the pane named `name`.
    pub fn socket(&self, name: &str) -> PathBuf {
        self.dir.0.join(format!("{name}.sock"))
    }

    /// Sends the pane request made of `words` and returns the answer line.
    pub fn request(&mut self, words: &[&OsStr]) -> String {
        self.send_raw(&frame(words));
        self.answer()
    }

    /// Writes bytes to the keeper's stdin as they are.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.requests.as_mut().expect("stdin still open").write_all(bytes).expect("write a pane request");
    }

    /// The next answer line.
    pub fn answer(&mut self) -> String {
        read_line_from(&mut self.answers)
    }

    /// The words of a request for a pane named `name` running `argv`
    /// with a small environment of its own (`PATH`, `TERM`, `PANE_ONLY=1`).
    pub fn pane_words(&self, name: &str, cols: u16, rows: u16, argv: &[&str]) -> Vec<OsString> {
        let mut words: Vec<OsString> = vec!["--socket".into(), self.socket(name).into()];
        for (option, value) in [("--cols", cols.to_string()), ("--rows", rows.to_string()), ("--cwd", "/".into())] {
            words.extend([option.into(), value.into()]);
        }
        for variable in ["PATH=/usr/local/bin:/usr/bin:/bin", "TERM=xterm-256color", "PANE_ONLY=1"] {
            words.extend(["--env".into(), variable.into()]);
        }
        words.push("--".into());
        words.extend(argv.iter().map(OsString::from));
        words
    }

    /// Asks for a pane (see [`KeeperProcess::pane_words`]); returns the
    /// answer.
    pub fn request_pane(&mut self, name: &str, cols: u16, rows: u16, argv: &[&str]) -> String {
        let words = self.pane_words(name, cols, rows, argv);
        self.request(&words.iter().map(OsString::as_os_str).collect::<Vec<_>>())
    }

    /// Starts a pane and returns its child's pid; panics unless `ready`.
    pub fn add_pane(&mut self, name: &str, cols: u16, rows: u16, argv: &[&str]) -> i32 {
        let answer = self.request_pane(name, cols, rows, argv);
        let Some(child_pid) = answer.strip_prefix("ready ") else {
            panic!("expected `ready PID`, got {answer:?}");
        };
        let child_pid = child_pid.parse().expect("a pid after ready");
        self.children.push(child_pid);
        child_pid
    }

    /// Closes the keeper's stdin: it takes no more panes.
    pub fn close_requests(&mut self) {
        self.requests = None;
    }

    /// The test saw this child exit: its group id is no longer the test's
    /// to signal.
    pub fn child_exited(&mut self, child_pid: i32) {
        self.children.retain(|&pid| pid != child_pid);
    }

    /// Signals a pane's process group, expects `exited` (the rest of the
    /// line) on the pane's `connection`, and releases the pane.
    pub fn end_pane(&mut self, child: i32, signal: Signal, connection: &mut Connection, exited: &str) {
        rustix::process::kill_process_group(pid(child), signal).expect("signal the pane's process group");
        assert_eq!(connection.read_line(), format!("exited {exited}"));
        self.child_exited(child);
        connection.send("release\n");
    }

    /// Waits (with the timeout) for the keeper to exit and reaps it.
    pub fn wait_exit(&mut self) -> ExitStatus {
        let pidfd = rustix::process::pidfd_open(pid(self.pid), rustix::process::PidfdFlags::empty()).unwrap();
        assert!(wait_readable(pidfd.as_fd(), Instant::now() + TIMEOUT), "the keeper did not exit");
        self.process.wait().unwrap()
    }

    /// Whether the keeper is still running.
    pub fn is_running(&mut self) -> bool {
        matches!(self.process.try_wait(), Ok(None))
    }
}

impl Drop for KeeperProcess {
    fn drop(&mut self) {
        for &child in &self.children {
            let _ = rustix::process::kill_process_group(pid(child), Signal::KILL);
        }
        if self.is_running() {
            end_process(&mut self.process);
        }
    }
}

/// A pane request as the keeper reads it: the length, then each word
/// ended by a NUL.
pub fn frame(words: &[impl AsRef<OsStr>]) -> Vec<u8> {
    let mut body = Vec::new();
    for word in words {
        body.extend_from_slice(word.as_ref().as_bytes());
        body.push(0);
    }
    [&u32::try_from(body.len()).unwrap().to_be_bytes()[..], &body].concat()
}

/// A keeper holding one pane, its stdin closed: it exits when the pane is
/// released.
pub struct Keeper {
    pub process: KeeperProcess,
    /// The keeper's pid.
    pub pid: i32,
    /// The pane child's pid, which is its process group id.
    pub child_pid: i32,
    pub socket: PathBuf,
}

impl Keeper {
    pub fn start(cols: u16, rows: u16, argv: &[&str]) -> Self {
        Self::start_in(TempDir::new(), cols, rows, argv, |_| {})
    }

    /// Starts a keeper with its sockets in `dir` and one pane; `adjust` may
    /// change the keeper's command.
    pub fn start_in(dir: TempDir, cols: u16, rows: u16, argv: &[&str], adjust: impl FnOnce(&mut Command)) -> Self {
        let mut process = KeeperProcess::start_in(dir, adjust);
        let child_pid = process.add_pane("pane", cols, rows, argv);
        process.close_requests();
        let (pid, socket) = (process.pid, process.socket("pane"));
        Self { process, pid, child_pid, socket }
    }

    pub fn connect(&self) -> Connection {
        connect(&self.socket)
    }

    /// Connects and checks the greeting; returns the connection and the
    /// master fd that came with it.
    pub fn connect_expecting(&self, greeting: &str) -> (Connection, OwnedFd) {
        connect_expecting(&self.socket, greeting)
    }

    /// Connects while another connection is open: the keeper closes it at
    /// once, without a greeting.
    pub fn connect_refused(&self) {
        let mut refused = connect(&self.socket);
        refused.expect_closed();
    }

    /// The test saw the pane's child exit.
    pub fn child_exited(&mut self) {
        self.process.child_exited(self.child_pid);
    }

    pub fn wait_exit(&mut self) -> ExitStatus {
        self.process.wait_exit()
    }

    /// [`KeeperProcess::end_pane`] for the keeper's one pane.
    pub fn end_pane(&mut self, signal: Signal, connection: &mut Connection, exited: &str) {
        self.process.end_pane(self.child_pid, signal, connection, exited);
    }

    pub fn signal_child_group(&self, signal: Signal) {
        rustix::process::kill_process_group(pid(self.child_pid), signal).expect("signal the pane's process group");
    }
}

/// Connects to a pane's socket.
pub fn connect(socket: &Path) -> Connection {
    let stream = UnixStream::connect(socket).expect("connect to the keeper");
    Connection { stream, pending: Vec::new(), fds: Vec::new() }
}

/// Connects and checks the greeting; returns the connection and the master
/// fd that came with it.
pub fn connect_expecting(socket: &Path, greeting: &str) -> (Connection, OwnedFd) {
    let mut connection = connect(socket);
    assert_eq!(connection.read_line(), greeting);
    let master = connection.take_fd();
    (connection, master)
}

/// Connects to the pane of a child that exits on its own with `exit` (the
/// code and signal fields): the greeting says it runs and the `exited` line
/// follows, or, if it was quicker, the greeting says it exited. Returns the
/// connection and the master fd.
pub fn connect_expecting_exit(socket: &Path, child: i32, exit: &str) -> (Connection, OwnedFd) {
    let mut connection = connect(socket);
    let greeting = connection.read_line();
    let master = connection.take_fd();
    if greeting == format!("pane {child} running") {
        assert_eq!(connection.read_line(), format!("exited {exit}"));
    } else {
        assert_eq!(greeting, format!("pane {child} exited {exit}"));
    }
    (connection, master)
}

/// Kills a process the test started, by its pid, and reaps it.
pub fn end_process(process: &mut Child) {
    let _ = rustix::process::kill_process(pid(i32::try_from(process.id()).unwrap()), Signal::KILL);
    let _ = process.wait();
}

pub fn pid(raw: i32) -> Pid {
    Pid::from_raw(raw).expect("a positive pid")
}

/// Polls `fd` for input until `deadline`; `false` on timeout.
pub fn wait_readable(fd: BorrowedFd<'_>, deadline: Instant) -> bool {
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        let timeout = Timespec { tv_sec: left.as_secs().try_into().unwrap(), tv_nsec: left.subsec_nanos().into() };
        let mut fds = [PollFd::from_borrowed_fd(fd, PollFlags::IN)];
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(0) | Err(rustix::io::Errno::INTR) => {}
            Ok(_) => return true,
            Err(error) => panic!("poll: {error}"),
        }
    }
}

/// Reads one line (without its newline) from a pipe, with the timeout.
pub fn read_line_from(pipe: &mut (impl Read + AsFd)) -> String {
    let deadline = Instant::now() + TIMEOUT;
    let mut line = Vec::new();
    let mut byte = [0_u8; 1];
    while !line.ends_with(b"\n") {
        assert!(wait_readable(pipe.as_fd(), deadline), "no line within {TIMEOUT:?}; got {line:?}");
        match pipe.read(&mut byte).unwrap() {
            0 => break,
            _ => line.push(byte[0]),
        }
    }
    String::from_utf8(line).unwrap().trim_end_matches('\n').to_owned()
}

/// Reads the master until its output contains `needle`; returns the output.
pub fn read_until(master: &OwnedFd, needle: &str) -> String {
    let deadline = Instant::now() + TIMEOUT;
    let mut output = Vec::new();
    let mut buffer = [0_u8; 4096];
    while !String::from_utf8_lossy(&output).contains(needle) {
        let text = String::from_utf8_lossy(&output).into_owned();
        assert!(wait_readable(master.as_fd(), deadline), "no {needle:?} within {TIMEOUT:?}; got {text:?}");
        match rustix::io::read(master, &mut buffer) {
            Ok(0) | Err(rustix::io::Errno::IO) => {
                panic!("the PTY ended before {needle:?}; got {text:?}")
            }
            Ok(read) => output.extend_from_slice(&buffer[..read]),
            Err(rustix::io::Errno::INTR | rustix::io::Errno::AGAIN) => {}
            Err(error) => panic!("reading the master: {error}"),
        }
    }
    String::from_utf8_lossy(&output).into_owned()
}

pub fn write_all(fd: &OwnedFd, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        let written = rustix::io::write(fd, bytes).expect("write");
        bytes = &bytes[written..];
    }
}

/// One connection to a keeper: lines in, with any fds that came along.
pub struct Connection {
    pub stream: UnixStream,
    pub pending: Vec<u8>,
    pub fds: Vec<OwnedFd>,
}

impl Connection {
    /// Receives into `pending`; `false` at end of stream.
    pub fn receive(&mut self, deadline: Instant) -> bool {
        assert!(wait_readable(self.stream.as_fd(), deadline), "nothing from the keeper within {TIMEOUT:?}");
        let mut buffer = [0_u8; 256];
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
        let mut control = RecvAncillaryBuffer::new(&mut space);
        let received = match rustix::net::recvmsg(
            &self.stream,
            &mut [IoSliceMut::new(&mut buffer)],
            &mut control,
            RecvFlags::CMSG_CLOEXEC,
        ) {
            Ok(received) => received,
            // A peer that closes with our data unread resets the connection:
            // for a reader, that is the end of the stream too.
            Err(rustix::io::Errno::CONNRESET) => return false,
            Err(err) => panic!("recvmsg: {err}"),
        };
        for message in control.drain() {
            if let RecvAncillaryMessage::ScmRights(fds) = message {
                self.fds.extend(fds);
            }
        }
        self.pending.extend_from_slice(&buffer[..received.bytes]);
        received.bytes > 0
    }

    pub fn read_line(&mut self) -> String {
        let deadline = Instant::now() + TIMEOUT;
        loop {
            if let Some(end) = self.pending.iter().position(|&byte| byte == b'\n') {
                let line: Vec<u8> = self.pending.drain(..=end).collect();
                return String::from_utf8(line).unwrap().trim_end_matches('\n').to_owned();
            }
            let pending = String::from_utf8_lossy(&self.pending).into_owned();
            assert!(self.receive(deadline), "the keeper closed the connection; pending {pending:?}");
        }
    }

    pub fn take_fd(&mut self) -> OwnedFd {
        assert_eq!(self.fds.len(), 1, "expected exactly one fd with the greeting");
        self.fds.pop().unwrap()
    }

    /// Expects the keeper to close the connection without sending anything.
    pub fn expect_closed(&mut self) {
        let deadline = Instant::now() + TIMEOUT;
        while self.receive(deadline) {}
        assert!(self.pending.is_empty(), "unexpected data {:?}", String::from_utf8_lossy(&self.pending));
        assert!(self.fds.is_empty(), "unexpected fds");
    }

    pub fn send(&mut self, line: &str) {
        self.stream.write_all(line.as_bytes()).expect("send to the keeper");
    }
}

/// Process group and session of a process, from `/proc/PID/stat`.
pub fn group_and_session(pid: i32) -> (i32, i32) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name: state, ppid, pgrp, session, ...
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    (fields[2].parse().unwrap(), fields[3].parse().unwrap())
}
