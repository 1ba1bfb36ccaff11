//! The process at the other end of a connection, held from the moment it
//! connected.
//!
//! The kernel names the connecting process's pid (`SO_PEERCRED`), but a
//! pid names whichever process has it now: one that connected and exited
//! leaves its pid to be given to another, and a parent that kept the
//! socket could wait for a pane's process to get it, then speak with the
//! pane's identity. A pidfd opened when the connection is accepted refers
//! to the process that connected and to no other; it says when that
//! process has exited, and from then on the connection has no process of
//! its own to vouch for it.

use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::{pidfd_open, Pid, PidfdFlags};
use std::os::fd::{AsFd, OwnedFd};

/// The connecting process (see the module's documentation).
#[derive(Debug)]
pub(crate) struct PeerProcess {
    pid: u32,
    /// `None` when it could not be opened (the process was gone already,
    /// or no descriptor was to spare): the process counts as gone.
    pidfd: Option<OwnedFd>,
}

impl PeerProcess {
    /// The process the kernel named as the connection's peer.
    pub(crate) fn of(pid: u32) -> PeerProcess {
        let pidfd =
            i32::try_from(pid).ok().and_then(Pid::from_raw).and_then(|pid| pidfd_open(pid, PidfdFlags::empty()).ok());
        PeerProcess { pid, pidfd }
    }

    /// Its pid, while the process that connected still runs; `None` once
    /// it has exited (its pid may be another process's by now).
    pub(crate) fn pid_while_running(&self) -> Option<u32> {
        let pidfd = self.pidfd.as_ref()?;
        // A pidfd is readable once its process has exited.
        let mut fds = [PollFd::from_borrowed_fd(pidfd.as_fd(), PollFlags::IN)];
        let now = Timespec { tv_sec: 0, tv_nsec: 0 };
        match rustix::event::poll(&mut fds, Some(&now)) {
            Ok(0) => Some(self.pid),
            _ => None,
        }
    }

    /// Its pid as the kernel named it, for messages.
    pub(crate) fn pid(&self) -> u32 {
        self.pid
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_process_counts_while_it_runs_and_not_after() {
        let mut child = std::process::Command::new("sleep").arg("1000").spawn().unwrap();
        let peer = PeerProcess::of(child.id());
        assert_eq!(peer.pid_while_running(), Some(child.id()));
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(peer.pid_while_running(), None, "its pid may be another's now");
        assert_eq!(peer.pid(), child.id());
    }

    #[test]
    fn a_pid_that_names_no_process_never_counts() {
        assert_eq!(PeerProcess::of(u32::MAX).pid_while_running(), None);
        assert_eq!(PeerProcess::of(0).pid_while_running(), None);
    }
}
