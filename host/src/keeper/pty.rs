//! Opening the PTY the child runs in, with portable-pty.

use portable_pty::{MasterPty, PtySize, SlavePty};
use std::io;
use std::os::fd::{BorrowedFd, OwnedFd};

/// A freshly opened PTY. Neither side is, or will become, the keeper's
/// controlling terminal (the slave is opened `O_NOCTTY`), and both are
/// close-on-exec.
pub(super) struct Pty {
    /// The master side: the keeper holds it for its whole life and hands
    /// duplicates of it to the host.
    pub master: OwnedFd,
    /// The slave side, which the child is spawned on. The keeper drops it
    /// once the child is spawned.
    pub slave: Box<dyn SlavePty + Send>,
}

/// Opens a PTY of `cols` x `rows`.
pub(super) fn open(cols: u16, rows: u16) -> io::Result<Pty> {
    let size = PtySize { rows, cols, pixel_width: 0, pixel_height: 0 };
    let pair = portable_pty::native_pty_system().openpty(size).map_err(io::Error::other)?;
    let master = own_master(pair.master.as_ref())?;
    // The master's own descriptor closes with `pair.master`; the duplicate
    // (the same open file description) is the one the keeper holds.
    Ok(Pty { master, slave: pair.slave })
}

/// A close-on-exec duplicate of the master's descriptor, owned.
fn own_master(master: &dyn MasterPty) -> io::Result<OwnedFd> {
    let raw = master.as_raw_fd().ok_or_else(|| io::Error::other("the PTY master has no descriptor"))?;
    // Safety: `raw` is the master's descriptor, open for as long as
    // `master` lives, which outlives this borrow.
    let borrowed = unsafe { BorrowedFd::borrow_raw(raw) };
    Ok(rustix::io::fcntl_dupfd_cloexec(borrowed, 3)?)
}
