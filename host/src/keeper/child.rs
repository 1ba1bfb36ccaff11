//! The child: spawning it in the PTY, noticing and reaping its exit, and
//! ending it when the keeper cannot start.

use crate::control_group;
use crate::keeper_wire::pane_lines::ExitReport;
use crate::keeper_wire::pane_request::PaneRequest;
use portable_pty::{CommandBuilder, SlavePty};
use rustix::event::Timespec;
use rustix::process::{Pid, PidfdFlags, Signal, WaitOptions};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

/// A spawned child: its pid, and portable-pty's handle for it (kept, never
/// waited through: the keeper reaps by pid).
pub(super) struct Spawned {
    pid: Pid,
    _handle: Box<dyn portable_pty::Child + Send + Sync>,
}

impl Spawned {
    /// The child's pid, which is its process group and session id.
    pub(super) fn id(&self) -> u32 {
        self.pid.as_raw_nonzero().get() as u32
    }
}

/// Spawns the request's program on the PTY's slave side (portable-pty), in
/// the request's directory, with the request's environment and no other
/// (the program is looked up on that environment's `PATH`). The child leads
/// a new session (so its pid is its process group id) whose controlling
/// terminal is the PTY, holds no descriptor but the terminal's three,
/// and starts with the keeper's ignored signals (HUP, INT, PIPE) back at
/// their default actions and no signal blocked.
///
/// With a control group in the request, the child starts in it: the keeper
/// moves itself there for the fork and back to its own group right after
/// (it has one thread, so nothing else forks meanwhile). A group it cannot
/// enter is passed by (the child starts in the keeper's group, and the
/// host sees where it is); one it cannot leave again ends the pane, since
/// a keeper must not be in a group its pane's close ends.
pub(super) fn spawn(request: &PaneRequest, slave: &dyn SlavePty) -> io::Result<Spawned> {
    let Some(pane_group) = &request.cgroup else {
        return spawn_here(request, slave);
    };
    let Some(own_group) = control_group::own_dir() else {
        return spawn_here(request, slave);
    };
    if control_group::move_self(pane_group).is_err() {
        return spawn_here(request, slave);
    }
    let spawned = spawn_here(request, slave);
    if let Err(error) = control_group::move_self(&own_group) {
        if let Ok(child) = spawned {
            kill_and_reap(child);
        }
        return Err(io::Error::other(format!("cannot leave the pane's control group: {error}")));
    }
    spawned
}

/// [`spawn`] in the keeper's current group.
fn spawn_here(request: &PaneRequest, slave: &dyn SlavePty) -> io::Result<Spawned> {
    let mut command = CommandBuilder::new(&request.program);
    command.args(&request.program_args);
    command.cwd(&request.cwd);
    command.env_clear();
    for (name, value) in &request.env {
        command.env(name, value);
    }
    let handle = slave.spawn_command(command).map_err(io::Error::other)?;
    let pid = handle
        .process_id()
        .and_then(|pid| i32::try_from(pid).ok())
        .and_then(Pid::from_raw)
        .ok_or_else(|| io::Error::other("the spawned child has no pid"))?;
    Ok(Spawned { pid, _handle: handle })
}

/// How often the keeper checks for the child's exit when it has no pidfd
/// to poll.
const CHECK_INTERVAL: Timespec = Timespec { tv_sec: 0, tv_nsec: 100_000_000 };

/// A running child, watched from the keeper's one thread: the serve loop
/// polls [`Running::exit_fd`] (or, without one, wakes up every
/// [`Running::poll_timeout`]) and then calls [`Running::try_reap`].
pub(super) struct Running {
    child: Spawned,
    /// A pidfd for the child: readable once it has exited. `None` if the
    /// kernel has none to give (`pidfd_open` arrived in Linux 5.3).
    pidfd: Option<OwnedFd>,
}

impl Running {
    /// Starts watching `child`, which must not have been reaped yet (so its
    /// pid cannot have been reused).
    pub(super) fn watch(child: Spawned) -> Self {
        // Without a pidfd (ENOSYS on kernels before 5.3, or no fd to
        // spare) the keeper falls back on checking every CHECK_INTERVAL:
        // slower to notice the exit, but as correct.
        let pidfd = rustix::process::pidfd_open(child.pid, PidfdFlags::empty()).ok();
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
        match rustix::process::waitpid(Some(self.child.pid), WaitOptions::NOHANG) {
            Ok(None) => None,
            Ok(Some((_, status))) => Some(ExitReport::from_wait(status)),
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
pub(super) fn kill_and_reap(child: Spawned) {
    let _ = rustix::process::kill_process_group(child.pid, Signal::KILL);
    let _ = rustix::process::waitpid(Some(child.pid), WaitOptions::empty());
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::event::{PollFd, PollFlags};
    use std::time::{Duration, Instant};

    fn spawn_sh(script: &str) -> Spawned {
        let child = std::process::Command::new("sh").args(["-c", script]).spawn().unwrap();
        let pid = Pid::from_raw(child.id() as i32).unwrap();
        Spawned { pid, _handle: Box::new(child) }
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
