//! Signal dispositions: the clean slate the keeper and its children start
//! from, and what the keeper ignores.
//!
//! rustix deliberately offers no `sigaction` outside its libc-replacement
//! runtime, and std none at all, so this module calls the C library's
//! `signal`, which std already links. It only ever installs `SIG_IGN` or
//! `SIG_DFL`, never a handler.

use rustix::process::Signal;
use std::ffi::c_int;
use std::io;

extern "C" {
    /// `signal(2)`: `sighandler_t signal(int signum, sighandler_t handler)`.
    /// `sighandler_t` is pointer-sized; only the `SIG_DFL` and `SIG_IGN`
    /// constants are ever passed, so it is declared as `usize`.
    fn signal(signum: c_int, handler: usize) -> usize;
}

const SIG_DFL: usize = 0;
const SIG_IGN: usize = 1;
const SIG_ERR: usize = usize::MAX;

/// The keeper starts from a clean slate (every standard signal at its
/// default action, whatever it inherited as ignored), then ignores what it
/// must: it outlives its host's terminal and process group (HUP, INT), and
/// writes to sockets whose reader has gone (PIPE). Its children inherit the
/// clean slate; those three are set back to default in each child between
/// fork and exec (by portable-pty for HUP and INT, by std for PIPE), so a
/// pane's program starts with every signal at its default action.
pub(super) fn ignore_in_keeper() -> io::Result<()> {
    for signum in 1..=31 {
        if signum == Signal::KILL.as_raw() || signum == Signal::STOP.as_raw() {
            continue;
        }
        set_disposition(signum, SIG_DFL)?;
    }
    for sig in [Signal::HUP, Signal::INT, Signal::PIPE] {
        set_disposition(sig.as_raw(), SIG_IGN)?;
    }
    Ok(())
}

fn set_disposition(signum: c_int, handler: usize) -> io::Result<()> {
    // Safety: `signal` with `SIG_IGN` or `SIG_DFL` installs no handler code,
    // so there is no handler whose safety could be violated; the call is
    // async-signal-safe (a wrapper around the `rt_sigaction` system call),
    // so it is also sound between fork and exec.
    let previous = unsafe { signal(signum, handler) };
    if previous == SIG_ERR {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}
