//! Reading keystrokes from the terminal on standard input without a thread:
//! the terminal is opened again, non-blocking, and read when the async
//! runtime says it is readable.
//!
//! A keystroke read on a thread of its own had to wake the runtime from
//! that thread: two wake-ups between the key and the request that carries
//! it, a large part of `attach`'s echo time. Opening the terminal again
//! (through `/proc/self/fd/0`) gives a descriptor of its own, so making it
//! non-blocking leaves standard input, which the shell that started
//! `panehost` shares, as it was.

use rustix::fs::{Mode, OFlags};
use std::io;
use std::os::fd::OwnedFd;
use tokio::io::unix::AsyncFd;

/// The terminal on standard input, open again for non-blocking reads.
#[derive(Debug)]
pub(crate) struct TerminalInput {
    fd: AsyncFd<OwnedFd>,
}

impl TerminalInput {
    /// Opens the terminal on standard input again.
    ///
    /// # Errors
    /// Fails where `/proc` is not mounted or standard input cannot be
    /// opened again; the caller then reads standard input on a thread.
    pub(crate) fn open() -> io::Result<TerminalInput> {
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd = rustix::fs::open("/proc/self/fd/0", flags, Mode::empty())?;
        // Safety: the OwnedFd is moved into the AsyncFd, which keeps it
        // open and unchanged for as long as it is registered.
        let fd = unsafe { AsyncFd::register(fd) }.map_err(io::Error::from)?;
        Ok(TerminalInput { fd })
    }

    /// Reads what has been typed, waiting until something has; 0 at end
    /// of input.
    ///
    /// # Cancel safety
    /// Cancel safe: nothing is read until the descriptor is readable, and
    /// what is read is returned.
    pub(crate) async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut ready = self.fd.readable().await?;
            match ready.try_io(|fd| rustix::io::read(fd.get_ref(), &mut *buf).map_err(io::Error::from)) {
                Ok(result) => return result,
                Err(_would_block) => continue,
            }
        }
    }
}
