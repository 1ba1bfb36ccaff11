//! The orphans the keeper adopts. The keeper is a child subreaper
//! (`PR_SET_CHILD_SUBREAPER`): a process that a pane's program started
//! and whose parent ended becomes the keeper's child instead of init's,
//! so it stays where the host's sweep looks for the pane's processes
//! (`crate::pane::sweep`), and the keeper reaps it once it exits. The
//! panes' own children are never reaped here: each pane reaps its child by
//! pid and reports how it ended (`child.rs`).
//!
//! A child's end reaches the keeper as SIGCHLD, which it blocks and reads
//! from a signalfd polled with its other descriptors. A pane's child still
//! starts with an empty signal mask: std's spawn, which portable-pty uses,
//! resets the mask between fork and exec.

use rustix::process::{Pid, WaitOptions};
use std::io;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd};

/// The keeper as a subreaper, and its wake-up when a child ends.
pub(super) struct Orphans {
    /// Readable when SIGCHLD is pending; `None` if the kernel gave none
    /// (the orphans are then reaped whenever the keeper wakes for
    /// something else).
    child_ended: Option<OwnedFd>,
}

impl Orphans {
    /// Makes the keeper a child subreaper and opens its SIGCHLD signalfd.
    pub(super) fn adopt() -> io::Result<Orphans> {
        // Any non-zero argument sets the attribute.
        rustix::process::set_child_subreaper(Some(rustix::process::getpid()))?;
        Ok(Orphans { child_ended: child_ended_fd().ok() })
    }

    /// The descriptor to poll: readable once some child has ended.
    pub(super) fn wake_fd(&self) -> Option<BorrowedFd<'_>> {
        self.child_ended.as_ref().map(AsFd::as_fd)
    }

    /// Reaps every adopted child that has exited, leaving alone each pid
    /// for which `is_pane_child` is true (a pane's own child, which its
    /// pane reaps). Called on every wake-up of the keeper, after the panes
    /// have been served.
    pub(super) fn reap(&self, is_pane_child: impl Fn(u32) -> bool) {
        if let Some(fd) = &self.child_ended {
            drain(fd);
        }
        for pid in own_children() {
            if is_pane_child(pid) {
                continue;
            }
            if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
                let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
            }
        }
    }
}

/// The keeper's children, zombies included (`/proc/self/task/<tid>/children`;
/// the keeper has one thread, so its own task lists them all).
fn own_children() -> Vec<u32> {
    let pid = rustix::process::getpid().as_raw_nonzero().get();
    std::fs::read_to_string(format!("/proc/self/task/{pid}/children"))
        .map(|list| list.split_whitespace().filter_map(|pid| pid.parse().ok()).collect())
        .unwrap_or_default()
}

/// Blocks SIGCHLD and opens a non-blocking signalfd for it.
fn child_ended_fd() -> io::Result<OwnedFd> {
    // Safety: `sigset_t` is plain data that `sigemptyset` initialises
    // before any other use; `sigprocmask` changes the mask of the keeper's
    // one thread; `signalfd` with -1 returns a new descriptor (or -1),
    // which is owned here from then on. No pointer outlives the calls.
    unsafe {
        let mut set = std::mem::MaybeUninit::<libc::sigset_t>::uninit();
        libc::sigemptyset(set.as_mut_ptr());
        let mut set = set.assume_init();
        libc::sigaddset(&mut set, libc::SIGCHLD);
        if libc::sigprocmask(libc::SIG_BLOCK, &set, std::ptr::null_mut()) != 0 {
            return Err(io::Error::last_os_error());
        }
        let fd = libc::signalfd(-1, &set, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(OwnedFd::from_raw_fd(fd))
    }
}

/// Reads every pending signal off the signalfd (they only wake the keeper).
fn drain(fd: &OwnedFd) {
    let mut info = [0_u8; 128 * 8];
    while matches!(rustix::io::read(fd, &mut info), Ok(read) if read > 0) {}
}
