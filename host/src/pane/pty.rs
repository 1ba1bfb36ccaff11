//! Opening a PTY and spawning a launch plan's process in it.

use panehost_adapters::LaunchPlan;
use panehost_ipc::Size;
use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};

/// A freshly spawned process in its PTY.
pub(super) struct SpawnedPty {
    /// The master side, kept for resizing.
    pub(super) master: Box<dyn MasterPty + Send>,
    /// The child, kept for reaping.
    pub(super) child: Box<dyn Child + Send + Sync>,
    /// A non-blocking duplicate of the master's fd, for reading and writing.
    pub(super) io_fd: OwnedFd,
    /// The child's process id; it leads its own session and process group.
    pub(super) pid: u32,
}

impl std::fmt::Debug for SpawnedPty {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SpawnedPty").field("pid", &self.pid).finish_non_exhaustive()
    }
}

/// Opens a PTY of `size` and spawns the plan's program in it, with exactly
/// the plan's environment. Blocking (fork and exec); call it off the async
/// threads.
///
/// # Errors
/// Fails when the PTY cannot be opened or the program cannot be spawned.
pub(super) fn spawn_in_pty(plan: &LaunchPlan, size: Size, extra_env: &[(String, String)]) -> io::Result<SpawnedPty> {
    let pair = native_pty_system().openpty(pty_size(size)).map_err(io::Error::other)?;
    let mut command = CommandBuilder::new(&plan.program);
    command.args(&plan.args);
    command.cwd(&plan.cwd);
    command.env_clear();
    for (name, value) in plan.env.iter().chain(extra_env) {
        command.env(name, value);
    }
    let child = pair.slave.spawn_command(command).map_err(io::Error::other)?;
    // The parent must not hold the slave open, or reads never see the end.
    drop(pair.slave);
    let pid = child.process_id().ok_or_else(|| io::Error::other("spawned child has no pid"))?;
    let raw_fd = pair.master.as_raw_fd().ok_or_else(|| io::Error::other("PTY master has no fd"))?;
    // Safety: the fd belongs to `pair.master`, which is alive for this call;
    // it is only borrowed long enough to duplicate it.
    let master_fd = unsafe { BorrowedFd::borrow_raw(raw_fd) };
    let io_fd = rustix::io::fcntl_dupfd_cloexec(master_fd, 0)?;
    set_nonblocking(&io_fd)?;
    Ok(SpawnedPty { master: pair.master, child, io_fd, pid })
}

/// The PTY size structure for a pane size.
pub(super) fn pty_size(size: Size) -> PtySize {
    PtySize { rows: size.rows, cols: size.cols, pixel_width: 0, pixel_height: 0 }
}

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(fd)?;
    rustix::fs::fcntl_setfl(fd, flags | rustix::fs::OFlags::NONBLOCK)?;
    Ok(())
}
