//! The child: spawning it in the PTY, noticing and reaping its exit, and
//! ending it when the keeper cannot start.

use super::args::PaneRequest;
use super::protocol::ExitReport;
use super::signals;
use rustix::event::Timespec;
use rustix::process::{Pid, PidfdFlags, Signal};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};

/// Spawns the request's program in the PTY whose slave side is `slave`, in
/// the request's directory, with the request's environment and no other
/// (the program is looked up on that environment's `PATH`). The child leads a new session
/// (so its pid is its process group id) whose controlling terminal is the
/// PTY, and starts with every signal at its default action. Returns once
/// the program has been executed.
pub(super) fn spawn(request: &PaneRequest, slave: &OwnedFd) -> io::Result<Child> {
    let mut command = Command::new(&request.program);
    command
        .args(&request.program_args)
        .current_dir(&request.cwd)
        .env_clear()
        .envs(request.env.iter().map(|(name, value)| (name, value)))
        .stdin(Stdio::from(slave.try_clone()?))
        .stdout(Stdio::from(slave.try_clone()?))
        .stderr(Stdio::from(slave.try_clone()?));
    // Safety: the closure runs in the forked child between fork and exec.
    // It only makes async-signal-safe system calls (setsid, ioctl,
    // rt_sigaction through `signal`), takes no locks and allocates nothing;
    // errors become `io::Error`s from raw OS codes, which do not allocate.
    unsafe {
        command.pre_exec(|| {
            rustix::process::setsid()?;
            // fd 0 is the PTY slave by now; make it the controlling terminal.
            rustix::process::ioctl_tiocsctty(rustix::stdio::stdin())?;
            signals::reset_in_child()
        });
    }
    command.spawn()
}

/// How often the keeper checks for the child's exit when it has no pidfd
/// to poll.
const CHECK_INTERVAL: Timespec = Timespec { tv_sec: 0, tv_nsec: 100_000_000 };

/// A running child, watched from the keeper's one thread: the serve loop
/// polls [`Running::exit_fd`] (or, without one, wakes up every
/// [`Running::poll_timeout`]) and then calls [`Running::try_reap`].
pub(super) struct Running {
    child: Child,
    /// A pidfd for the child: readable once it has exited. `None` if the
    /// kernel has none to give (`pidfd_open` arrived in Linux 5.3).
    pidfd: Option<OwnedFd>,
}

impl Running {
    /// Starts watching `child`, which must not have been reaped yet (so its
    /// pid cannot have been reused).
    pub(super) fn watch(child: Child) -> Self {
        let pidfd = i32::try_from(child.id())
            .ok()
            .and_then(Pid::from_raw)
            // Without a pidfd (ENOSYS on kernels before 5.3, or no fd to
            // spare) the keeper falls back on checking every
            // CHECK_INTERVAL: slower to notice the exit, but as correct.
            .and_then(|pid| rustix::process::pidfd_open(pid, PidfdFlags::empty()).ok());
        Self { child, pidfd }
    }

    /// The fd that becomes readable when the child exits, if there is one.
    pub(super) fn exit_fd(&self) -> Option<BorrowedFd<'_>> {
        self.pidfd.as_ref().map(AsFd::as_fd)
    }

    /// How long the serve loop may block before calling
    /// [`Running::try_reap`]: for ever with a pidfd, CHECK_INTERVAL without.
    pub(super) fn poll_timeout(&self) -> Option<&'static Timespec> {
        match self.pidfd {
            Some(_) => None,
            None => Some(&CHECK_INTERVAL),
        }
    }

    /// Reaps the child if it has exited (`waitpid` with `WNOHANG`); `None`
    /// while it runs.
    pub(super) fn try_reap(&mut self) -> Option<ExitReport> {
        match self.child.try_wait() {
            Ok(None) => None,
            Ok(Some(status)) => Some(ExitReport::from_status(status)),
            // Only ECHILD is possible, and only if someone else reaped it.
            Err(_) => Some(ExitReport::unknown()),
        }
    }

    /// Kills the child's process group and reaps the child.
    pub(super) fn kill_and_reap(self) {
        kill_and_reap(self.child);
    }
}

/// Kills the child's process group and reaps the child; for a pane that
/// fails to start after spawning it.
pub(super) fn kill_and_reap(mut child: Child) {
    kill_group(child.id());
    let _ = child.wait();
}

/// Sends SIGKILL to the process group the child leads. Only for a child not
/// yet reaped, whose group id cannot have been reused.
fn kill_group(child_pid: u32) {
    if let Some(pid) = i32::try_from(child_pid).ok().and_then(Pid::from_raw) {
        let _ = rustix::process::kill_process_group(pid, Signal::KILL);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::event::{PollFd, PollFlags};
    use std::time::{Duration, Instant};

    fn spawn_sh(script: &str) -> Child {
        Command::new("sh").args(["-c", script]).spawn().unwrap()
    }

    #[test]
    fn the_pidfd_becomes_readable_when_the_child_exits() {
        let mut running = Running::watch(spawn_sh("sleep 0.2; exit 3"));
        assert_eq!(running.poll_timeout(), None);
        assert_eq!(running.try_reap(), None, "the child is still running");
        let mut fds = [PollFd::from_borrowed_fd(running.exit_fd().expect("this kernel has pidfds"), PollFlags::IN)];
        let ten_seconds = Timespec { tv_sec: 10, tv_nsec: 0 };
        assert_eq!(rustix::event::poll(&mut fds, Some(&ten_seconds)).unwrap(), 1);
        assert_eq!(running.try_reap(), Some(ExitReport { code: 3, signal: None }));
    }

    #[test]
    fn without_a_pidfd_the_exit_is_found_by_checking_periodically() {
        let mut running = Running::watch(spawn_sh("sleep 0.2; kill -TERM $$"));
        running.pidfd = None;
        assert!(running.exit_fd().is_none());
        let deadline = Instant::now() + Duration::from_secs(10);
        let report = loop {
            assert!(Instant::now() < deadline, "the child was not reaped");
            let timeout = running.poll_timeout().expect("a timeout without a pidfd");
            let _ = rustix::event::poll(&mut [], Some(timeout));
            if let Some(report) = running.try_reap() {
                break report;
            }
        };
        assert_eq!(report, ExitReport { code: 143, signal: Some("SIGTERM".into()) });
    }
}
