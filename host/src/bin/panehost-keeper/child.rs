//! The child: spawning it in the PTY, reaping it, and ending it when the
//! keeper cannot start.

use crate::protocol::ExitReport;
use crate::signals;
use rustix::process::{Pid, Signal};
use std::ffi::OsString;
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// Spawns `program` with `args` in the PTY whose slave side is `slave`, in
/// `cwd`, with the keeper's own environment. The child leads a new session
/// (so its pid is its process group id) whose controlling terminal is the
/// PTY, and starts with every signal at its default action. Returns once
/// the program has been executed.
pub fn spawn(program: &OsString, args: &[OsString], cwd: &Path, slave: &OwnedFd) -> io::Result<Child> {
    let mut command = Command::new(program);
    command
        .args(args)
        .current_dir(cwd)
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

/// Starts the thread that waits for the child and passes its exit to
/// `on_exit`. The thread ends after that.
pub fn start_reaper(mut child: Child, on_exit: impl FnOnce(ExitReport) + Send + 'static) -> io::Result<()> {
    std::thread::Builder::new().name("reaper".to_owned()).stack_size(64 * 1024).spawn(move || {
        let report = child.wait().map_or_else(|_| ExitReport::unknown(), ExitReport::from_status);
        on_exit(report);
    })?;
    Ok(())
}

/// Kills the child's process group and reaps the child; for a keeper that
/// fails to start after spawning it.
pub fn kill_and_reap(mut child: Child) {
    kill_group(child.id());
    let _ = child.wait();
}

/// Sends SIGKILL to the process group the child leads. Only for a child not
/// yet reaped, whose group id cannot have been reused.
pub fn kill_group(child_pid: u32) {
    if let Some(pid) = i32::try_from(child_pid).ok().and_then(Pid::from_raw) {
        let _ = rustix::process::kill_process_group(pid, Signal::KILL);
    }
}
