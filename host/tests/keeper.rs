//! The pane keeper, driven as the host drives it: start it, read `ready`,
//! connect, take the master fd, watch the exit, release.

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::fs::{FileType, Mode, OFlags};
use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
use rustix::process::{Pid, Signal};
use std::io::{IoSliceMut, Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

const KEEPER: &str = env!("CARGO_BIN_EXE_panehost-keeper");
/// How long any one expected event may take.
const TIMEOUT: Duration = Duration::from_secs(10);
/// Set for the re-executed test binary that plays a foreign user.
const FOREIGN_SOCKET_VAR: &str = "PANEHOST_KEEPER_TEST_FOREIGN_SOCKET";
const FOREIGN_REFUSED: &str = "foreign-peer-refused";

/// A private directory for one test's socket (and fifos), removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
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

/// A running keeper, ended by pid on drop if the test did not end it.
struct Keeper {
    process: Child,
    /// The keeper's pid.
    pid: i32,
    /// The pane child's pid, which is its process group id.
    child_pid: i32,
    socket: PathBuf,
    /// Set once the test has seen the child exit: its group id is then no
    /// longer the test's to signal.
    child_exited: bool,
    dir: TempDir,
}

impl Keeper {
    fn start(cols: u16, rows: u16, argv: &[&str]) -> Self {
        Self::start_in(TempDir::new(), cols, rows, argv, |_| {})
    }

    /// Starts a keeper with its socket in `dir`; `adjust` may change the
    /// command (the host starts it in a process group of its own).
    fn start_in(dir: TempDir, cols: u16, rows: u16, argv: &[&str], adjust: impl FnOnce(&mut Command)) -> Self {
        let socket = dir.0.join("pane.sock");
        let mut command = keeper_command(&socket, cols, rows, argv);
        adjust(&mut command);
        let mut process = command.spawn().expect("spawn the keeper");
        let pid = i32::try_from(process.id()).unwrap();
        let mut stdout = process.stdout.take().unwrap();
        let line = read_line_from(&mut stdout);
        let Some(child_pid) = line.strip_prefix("ready ") else {
            end_process(&mut process);
            panic!("expected `ready PID`, got {line:?}");
        };
        let child_pid = child_pid.parse().expect("a pid after ready");
        Self { process, pid, child_pid, socket, child_exited: false, dir }
    }

    fn connect(&self) -> Connection {
        let stream = UnixStream::connect(&self.socket).expect("connect to the keeper");
        Connection { stream, pending: Vec::new(), fds: Vec::new() }
    }

    /// Connects and checks the greeting; returns the connection and the
    /// master fd that came with it.
    fn connect_expecting(&self, greeting: &str) -> (Connection, OwnedFd) {
        let mut connection = self.connect();
        assert_eq!(connection.read_line(), greeting);
        let master = connection.take_fd();
        (connection, master)
    }

    /// Waits (with the timeout) for the keeper to exit and reaps it.
    fn wait_exit(&mut self) -> ExitStatus {
        let pidfd = rustix::process::pidfd_open(pid(self.pid), rustix::process::PidfdFlags::empty()).unwrap();
        assert!(wait_readable(pidfd.as_fd(), Instant::now() + TIMEOUT), "the keeper did not exit");
        self.process.wait().unwrap()
    }

    fn signal_child_group(&self, signal: Signal) {
        rustix::process::kill_process_group(pid(self.child_pid), signal).expect("signal the pane's process group");
    }
}

impl Drop for Keeper {
    fn drop(&mut self) {
        if matches!(self.process.try_wait(), Ok(None)) {
            if !self.child_exited {
                let _ = rustix::process::kill_process_group(pid(self.child_pid), Signal::KILL);
            }
            end_process(&mut self.process);
        }
    }
}

fn keeper_command(socket: &Path, cols: u16, rows: u16, argv: &[&str]) -> Command {
    let mut command = Command::new(KEEPER);
    command
        .arg("--socket")
        .arg(socket)
        .args(["--cols", &cols.to_string(), "--rows", &rows.to_string(), "--cwd", "/", "--"])
        .args(argv)
        .env_clear()
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env("TERM", "xterm-256color")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit());
    command
}

/// Kills a process the test started, by its pid, and reaps it.
fn end_process(process: &mut Child) {
    let _ = rustix::process::kill_process(pid(i32::try_from(process.id()).unwrap()), Signal::KILL);
    let _ = process.wait();
}

fn pid(raw: i32) -> Pid {
    Pid::from_raw(raw).expect("a positive pid")
}

/// Polls `fd` for input until `deadline`; `false` on timeout.
fn wait_readable(fd: BorrowedFd<'_>, deadline: Instant) -> bool {
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
fn read_line_from(pipe: &mut (impl Read + AsFd)) -> String {
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
fn read_until(master: &OwnedFd, needle: &str) -> String {
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

fn write_all(fd: &OwnedFd, mut bytes: &[u8]) {
    while !bytes.is_empty() {
        let written = rustix::io::write(fd, bytes).expect("write");
        bytes = &bytes[written..];
    }
}

/// One connection to a keeper: lines in, with any fds that came along.
struct Connection {
    stream: UnixStream,
    pending: Vec<u8>,
    fds: Vec<OwnedFd>,
}

impl Connection {
    /// Receives into `pending`; `false` at end of stream.
    fn receive(&mut self, deadline: Instant) -> bool {
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

    fn read_line(&mut self) -> String {
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

    fn take_fd(&mut self) -> OwnedFd {
        assert_eq!(self.fds.len(), 1, "expected exactly one fd with the greeting");
        self.fds.pop().unwrap()
    }

    /// Expects the keeper to close the connection without sending anything.
    fn expect_closed(&mut self) {
        let deadline = Instant::now() + TIMEOUT;
        while self.receive(deadline) {}
        assert!(self.pending.is_empty(), "unexpected data {:?}", String::from_utf8_lossy(&self.pending));
        assert!(self.fds.is_empty(), "unexpected fds");
    }

    fn send(&mut self, line: &str) {
        self.stream.write_all(line.as_bytes()).expect("send to the keeper");
    }
}

/// Process group and session of a process, from `/proc/PID/stat`.
fn group_and_session(pid: i32) -> (i32, i32) {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name: state, ppid, pgrp, session, ...
    let fields: Vec<&str> = stat[stat.rfind(')').unwrap() + 2..].split(' ').collect();
    (fields[2].parse().unwrap(), fields[3].parse().unwrap())
}

#[test]
fn hands_over_the_master_reports_the_exit_and_ends_on_release() {
    let mut keeper = Keeper::start(80, 24, &["/bin/sh", "-c", "echo hello; read line; echo got:$line; exit 7"]);
    let child = keeper.child_pid;
    assert_eq!(group_and_session(keeper.pid).1, keeper.pid, "the keeper leads its own session");
    assert_eq!(group_and_session(child), (child, child), "the child leads its own session and group");
    let mode = std::fs::metadata(&keeper.socket).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600);

    let (mut connection, master) = keeper.connect_expecting(&format!("pane {child} running"));
    read_until(&master, "hello");
    write_all(&master, b"abc\n");
    read_until(&master, "got:abc");
    assert_eq!(connection.read_line(), "exited 7 -");
    keeper.child_exited = true;
    drop(master);
    drop(connection);

    // A host that comes back later still learns the exit, and gets the fd.
    let (mut connection, _master) = keeper.connect_expecting(&format!("pane {child} exited 7 -"));
    connection.send("release\n");
    let status = keeper.wait_exit();
    assert_eq!(status.code(), Some(0));
    assert!(!keeper.socket.exists(), "release removes the socket file");
}

#[test]
fn survives_hangup_and_interrupt_ignores_early_release_and_reports_a_signal() {
    let mut keeper = Keeper::start(80, 24, &["sleep", "1000"]);
    let child = keeper.child_pid;
    rustix::process::kill_process(pid(keeper.pid), Signal::HUP).unwrap();
    rustix::process::kill_process(pid(keeper.pid), Signal::INT).unwrap();

    let (mut first, _first_master) = keeper.connect_expecting(&format!("pane {child} running"));
    first.send("release\n");
    // The release is read before the next connection is accepted; while the
    // child runs it changes nothing. The new connection replaces the old.
    let (mut second, _second_master) = keeper.connect_expecting(&format!("pane {child} running"));
    first.expect_closed();

    keeper.signal_child_group(Signal::TERM);
    assert_eq!(second.read_line(), "exited 143 SIGTERM");
    keeper.child_exited = true;

    let (mut third, _third_master) = keeper.connect_expecting(&format!("pane {child} exited 143 SIGTERM"));
    second.expect_closed();
    third.send("release\n");
    assert_eq!(keeper.wait_exit().code(), Some(0));
}

#[test]
fn reports_the_exit_exactly_once_per_connection() {
    let mut keeper = Keeper::start(80, 24, &["sleep", "1000"]);
    let child = keeper.child_pid;
    let (mut before, _before_master) = keeper.connect_expecting(&format!("pane {child} running"));
    keeper.signal_child_group(Signal::KILL);
    assert_eq!(before.read_line(), "exited 137 SIGKILL");
    keeper.child_exited = true;

    // A connection made after the exit has it in its greeting only; the
    // one it replaces got nothing more after its `exited` line.
    let (mut after, _after_master) = keeper.connect_expecting(&format!("pane {child} exited 137 SIGKILL"));
    before.expect_closed();
    // Other lines change nothing; `release` then ends the keeper, which
    // closes the connection without another `exited` line.
    after.send("hello\n");
    after.send("release\n");
    after.expect_closed();
    assert_eq!(keeper.wait_exit().code(), Some(0));
}

#[test]
fn ctrl_c_on_the_terminal_interrupts_the_child() {
    // The keeper ignores SIGINT; its child must not inherit that, and the PTY
    // must be its controlling terminal for ^C to reach it.
    let mut keeper = Keeper::start(80, 24, &["/bin/sh", "-c", "echo waiting; exec sleep 1000"]);
    let child = keeper.child_pid;
    let (mut connection, master) = keeper.connect_expecting(&format!("pane {child} running"));
    read_until(&master, "waiting");
    write_all(&master, b"\x03");
    assert_eq!(connection.read_line(), "exited 130 SIGINT");
    keeper.child_exited = true;
    connection.send("release\n");
    assert_eq!(keeper.wait_exit().code(), Some(0));
}

#[test]
fn output_written_while_no_host_is_connected_waits_in_the_pty() {
    let dir = TempDir::new();
    let input = dir.0.join("input.fifo");
    let written = dir.0.join("written.fifo");
    for fifo in [&input, &written] {
        rustix::fs::mknodat(rustix::fs::CWD, fifo, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
    }
    let script = r#"echo armed; read x < "$1"; echo late:$x; echo done > "$2"; exec sleep 1000"#;
    let (input_arg, written_arg) = (input.to_str().unwrap().to_owned(), written.to_str().unwrap().to_owned());
    let mut keeper = Keeper::start_in(dir, 80, 24, &["/bin/sh", "-c", script, "sh", &input_arg, &written_arg], |_| {});
    let child = keeper.child_pid;

    let (connection, master) = keeper.connect_expecting(&format!("pane {child} running"));
    read_until(&master, "armed");
    // The host goes away: only the keeper holds the master now.
    drop(master);
    drop(connection);

    // Opening a fifo read-write never blocks; it also keeps each fifo open
    // for the child's open at the other end.
    let flags = OFlags::RDWR | OFlags::CLOEXEC;
    let input_fd = rustix::fs::open(&input, flags, Mode::empty()).unwrap();
    let written_fd = rustix::fs::open(&written, flags | OFlags::NONBLOCK, Mode::empty()).unwrap();
    write_all(&input_fd, b"xyz\n");
    // The child says `done` only after writing `late:xyz` to the PTY.
    assert!(wait_readable(written_fd.as_fd(), Instant::now() + TIMEOUT), "the child did not write");

    let (mut connection, master) = keeper.connect_expecting(&format!("pane {child} running"));
    read_until(&master, "late:xyz");
    keeper.signal_child_group(Signal::KILL);
    assert_eq!(connection.read_line(), "exited 137 SIGKILL");
    keeper.child_exited = true;
    connection.send("release\n");
    assert_eq!(keeper.wait_exit().code(), Some(0));
}

#[test]
fn sets_the_window_size_when_started_as_a_process_group_leader() {
    // The host starts keepers in a process group of their own; setsid then
    // cannot succeed, and the keeper stays that group's leader.
    let mut keeper = Keeper::start_in(TempDir::new(), 100, 30, &["stty", "size"], |command| {
        command.process_group(0);
    });
    let child = keeper.child_pid;
    assert_eq!(group_and_session(keeper.pid).0, keeper.pid);

    let mut connection = keeper.connect();
    let greeting = connection.read_line();
    let master = connection.take_fd();
    if greeting == format!("pane {child} running") {
        assert_eq!(connection.read_line(), "exited 0 -");
    } else {
        assert_eq!(greeting, format!("pane {child} exited 0 -"));
    }
    keeper.child_exited = true;
    // What the child wrote stays readable after it exited.
    let output = read_until(&master, "\n");
    assert_eq!(output.trim(), "30 100");
    connection.send("release\n");
    assert_eq!(keeper.wait_exit().code(), Some(0));
}

#[test]
fn reports_start_up_failures_on_one_line() {
    let dir = TempDir::new();
    let socket = dir.0.join("pane.sock");
    let failures = [
        (keeper_command(&socket, 80, 24, &["/nonexistent/program"]), "error starting /nonexistent/program"),
        (keeper_command(&dir.0.join("missing/pane.sock"), 80, 24, &["sleep", "1000"]), "error listening on"),
        (keeper_command(&socket, 0, 24, &["sleep", "1000"]), "error --cols must be"),
    ];
    for (mut command, expected) in failures {
        let mut process = command.spawn().unwrap();
        let line = read_line_from(process.stdout.as_mut().unwrap());
        assert!(line.starts_with(expected), "{line:?}");
        let pidfd = rustix::process::pidfd_open(
            pid(i32::try_from(process.id()).unwrap()),
            rustix::process::PidfdFlags::empty(),
        )
        .unwrap();
        assert!(wait_readable(pidfd.as_fd(), Instant::now() + TIMEOUT), "the keeper did not exit");
        assert_eq!(process.wait().unwrap().code(), Some(1));
    }
    assert!(!socket.exists());
}

#[test]
fn closes_a_connection_from_another_user() {
    if !rustix::process::geteuid().is_root() {
        eprintln!("skipped: making a connection as another user needs root");
        return;
    }
    let keeper = Keeper::start(80, 24, &["sleep", "1000"]);
    // Loosen the file permissions so the other user can connect at all: the
    // peer check must hold even then.
    std::fs::set_permissions(&keeper.dir.0, std::fs::Permissions::from_mode(0o711)).unwrap();
    std::fs::set_permissions(&keeper.socket, std::fs::Permissions::from_mode(0o666)).unwrap();

    let mut helper = Command::new(std::env::current_exe().unwrap());
    helper
        .args(["--exact", "foreign_peer_helper", "--nocapture", "--test-threads=1"])
        .env_clear()
        .env(FOREIGN_SOCKET_VAR, &keeper.socket)
        .uid(65534)
        .gid(65534)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let helper = helper.spawn().expect("start the test binary as another user");
    let pidfd =
        rustix::process::pidfd_open(pid(i32::try_from(helper.id()).unwrap()), rustix::process::PidfdFlags::empty())
            .unwrap();
    // The helper's own reads time out after TIMEOUT.
    assert!(wait_readable(pidfd.as_fd(), Instant::now() + 2 * TIMEOUT), "the helper did not finish");
    let output = helper.wait_with_output().unwrap();
    let (stdout, stderr) = (String::from_utf8_lossy(&output.stdout), String::from_utf8_lossy(&output.stderr));
    assert!(
        output.status.success() && stdout.contains(FOREIGN_REFUSED),
        "helper: {}\n{stdout}\n{stderr}",
        output.status
    );

    // The owner is still served.
    let (_connection, _master) = keeper.connect_expecting(&format!("pane {} running", keeper.child_pid));
}

/// Not a test of its own: `closes_a_connection_from_another_user` runs
/// this test binary again as another user, with the socket in the
/// environment, and this is what that process does. Without the variable it
/// does nothing.
#[test]
fn foreign_peer_helper() {
    let Some(socket) = std::env::var_os(FOREIGN_SOCKET_VAR) else {
        return;
    };
    assert_ne!(rustix::process::geteuid().as_raw(), 0);
    let stream = UnixStream::connect(socket).expect("connect as another user");
    let mut connection = Connection { stream, pending: Vec::new(), fds: Vec::new() };
    connection.expect_closed();
    println!("{FOREIGN_REFUSED}");
}
