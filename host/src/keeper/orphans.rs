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
        let Some(children) = own_children() else {
            return reap_ended_in_turn(is_pane_child);
        };
        for pid in children {
            if !is_pane_child(pid) {
                reap(pid);
            }
        }
    }
}

/// Reaps `pid` if it has exited.
fn reap(pid: u32) {
    if let Some(pid) = i32::try_from(pid).ok().and_then(Pid::from_raw) {
        let _ = rustix::process::waitpid(Some(pid), WaitOptions::NOHANG);
    }
}

/// The children the calling thread started or adopted, zombies included
/// (`/proc/self/task/<tid>/children`; the keeper has one thread, so these
/// are all of its children); `None` where the kernel has no such file
/// (built without it).
fn own_children() -> Option<Vec<u32>> {
    let tid = rustix::thread::gettid().as_raw_nonzero().get();
    let list = std::fs::read_to_string(format!("/proc/self/task/{tid}/children")).ok()?;
    Some(list.split_whitespace().filter_map(|pid| pid.parse().ok()).collect())
}

/// Without the list of children: asks the kernel which child has exited,
/// without reaping it (`waitid` with `WNOWAIT`), and reaps it unless it is
/// a pane's; stops at a pane's, which its pane reaps first (its pidfd
/// wakes the keeper again), so that no exit report is taken from a pane.
fn reap_ended_in_turn(is_pane_child: impl Fn(u32) -> bool) {
    loop {
        // Safety: `siginfo_t` is plain data, zeroed as `waitid` with
        // `WNOHANG` requires (it leaves `si_pid` 0 when no child has
        // exited); the pointer is to that local and lives through the call.
        let pid = unsafe {
            let mut info: libc::siginfo_t = std::mem::zeroed();
            let flags = libc::WEXITED | libc::WNOHANG | libc::WNOWAIT;
            if libc::waitid(libc::P_ALL, 0, &mut info, flags) != 0 {
                return;
            }
            info.si_pid()
        };
        let Ok(pid) = u32::try_from(pid) else { return };
        if pid == 0 || is_pane_child(pid) {
            return;
        }
        reap(pid);
    }
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

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    /// A child of this test process that has exited and is not reaped.
    // Reaped by pid by the tests, as the keeper reaps its orphans.
    #[allow(clippy::zombie_processes)]
    fn ended_child() -> u32 {
        let child = std::process::Command::new("sh").args(["-c", "exit 3"]).spawn().unwrap();
        let pid = child.id();
        let deadline = Instant::now() + Duration::from_secs(10);
        while !is_zombie(pid) {
            assert!(Instant::now() < deadline, "the child never ended");
            std::thread::sleep(Duration::from_millis(5));
        }
        pid
    }

    fn is_zombie(pid: u32) -> bool {
        std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .is_ok_and(|stat| stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with('Z')))
    }

    #[test]
    fn without_the_list_of_children_an_ended_child_is_reaped_unless_it_is_a_panes() {
        // It reaps every ended child of its process.
        if !crate::test_process::alone(
            "keeper::orphans::tests::without_the_list_of_children_an_ended_child_is_reaped_unless_it_is_a_panes",
        ) {
            return;
        }
        let pane_child = ended_child();
        reap_ended_in_turn(|pid| pid == pane_child);
        assert!(is_zombie(pane_child), "a pane's child is left to its pane");
        reap(pane_child);
        assert!(!std::path::Path::new(&format!("/proc/{pane_child}")).exists());
        let orphan = ended_child();
        reap_ended_in_turn(|_| false);
        assert!(!std::path::Path::new(&format!("/proc/{orphan}")).exists(), "the orphan is reaped");
    }

    #[test]
    fn the_list_of_children_names_the_ended_ones_too() {
        let ended = ended_child();
        assert_eq!(own_children().map(|children| children.contains(&ended)), Some(true));
        reap(ended);
    }
}
