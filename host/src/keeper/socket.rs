//! The keeper's listening socket, the peer check, and handing over the
//! master fd.

use rustix::fs::Mode;
use rustix::net::{SendAncillaryBuffer, SendAncillaryMessage, SendFlags};
use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::os::fd::BorrowedFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::Path;

/// Binds the listener at `path`, mode 0600, replacing a stale file left
/// there. The listener is non-blocking, for the serve loop's `poll`.
pub(super) fn bind(path: &Path) -> io::Result<UnixListener> {
    match std::fs::remove_file(path) {
        Err(error) if error.kind() != io::ErrorKind::NotFound => return Err(error),
        _ => {}
    }
    // The socket file is created with mode 0777 minus the umask; a umask of
    // 0177 makes it 0600 from the start. The keeper has one thread, so
    // changing the process-wide umask briefly is safe here.
    let previous = rustix::process::umask(Mode::from_raw_mode(0o177));
    let bound = UnixListener::bind(path);
    rustix::process::umask(previous);
    let listener = bound?;
    listener.set_nonblocking(true)?;
    Ok(listener)
}

/// The outcome of accepting one connection.
pub(super) enum Accepted {
    /// A connection from a process running as the keeper's own user.
    Owner(UnixStream),
    /// A connection from another user; it has been closed.
    Foreign,
    /// No connection was pending.
    NonePending,
}

/// Accepts one pending connection and checks its peer's uid
/// (`SO_PEERCRED`) against the keeper's effective uid.
pub(super) fn accept(listener: &UnixListener) -> io::Result<Accepted> {
    let stream = match listener.accept() {
        Ok((stream, _)) => stream,
        Err(error) if error.kind() == io::ErrorKind::WouldBlock => return Ok(Accepted::NonePending),
        Err(error) => return Err(error),
    };
    // The listener is non-blocking; the connection is used blocking.
    stream.set_nonblocking(false)?;
    let peer = rustix::net::sockopt::socket_peercred(&stream)?;
    if peer.uid != rustix::process::geteuid() {
        return Ok(Accepted::Foreign);
    }
    Ok(Accepted::Owner(stream))
}

/// Sends `line` with a duplicate of `fd` attached (`SCM_RIGHTS`) to the
/// first byte, in one `sendmsg`.
pub(super) fn send_with_fd(stream: &UnixStream, line: &[u8], fd: BorrowedFd<'_>) -> io::Result<()> {
    let fds = [fd];
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut control = SendAncillaryBuffer::new(&mut space);
    if !control.push(SendAncillaryMessage::ScmRights(&fds)) {
        return Err(io::Error::other("no room for the fd in the control buffer"));
    }
    let sent = loop {
        match rustix::net::sendmsg(stream, &[IoSlice::new(line)], &mut control, SendFlags::NOSIGNAL) {
            Err(rustix::io::Errno::INTR) => {}
            result => break result?,
        }
    };
    if sent == 0 {
        return Err(io::ErrorKind::WriteZero.into());
    }
    send_line(stream, &line[sent..])
}

/// Sends `bytes` in full, without SIGPIPE.
pub(super) fn send_line(stream: &UnixStream, mut bytes: &[u8]) -> io::Result<()> {
    while !bytes.is_empty() {
        match rustix::net::send(stream, bytes, SendFlags::NOSIGNAL) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(sent) => bytes = &bytes[sent..],
            Err(rustix::io::Errno::INTR) => {}
            Err(error) => return Err(error.into()),
        }
    }
    Ok(())
}
