//! Opening the PTY the child runs in.

use rustix::fs::{Mode, OFlags};
use rustix::pty::OpenptFlags;
use rustix::termios::Winsize;
use std::io;
use std::os::fd::OwnedFd;

/// A freshly opened PTY. Neither side is, or will become, the keeper's
/// controlling terminal.
pub(super) struct Pty {
    /// The master side: the keeper holds it for its whole life and hands
    /// duplicates of it to the host.
    pub master: OwnedFd,
    /// The slave side: the child's stdin, stdout and stderr. The keeper
    /// closes it once the child is spawned.
    pub slave: OwnedFd,
}

/// Opens a PTY of `cols` x `rows`.
pub(super) fn open(cols: u16, rows: u16) -> io::Result<Pty> {
    let master = rustix::pty::openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY | OpenptFlags::CLOEXEC)?;
    rustix::pty::grantpt(&master)?;
    rustix::pty::unlockpt(&master)?;
    let slave_name = rustix::pty::ptsname(&master, Vec::new())?;
    let slave =
        rustix::fs::open(slave_name.as_c_str(), OFlags::RDWR | OFlags::NOCTTY | OFlags::CLOEXEC, Mode::empty())?;
    rustix::termios::tcsetwinsize(&master, Winsize { ws_row: rows, ws_col: cols, ws_xpixel: 0, ws_ypixel: 0 })?;
    Ok(Pty { master, slave })
}
