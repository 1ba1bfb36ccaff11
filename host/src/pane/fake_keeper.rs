//! A keeper played by a test, in the test's own process: the pane's parts
//! get unit tests over a real PTY and a real program without a keeper
//! process (`Pane::over_handover`, the keeper seam).
//!
//! What the fake does is what a keeper does for one pane
//! (`host/src/keeper/pane.rs`): it opens a PTY, starts the program on its
//! slave side (a session leader with the PTY as its controlling
//! terminal), keeps a copy of the master, hands the master, the pid and
//! its end of a socket pair over, reaps the program and reports
//! `exited <code> <signal>` on the connection, and reads the host's
//! `release`. Each test's state directory is its own.

use super::create::{HandedOver, NewProcess};
use super::keeper::Handover;
use super::ring::RingRead;
use super::{Behaviour, Pane, PaneLimits};
use crate::keeper_wire::pane_lines::{exited, parse_exited, ExitReport};
use crate::store::records::{PaneRecord, RecordStore};
use panehost_adapters::descriptor::ReferenceCapture;
use panehost_adapters::CompletionSignal;
use panehost_ipc::pane::restored_by;
use panehost_ipc::{ExitStatus, PaneId, Size, StartParams};
use rustix::fs::{Mode, OFlags};
use rustix::pty::OpenptFlags;
use std::io::{BufRead, BufReader, Write};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::Duration;

/// How long a test waits for anything the pane or its program does.
pub(super) const WAIT: Duration = Duration::from_secs(10);

/// One pane's keeper, played by the test.
pub(super) struct FakeKeeper {
    /// The keeper's own copy of the PTY's master (a keeper holds one for
    /// the pane's life): what the terminal's size is, as the program
    /// sees it.
    master: OwnedFd,
    /// The program's pid.
    pub(super) pid: u32,
    /// Pins the program: a signal sent through it never reaches a process
    /// that reused its pid.
    pidfd: OwnedFd,
    /// The keeper's end of the pane's connection (a clone; the thread
    /// has the other), shut down when the test ends.
    control: UnixStream,
    /// The program's exit as reported, and then each line the host sent.
    reports: mpsc::Receiver<KeeperNews>,
    thread: Option<JoinHandle<()>>,
    /// The pane's state directory (its record, ring and end marker),
    /// removed with the keeper.
    _state: tempfile::TempDir,
    /// The record store in it.
    pub(super) records: RecordStore,
}

/// When the keeper hands the pane over.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Handing {
    /// While the program runs; its exit is reported on the connection.
    Running,
    /// Once the program has exited and been reaped (a host that connects
    /// late): the handover says how it ended, and its output waits in the
    /// PTY.
    AfterExit,
}

/// What the keeper's thread saw.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum KeeperNews {
    /// It reaped the program and reported this.
    Exited(ExitReport),
    /// A line the host sent on the pane's connection, without its newline.
    Line(String),
}

impl FakeKeeper {
    /// Starts `argv` on a new PTY of `size` and hands it over, as a keeper
    /// does; then builds the pane over it, with `behaviour` and `limits`,
    /// through the same function a start uses.
    pub(super) async fn pane(
        argv: &[&str],
        size: Size,
        behaviour: Behaviour,
        limits: PaneLimits,
    ) -> (FakeKeeper, Arc<Pane>) {
        FakeKeeper::pane_handed(argv, size, behaviour, limits, Handing::Running).await
    }

    /// [`FakeKeeper::pane`], handed over `when` said.
    pub(super) async fn pane_handed(
        argv: &[&str],
        size: Size,
        behaviour: Behaviour,
        limits: PaneLimits,
        when: Handing,
    ) -> (FakeKeeper, Arc<Pane>) {
        let (keeper, handover) = FakeKeeper::start(argv, size, when);
        let id = PaneId("p0000beef".to_owned());
        let process = NewProcess {
            id: id.clone(),
            runtime: "shell".to_owned(),
            start: StartParams { runtime: "shell".to_owned(), ..StartParams::default() },
            cwd: "/".to_owned(),
            size,
            keeper_socket: keeper.records.keepers_dir().join(format!("{id}.sock")),
            notify_token: "0".repeat(32),
            generation: 1,
            created_at_ms: 1,
            reserved_offset: 0,
            native_reference: None,
            restored_by: restored_by::STARTED,
        };
        let pane = Pane::over_handover(process, behaviour, &keeper.records, limits, move || {
            Ok(HandedOver { handover, cgroup: None })
        })
        .await
        .expect("a pane over the fake keeper's handover");
        (keeper, pane)
    }

    /// Opens a PTY of `size`, starts `argv` on it and makes the pane's
    /// connection: the keeper's side, and the handover for the host, made
    /// `when` says.
    pub(super) fn start(argv: &[&str], size: Size, when: Handing) -> (FakeKeeper, Handover) {
        let state = tempfile::tempdir().expect("a state directory");
        let records = RecordStore::open(state.path()).expect("a record store");
        let master =
            rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC).expect("a PTY master");
        rustix::pty::grantpt(&master).expect("grantpt");
        rustix::pty::unlockpt(&master).expect("unlockpt");
        let slave_path = rustix::pty::ptsname(&master, Vec::new()).expect("the slave's name");
        let slave =
            rustix::fs::open(slave_path.as_c_str(), OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC, Mode::empty())
                .expect("the PTY's slave side");
        let winsize = rustix::termios::Winsize { ws_row: size.rows, ws_col: size.cols, ws_xpixel: 0, ws_ypixel: 0 };
        rustix::termios::tcsetwinsize(&master, winsize).expect("the PTY's size");
        let mut command = Command::new(argv[0]);
        command
            .args(&argv[1..])
            .env_clear()
            .env("PATH", "/usr/bin:/bin")
            .env("TERM", "xterm-256color")
            .current_dir("/")
            .stdin(Stdio::from(slave.try_clone().expect("a copy of the slave")))
            .stdout(Stdio::from(slave.try_clone().expect("a copy of the slave")))
            .stderr(Stdio::from(slave));
        // Safety: setsid and the TIOCSCTTY ioctl are single system calls,
        // safe between fork and exec.
        unsafe {
            command.pre_exec(|| {
                rustix::process::setsid()?;
                rustix::process::ioctl_tiocsctty(BorrowedFd::borrow_raw(0))?;
                Ok(())
            });
        }
        let mut child = command.spawn().expect("the program starts");
        // The slave's copies go with the command: the program holds the
        // terminal's other side alone, so its end is the reader's EOF.
        drop(command);
        let pid = child.id();
        let pidfd =
            rustix::process::pidfd_open(rustix::process::Pid::from_child(&child), rustix::process::PidfdFlags::empty())
                .expect("a pidfd for the program");
        let (host_end, keeper_end) = UnixStream::pair().expect("the pane's connection");
        let control = keeper_end.try_clone().expect("a copy of the keeper's end");
        let (news, reports) = mpsc::channel();
        let mut reap = move || match child.wait() {
            Ok(status) => ExitReport::from_status(status),
            Err(_) => ExitReport::unknown(),
        };
        // Reaped before the handover, its exit goes with it, as in a
        // keeper's greeting to a host that connects late.
        let (mut reap, already) = match when {
            Handing::Running => (Some(reap), None),
            Handing::AfterExit => {
                // Its output waits in the PTY, which holds a few KiB: a
                // program that writes more never exits.
                let mut exit = [rustix::event::PollFd::new(&pidfd, rustix::event::PollFlags::IN)];
                let timeout = rustix::event::Timespec { tv_sec: WAIT.as_secs() as i64, tv_nsec: 0 };
                if !matches!(rustix::event::poll(&mut exit, Some(&timeout)), Ok(1)) {
                    let _ = rustix::process::pidfd_send_signal(&pidfd, rustix::process::Signal::KILL);
                    panic!("the program did not exit within {WAIT:?} before its handover");
                }
                let report = reap();
                // As the host reads it off the wire.
                let status = parse_exited(exited(&report).trim_end()).expect("an exit line");
                (None, Some(status))
            }
        };
        let thread = std::thread::spawn(move || {
            let mut keeper_end = keeper_end;
            if let Some(mut reap) = reap.take() {
                let report = reap();
                let _ = keeper_end.write_all(exited(&report).as_bytes());
                let _ = news.send(KeeperNews::Exited(report));
            }
            for line in BufReader::new(keeper_end).lines() {
                let Ok(line) = line else { break };
                let _ = news.send(KeeperNews::Line(line));
            }
        });
        let own_master = rustix::io::fcntl_dupfd_cloexec(&master, 3).expect("the keeper's copy of the master");
        let handover =
            Handover::new(master, pid, already, host_end).expect("the fake keeper's handover passes its checks");
        let keeper = FakeKeeper {
            master: own_master,
            pid,
            pidfd,
            control,
            reports,
            thread: Some(thread),
            _state: state,
            records,
        };
        (keeper, handover)
    }

    /// The next thing the keeper saw, within [`WAIT`].
    pub(super) fn next_news(&self) -> Option<KeeperNews> {
        self.reports.recv_timeout(WAIT).ok()
    }

    /// Closes the keeper's end of the pane's connection, as a keeper
    /// that is killed does.
    pub(super) fn lose_connection(&self) {
        let _ = self.control.shutdown(std::net::Shutdown::Both);
    }

    /// Kills the program (SIGKILL).
    pub(super) fn kill(&self) {
        let _ = rustix::process::pidfd_send_signal(&self.pidfd, rustix::process::Signal::KILL);
    }

    /// The terminal's size as the program sees it.
    pub(super) fn terminal_size(&self) -> Size {
        let winsize = rustix::termios::tcgetwinsize(self.master.as_fd()).expect("the terminal's size");
        Size { cols: winsize.ws_col, rows: winsize.ws_row }
    }
}

impl Drop for FakeKeeper {
    fn drop(&mut self) {
        // Through the pidfd: the program, never a process given its pid
        // again after the thread reaped it.
        let _ = rustix::process::pidfd_send_signal(&self.pidfd, rustix::process::Signal::KILL);
        let _ = self.control.shutdown(std::net::Shutdown::Both);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// A runtime's behaviour for a pane of the tests: interrupted by Ctrl-C,
/// completion as `completion` says, nothing captured.
pub(super) fn behaviour(completion: CompletionSignal) -> Behaviour {
    Behaviour {
        interrupt_keys: vec![3],
        interrupt_presses: 1,
        completion,
        hook_injection: None,
        drops_early_input: false,
        reads_raw_input: false,
        ready_marker: None,
        reference_capture: ReferenceCapture::None,
        reference_pattern: None,
        session_store_location: None,
        process_started: None,
    }
}

/// 80 x 24.
pub(super) const SIZE: Size = Size { cols: 80, rows: 24 };

/// A pane of `/bin/sh -c script` at [`SIZE`], whose turns go unobserved,
/// over a fake keeper.
pub(super) async fn shell_pane(script: &str) -> (FakeKeeper, std::sync::Arc<super::Pane>) {
    FakeKeeper::pane(
        &["/bin/sh", "-c", script],
        SIZE,
        behaviour(CompletionSignal::Unobserved),
        super::PaneLimits::default(),
    )
    .await
}

/// Everything the pane's ring holds from offset 0 (the ring of a test
/// pane holds all its output).
pub(super) fn all_output(pane: &Pane) -> Vec<u8> {
    let mut bytes = Vec::new();
    loop {
        match pane.read_output(bytes.len() as u64, 1 << 20) {
            RingRead::Bytes(read) => bytes.extend_from_slice(&read),
            RingRead::UpToDate => return bytes,
            other => panic!("the ring lost the test's output: {other:?}"),
        }
    }
}

/// Waits until the output holds `wanted`; gives all of it.
pub(super) async fn output_with(pane: &Pane, wanted: &str) -> String {
    let mut progress = pane.progress();
    let found = tokio::time::timeout(WAIT, async {
        loop {
            progress.mark_seen();
            let output = String::from_utf8_lossy(&all_output(pane)).into_owned();
            if output.contains(wanted) {
                return output;
            }
            progress.changed().await.expect("the pane is gone");
        }
    })
    .await;
    found.unwrap_or_else(|_| panic!("no {wanted:?} in the output: {:?}", String::from_utf8_lossy(&all_output(pane))))
}

/// Waits until the pane has recorded its process's exit.
pub(super) async fn exit_of(pane: &Pane) -> ExitStatus {
    let mut progress = pane.progress();
    let exited = tokio::time::timeout(WAIT, progress.until(|progress| progress.exit.is_some())).await;
    exited.expect("the exit is seen in time").expect("the pane is gone").exit.expect("an exit")
}

/// Waits until the terminal model has parsed all the output.
pub(super) async fn screen_caught_up(pane: &Pane) {
    let end = pane.current_progress().end;
    let mut parsed = pane.parsed_offset();
    tokio::time::timeout(WAIT, parsed.wait_for(|parsed| *parsed >= end))
        .await
        .expect("the model parses the output in time")
        .expect("the follower runs");
}

/// Polls `check` (what no event reports: a file written) until it holds,
/// within [`WAIT`].
pub(super) async fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    let deadline = tokio::time::Instant::now() + WAIT;
    while !check() {
        assert!(tokio::time::Instant::now() < deadline, "{what} did not happen within {WAIT:?}");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The pane's record as it is on the disk.
pub(super) fn record_on_disk(keeper: &FakeKeeper) -> Option<PaneRecord> {
    keeper.records.load_all().0.into_iter().next()
}
