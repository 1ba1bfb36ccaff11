//! The host's side of the keeper processes that hold its panes.
//!
//! A keeper (`panehost-keeper`) holds the PTY masters and children of a
//! group of panes, so that they outlive the host. The host keeps keepers
//! open for new panes (a few at most, `keeper_intake.rs`: one per start
//! being made at the same moment): it asks for each pane on a keeper's
//! stdin and reads `ready <pid>` (or `error <message>`) on its stdout, with
//! no lock held. Once a keeper has been given its share of panes
//! (`PANEHOST_PANES_PER_KEEPER`), the host closes its stdin (the keeper
//! takes no more panes and exits when its last pane is released) and
//! starts another when a start finds no open keeper free.
//!
//! Each pane then has its own socket: the host connects and receives the
//! master fd with a status line; later the keeper reports `exited <code>
//! <signal|->` on that connection, and the host answers `release` once the
//! pane is forgotten. The contract is in the keeper's own documentation
//! (`host/src/keeper/mod.rs`).

use super::cgroups::PaneCgroups;
use super::keeper_intake::Intake;
use crate::keeper_wire::answer::{Answer, MAX_ANSWER_LINE};
use crate::keeper_wire::pane_lines::{parse_greeting, MAX_KEEPER_LINE};
use crate::keeper_wire::pane_request::PaneRequest;
use crate::limits;
use crate::limits::{KEEPERS_TAKING_PANES, KEEPER_ANSWER_TIMEOUT};
use crate::open_files;
use crate::store::private_dir::create_private_subdir;
use panehost_adapters::LaunchPlan;
use panehost_ipc::{ExitStatus, PaneId, Size};
use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
use rustix::process::{waitpid, Pid, WaitOptions};
use std::io::{self, IoSliceMut, Read, Write};
use std::mem::MaybeUninit;
use std::os::fd::AsFd;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{ChildStdin, ChildStdout, Command, Stdio};
use std::time::Instant;

/// The name a keeper is run under: the host's own executable, run with
/// this name, is a keeper.
pub(crate) const KEEPER_PROGRAM: &str = crate::keeper::KEEPER_NAME;

/// What a keeper hands over on connection, checked ([`Handover::new`]).
#[derive(Debug)]
pub(crate) struct Handover {
    /// The PTY master.
    pub master: OwnedFd,
    /// The child's pid (its process group id).
    pub pid: u32,
    /// The keeper's pid (its peer credentials on this connection): the
    /// parent the pane's orphans are adopted by.
    pub keeper_pid: u32,
    /// Set when the child had exited before this connection.
    pub exited: Option<ExitStatus>,
    /// The connection, for exit reports and `release`.
    pub control: UnixStream,
    /// Made by [`Handover::new`] alone, which checks it.
    _checked: (),
}

/// The keeper program: this host's own executable.
pub(crate) fn keeper_program() -> PathBuf {
    PathBuf::from("/proc/self/exe")
}

/// The keeper executable this host starts (its own), held open from the
/// host's start: an upgrade that replaces the file on disk before the host
/// is reloaded does not change the keeper this host runs, so a host and its
/// keepers always speak the same version of their protocol.
#[derive(Debug)]
struct KeeperExecutable {
    /// What to execute: the held file through `/proc/<host pid>/fd/<fd>`,
    /// or the program's path if it could not be opened.
    path: PathBuf,
    /// Keeps the file (and so its contents) for the host's life.
    _held: Option<std::fs::File>,
}

impl KeeperExecutable {
    fn open() -> Self {
        let program = keeper_program();
        match std::fs::File::open(&program) {
            Ok(file) => {
                use std::os::fd::AsRawFd;
                let path = PathBuf::from(format!("/proc/{}/fd/{}", std::process::id(), file.as_raw_fd()));
                Self { path, _held: Some(file) }
            }
            Err(err) => {
                let path = std::env::current_exe().unwrap_or(program);
                tracing::warn!(program = %path.display(), %err, "cannot hold the executable open; starting keepers by path");
                Self { path, _held: None }
            }
        }
    }
}

/// The keepers a host starts its panes in.
#[derive(Debug)]
pub struct Keepers {
    /// Where the panes' sockets live (private to the user).
    sockets: PathBuf,
    /// How many panes a keeper is given before the next one is started.
    panes_per_keeper: usize,
    /// The keeper program, as it was when the host started.
    executable: KeeperExecutable,
    /// Variables every pane gets from the host (`PANEHOST_SOCKET`).
    host_env: Vec<(String, String)>,
    /// Where each pane's own control group is made, if the host may.
    cgroups: Option<PaneCgroups>,
    /// The keepers that take new panes, and which start asks which.
    intake: Intake<OpenKeeper>,
}

/// A keeper that still takes panes: its stdin and stdout are the host's
/// (both non-blocking, so that no wait on a keeper is unbounded).
#[derive(Debug)]
struct OpenKeeper {
    pid: u32,
    requests: ChildStdin,
    answers: ChildStdout,
    /// What was read from `answers` past the last whole line.
    unread: Vec<u8>,
    panes_given: usize,
}

impl Keepers {
    /// Keepers whose panes' sockets go in `sockets`, each given at most
    /// `panes_per_keeper` panes (at least 1); every pane gets `host_env`
    /// after its plan's own environment; each starts in a control group of
    /// its own made in `cgroups`, if given.
    ///
    /// The keeper executable next to this one is opened here and held: it is
    /// the one every keeper of this host runs, whatever becomes of the file.
    pub fn new(
        sockets: PathBuf,
        panes_per_keeper: usize,
        host_env: Vec<(String, String)>,
        cgroups: Option<PaneCgroups>,
    ) -> Self {
        Self {
            sockets,
            panes_per_keeper: panes_per_keeper.max(1),
            executable: KeeperExecutable::open(),
            host_env,
            cgroups,
            intake: Intake::new(KEEPERS_TAKING_PANES),
        }
    }

    /// Makes the control group a pane's generation starts in, where the
    /// host may (see `cgroups.rs`).
    pub(crate) fn make_cgroup(&self, pane: &PaneId, generation: u64) -> Option<PathBuf> {
        self.cgroups.as_ref()?.make(pane, generation)
    }

    /// Removes the directory of the panes' control groups, once every pane
    /// is closed (when the host exits closing them).
    pub(crate) fn remove_cgroups(&self) {
        if let Some(cgroups) = &self.cgroups {
            cgroups.remove_all();
        }
    }

    /// The control group made for a pane's generation, if there is one (a
    /// pane taken back after a restart).
    pub(crate) fn existing_cgroup(&self, pane: &PaneId, generation: u64) -> Option<PathBuf> {
        self.cgroups.as_ref()?.existing(pane, generation)
    }

    /// Where the panes' sockets live.
    pub fn sockets_dir(&self) -> &Path {
        &self.sockets
    }

    /// Starts `plan` in a keeper, with `pane_env` and the host's variables
    /// added to its environment, listening on `socket` (a file in
    /// [`Keepers::sockets_dir`]), in the control group `cgroup` if given,
    /// and waits until it is ready. Blocking, with no lock held while the
    /// keeper is started or asked (a start waits only when every keeper
    /// that takes panes is being asked, see `keeper_intake.rs`); must run
    /// within a tokio runtime (a keeper it starts is reaped there).
    ///
    /// # Errors
    /// Fails when no keeper can be started, or the keeper reports an error
    /// (the program cannot be started, the socket cannot be bound).
    pub fn launch(
        &self,
        plan: &LaunchPlan,
        size: Size,
        pane_env: &[(String, String)],
        socket: &Path,
        cgroup: Option<&Path>,
    ) -> io::Result<()> {
        let request = PaneRequest {
            socket: socket.to_owned(),
            cols: size.cols,
            rows: size.rows,
            cwd: plan.cwd.clone(),
            cgroup: cgroup.map(Path::to_owned),
            env: plan
                .env
                .iter()
                .chain(pane_env)
                .chain(&self.host_env)
                .map(|(name, value)| (name.into(), value.into()))
                .collect(),
            program: plan.program.clone().into_os_string(),
            program_args: plan.args.iter().map(Into::into).collect(),
        }
        .encode()
        .map_err(|message| io::Error::new(io::ErrorKind::InvalidInput, message))?;
        // A keeper found gone (killed) or stuck is given up on once: the
        // second attempt takes another turn (another idle keeper, or a new
        // one), and its failure is reported. No lock is held while a
        // keeper starts or is asked: the turn is this start's alone.
        for attempt in 0..2 {
            let mut turn = self.intake.turn();
            let mut keeper = match turn.take_keeper() {
                Some(keeper) => keeper,
                None => OpenKeeper::start(&self.executable.path, &self.sockets)?,
            };
            match keeper.ask(&request) {
                Ok(Answer::Ready(_)) => {
                    keeper.panes_given += 1;
                    // A keeper not given back is dropped, which closes its
                    // stdin: it takes no more panes.
                    if keeper.panes_given < self.panes_per_keeper {
                        turn.give_back(keeper);
                    }
                    return Ok(());
                }
                Ok(Answer::Error(message)) => {
                    turn.give_back(keeper);
                    return Err(io::Error::other(format!("keeper failed: {message}")));
                }
                Err(error) => {
                    tracing::warn!(keeper = keeper.pid, %error, "the keeper stopped answering; starting another");
                    if attempt > 0 {
                        return Err(io::Error::other(format!("the keeper stopped answering: {error}")));
                    }
                }
            }
        }
        unreachable!("the loop returns on its second attempt")
    }
}

impl OpenKeeper {
    /// Starts `executable` as a keeper whose panes' sockets go in
    /// `sockets` (made private to the user first), and a task that reaps it
    /// when it exits.
    fn start(executable: &Path, sockets: &Path) -> io::Result<Self> {
        create_private_subdir(sockets)?;
        let mut command = Command::new(executable);
        command
            .arg0(KEEPER_PROGRAM)
            .arg("--sockets")
            .arg(sockets)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        // The keeper and the panes' programs keep the open-file limit the
        // host was started with, not the one it raised for itself.
        // SAFETY: restore_in_child only calls getrlimit and setrlimit.
        unsafe {
            command.pre_exec(open_files::restore_in_child);
        }
        // The keeper calls setsid() itself: its own session and process
        // group, so signals aimed at the host's group or terminal miss it.
        let mut keeper =
            command.spawn().map_err(|err| io::Error::new(err.kind(), format!("cannot start the keeper: {err}")))?;
        let pid = keeper.id();
        tokio::spawn(reap_keeper(pid));
        let (Some(requests), Some(answers)) = (keeper.stdin.take(), keeper.stdout.take()) else {
            return Err(io::Error::other("the keeper has no stdin or stdout"));
        };
        set_nonblocking(&requests)?;
        set_nonblocking(&answers)?;
        tracing::debug!(keeper = pid, "keeper started");
        // std neither kills nor waits for a child whose handle is dropped;
        // the task above reaps it.
        drop(keeper);
        Ok(Self { pid, requests, answers, unread: Vec::new(), panes_given: 0 })
    }

    /// Sends a pane request and reads the answer, within
    /// [`KEEPER_ANSWER_TIMEOUT`]. An error means the keeper cannot be
    /// talked to any more (it stopped, or it is stuck): the caller gives
    /// it no more panes.
    fn ask(&mut self, request: &[u8]) -> io::Result<Answer> {
        let deadline = Instant::now() + KEEPER_ANSWER_TIMEOUT;
        write_all_before(&mut self.requests, request, deadline)?;
        let line = read_line_before(&mut self.answers, &mut self.unread, deadline)?;
        Answer::parse(&line).map_err(io::Error::other)
    }
}

fn set_nonblocking(fd: &impl AsFd) -> io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(fd)?;
    rustix::fs::fcntl_setfl(fd, flags | rustix::fs::OFlags::NONBLOCK)?;
    Ok(())
}

/// Waits until `fd` is ready for `flags`, at most until `deadline`.
fn wait_ready(fd: &impl AsFd, flags: PollFlags, deadline: Instant, doing: &str) -> io::Result<()> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        return Err(io::Error::new(
            io::ErrorKind::TimedOut,
            format!("the keeper did not finish {doing} within {} s", KEEPER_ANSWER_TIMEOUT.as_secs()),
        ));
    }
    let timeout = Timespec { tv_sec: left.as_secs() as i64, tv_nsec: i64::from(left.subsec_nanos()) };
    let mut fds = [PollFd::new(fd, flags)];
    match rustix::event::poll(&mut fds, Some(&timeout)) {
        Ok(_) | Err(rustix::io::Errno::INTR) => Ok(()),
        Err(err) => Err(err.into()),
    }
}

/// Writes all of `bytes` to a non-blocking `writer` before `deadline`.
fn write_all_before(writer: &mut (impl Write + AsFd), mut bytes: &[u8], deadline: Instant) -> io::Result<()> {
    while !bytes.is_empty() {
        match writer.write(bytes) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::WriteZero, "the keeper's stdin is closed")),
            Ok(written) => bytes = &bytes[written..],
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                wait_ready(writer, PollFlags::OUT, deadline, "reading a pane request")?
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
    Ok(())
}

/// Reads one line (without its newline) from a non-blocking `reader`
/// before `deadline`; what follows the line stays in `unread`. A line
/// longer than [`MAX_ANSWER_LINE`] is an error.
fn read_line_before(reader: &mut (impl Read + AsFd), unread: &mut Vec<u8>, deadline: Instant) -> io::Result<Vec<u8>> {
    loop {
        if let Some(newline) = unread.iter().position(|&byte| byte == b'\n') {
            let mut line: Vec<u8> = unread.drain(..=newline).collect();
            line.pop();
            return Ok(line);
        }
        if unread.len() > MAX_ANSWER_LINE {
            return Err(io::Error::other(format!("the keeper's answer is longer than {MAX_ANSWER_LINE} bytes")));
        }
        let mut chunk = [0u8; 512];
        match reader.read(&mut chunk) {
            Ok(0) => return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the keeper closed its stdout")),
            Ok(read) => unread.extend_from_slice(&chunk[..read]),
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => {
                wait_ready(reader, PollFlags::IN, deadline, "answering a pane request")?
            }
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
}

/// Reaps a keeper this host started, once it exits (after its last pane is
/// released, with no more to take).
async fn reap_keeper(keeper_pid: u32) {
    let Some(pid) = i32::try_from(keeper_pid).ok().and_then(Pid::from_raw) else { return };
    match super::exit::exit_pidfd(pid) {
        Ok(pidfd) => {
            let _ = pidfd.readable().await;
        }
        // Without a pidfd, look every second.
        Err(_) => loop {
            tokio::time::sleep(limits::KEEPER_REAP_POLL).await;
            if !matches!(waitpid(Some(pid), WaitOptions::NOHANG), Ok(None)) {
                return;
            }
        },
    }
    let _ = waitpid(Some(pid), WaitOptions::NOHANG);
    tracing::debug!(keeper = keeper_pid, "keeper exited");
}

impl Handover {
    /// A handover of `master` (the PTY's master side), the process `pid`
    /// on its other side (`exited`: how it ended, if it has) and the
    /// keeper's connection `control`, checked as every handover is: the
    /// connection's peer runs as this user (its pid becomes the keeper's),
    /// `master` is a PTY's master side, and `pid` names a process (a
    /// positive `pid_t`: 0 or a negative one would make the pane's signals
    /// reach other processes' groups). Whatever sent the parts, a keeper
    /// over a socket ([`connect`]) or a test that made them itself, the
    /// pane is built over them the same way.
    ///
    /// # Errors
    /// Fails (`PermissionDenied` for another user's peer, `InvalidData`
    /// for the rest) when a check does not hold.
    pub(crate) fn new(
        master: OwnedFd,
        pid: u32,
        exited: Option<ExitStatus>,
        control: UnixStream,
    ) -> io::Result<Handover> {
        let keeper_pid = keeper_peer(&control)?;
        if i32::try_from(pid).ok().and_then(Pid::from_raw).is_none() {
            return Err(io::Error::new(io::ErrorKind::InvalidData, format!("the keeper names pid {pid}")));
        }
        if rustix::pty::ptsname(&master, Vec::new()).is_err() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "the keeper sent a descriptor that is not a PTY master",
            ));
        }
        Ok(Handover { master, pid, keeper_pid, exited, control, _checked: () })
    }
}

/// The pid of the process at the other end of `control`, once it is
/// known to run as this user: a pane's terminal is handed over on that
/// connection, and the host writes to it what clients send.
fn keeper_peer(control: &UnixStream) -> io::Result<u32> {
    let peer = rustix::net::sockopt::socket_peercred(control)?;
    if peer.uid != rustix::process::geteuid() {
        return Err(io::Error::new(
            io::ErrorKind::PermissionDenied,
            format!("the keeper's end of the pane's connection runs as uid {}, not as this user", peer.uid.as_raw()),
        ));
    }
    Ok(peer.pid.as_raw_nonzero().get() as u32)
}

/// Connects to the keeper at `socket` and receives the master fd. Blocking.
///
/// # Errors
/// Fails when nothing listens there, the peer is another user's, the
/// greeting does not come within [`limits::KEEPER_GREETING_TIMEOUT`] or
/// is longer than [`MAX_KEEPER_LINE`], or the handover is malformed
/// ([`Handover::new`]).
pub(crate) fn connect(socket: &Path) -> io::Result<Handover> {
    let control = UnixStream::connect(socket)?;
    // Checked before anything is read from it (and again by
    // `Handover::new`, which every handover passes).
    keeper_peer(&control).map_err(|error| io::Error::new(error.kind(), format!("{}: {error}", socket.display())))?;
    control.set_read_timeout(Some(limits::KEEPER_GREETING_TIMEOUT))?;
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut ancillary = RecvAncillaryBuffer::new(&mut space);
    // The status line is short; read it byte by byte after the first
    // message so nothing beyond the line is consumed.
    let mut first = [0u8; MAX_KEEPER_LINE];
    let received =
        rustix::net::recvmsg(&control, &mut [IoSliceMut::new(&mut first)], &mut ancillary, RecvFlags::CMSG_CLOEXEC)?;
    let mut master = None;
    for message in ancillary.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = message {
            for fd in fds {
                master.get_or_insert(fd);
            }
        }
    }
    let master = master.ok_or_else(|| io::Error::other("the keeper sent no fd"))?;
    let mut text = first[..received.bytes].to_vec();
    while !text.contains(&b'\n') {
        if text.len() >= MAX_KEEPER_LINE {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!("the keeper's greeting is longer than {MAX_KEEPER_LINE} bytes"),
            ));
        }
        let mut byte = [0u8; 1];
        if io::Read::read(&mut &control, &mut byte)? == 0 {
            return Err(io::Error::other("the keeper closed the connection"));
        }
        text.push(byte[0]);
    }
    let newline = text.iter().position(|byte| *byte == b'\n').unwrap_or(text.len());
    let (pid, exited) = parse_greeting(&text[..newline])?;
    control.set_read_timeout(None)?;
    Handover::new(master, pid, exited, control)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn nonblocking_pair() -> (UnixStream, UnixStream) {
        let (host, keeper) = UnixStream::pair().unwrap();
        host.set_nonblocking(true).unwrap();
        (host, keeper)
    }

    #[test]
    fn a_keeper_that_does_not_answer_is_given_up_on_at_the_deadline() {
        let (mut host, _keeper) = nonblocking_pair();
        let began = Instant::now();
        let deadline = began + std::time::Duration::from_millis(200);
        let err = read_line_before(&mut host, &mut Vec::new(), deadline).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(began.elapsed() >= std::time::Duration::from_millis(200));
        // A keeper that does not read: the write gives up too, once the
        // socket's buffer is full.
        let big = vec![b'x'; 16 << 20];
        let err =
            write_all_before(&mut host, &big, Instant::now() + std::time::Duration::from_millis(200)).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
    }

    #[test]
    fn answers_are_read_a_line_at_a_time_and_bounded() {
        let (mut host, mut keeper) = nonblocking_pair();
        keeper.write_all(b"ready 12\nerror no such program\nrea").unwrap();
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        let mut unread = Vec::new();
        assert_eq!(read_line_before(&mut host, &mut unread, deadline).unwrap(), b"ready 12");
        assert_eq!(read_line_before(&mut host, &mut unread, deadline).unwrap(), b"error no such program");
        keeper.write_all(b"dy 13\n").unwrap();
        assert_eq!(read_line_before(&mut host, &mut unread, deadline).unwrap(), b"ready 13");
        keeper.write_all(&vec![b'y'; MAX_ANSWER_LINE + 1024]).unwrap();
        assert!(read_line_before(&mut host, &mut unread, deadline).unwrap_err().to_string().contains("longer than"));
        drop(keeper);
        let (mut host, keeper) = nonblocking_pair();
        drop(keeper);
        let closed = read_line_before(&mut host, &mut Vec::new(), deadline).unwrap_err();
        assert_eq!(closed.kind(), io::ErrorKind::UnexpectedEof);
    }

    fn pty_master() -> OwnedFd {
        use rustix::pty::OpenptFlags;
        rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).unwrap()
    }

    #[test]
    fn a_handover_is_checked_whoever_makes_it() {
        let (host, _keeper) = UnixStream::pair().unwrap();
        let handover = Handover::new(pty_master(), 4242, None, host).unwrap();
        assert_eq!((handover.pid, handover.keeper_pid), (4242, std::process::id()), "the peer is the keeper");
        for pid in [0, u32::MAX, i32::MAX as u32 + 1] {
            let (host, _keeper) = UnixStream::pair().unwrap();
            let error = Handover::new(pty_master(), pid, None, host).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::InvalidData, "pid {pid}");
        }
        let master = pty_master();
        rustix::pty::grantpt(&master).unwrap();
        rustix::pty::unlockpt(&master).unwrap();
        let slave_path = rustix::pty::ptsname(&master, Vec::new()).unwrap();
        let slave = std::fs::File::open(slave_path.to_str().unwrap()).unwrap();
        let null = std::fs::File::open("/dev/null").unwrap();
        for (what, fd) in [("a PTY's slave side", OwnedFd::from(slave)), ("/dev/null", OwnedFd::from(null))] {
            let (host, _keeper) = UnixStream::pair().unwrap();
            let error = Handover::new(fd, 4242, None, host).unwrap_err();
            assert_eq!(error.kind(), io::ErrorKind::InvalidData, "{what}");
            assert!(error.to_string().contains("not a PTY master"), "{what}: {error}");
        }
    }

    /// Serves one connection on `socket`: sends `greeting` with a PTY's
    /// master, as a keeper does, and keeps the connection until the host
    /// closes it.
    fn serve_greeting(socket: &Path, greeting: &'static [u8]) -> std::thread::JoinHandle<()> {
        use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
        let listener = std::os::unix::net::UnixListener::bind(socket).unwrap();
        std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let master = pty_master();
            let fds = [master.as_fd()];
            let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
            let mut ancillary = SendAncillaryBuffer::new(&mut space);
            assert!(ancillary.push(SendAncillaryMessage::ScmRights(&fds)));
            rustix::net::sendmsg(&stream, &[io::IoSlice::new(greeting)], &mut ancillary, SendFlags::empty()).unwrap();
            let _ = io::Read::read(&mut &stream, &mut [0u8; 1]);
        })
    }

    #[test]
    fn connect_checks_the_greeting_and_the_handover() {
        let dir = tempfile::tempdir().unwrap();
        let running = dir.path().join("running.sock");
        let keeper = serve_greeting(&running, b"pane 4242 running\n");
        let handover = connect(&running).unwrap();
        assert_eq!((handover.pid, handover.exited.clone()), (4242, None));
        drop(handover);
        keeper.join().unwrap();

        let exited = dir.path().join("exited.sock");
        let keeper = serve_greeting(&exited, b"pane 4242 exited 3 -\n");
        let handover = connect(&exited).unwrap();
        assert_eq!(handover.exited, Some(ExitStatus { code: 3, signal: None }));
        drop(handover);
        keeper.join().unwrap();

        // A greeting that never ends is refused at the line's limit, not
        // read for as long as it comes.
        let endless = dir.path().join("endless.sock");
        let keeper = serve_greeting(&endless, &[b'x'; MAX_KEEPER_LINE + 10]);
        let error = connect(&endless).unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidData, "{error}");
        keeper.join().unwrap();

        // A pid no process can have.
        let zero = dir.path().join("zero.sock");
        let keeper = serve_greeting(&zero, b"pane 0 running\n");
        assert_eq!(connect(&zero).unwrap_err().kind(), io::ErrorKind::InvalidData);
        keeper.join().unwrap();
    }
}
