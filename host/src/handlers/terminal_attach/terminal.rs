//! The client's terminal, as the host holds it during an attachment: the
//! descriptors it passed, made non-blocking for the host's reactor and put
//! back as they were when the attachment ends.

use crate::process_stat::ProcessStat;
use rustix::fs::OFlags;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use tokio::io::unix::AsyncFd;
use tokio::io::Interest;

/// A terminal to read keys from and write output to.
#[derive(Debug)]
pub(crate) struct Terminal {
    input: AsyncFd<OwnedFd>,
    /// Where output goes; `None` when one descriptor serves both.
    output: Option<AsyncFd<OwnedFd>>,
    /// Each descriptor's file status flags as passed, put back on drop (the
    /// client's shell reads the same terminal after the attachment).
    passed_flags: Vec<OFlags>,
}

impl Terminal {
    /// Takes the descriptors an `attach_terminal` brought: the terminal to
    /// read keys from, then the one to write to (or one for both).
    ///
    /// # Errors
    /// A sentence for `NO_TERMINAL` when there is none, more than two, or
    /// one is not a terminal; an I/O error's words when the reactor refuses
    /// one.
    pub(crate) fn take(descriptors: Vec<OwnedFd>) -> Result<Terminal, String> {
        if descriptors.is_empty() {
            return Err("attach_terminal needs the terminal's descriptors, passed (SCM_RIGHTS) with the frame of \
                        the connection's first request; this request brought none"
                .to_owned());
        }
        if descriptors.len() > 2 {
            return Err(format!("attach_terminal takes one or two descriptors, not {}", descriptors.len()));
        }
        if let Some(at) = descriptors.iter().position(|descriptor| !rustix::termios::isatty(descriptor)) {
            return Err(format!("descriptor {} of the {} passed is not a terminal", at + 1, descriptors.len()));
        }
        // The host's own controlling terminal (a host started from this
        // terminal): reading it from outside its foreground process group
        // would have the kernel stop the whole host (SIGTTIN). The client
        // relays instead.
        if descriptors.iter().any(is_own_controlling_terminal) {
            return Err("the terminal is the host's own controlling terminal (the host was started from it); \
                        the host reads no terminal of its own session"
                .to_owned());
        }
        let mut passed_flags = Vec::with_capacity(descriptors.len());
        for descriptor in &descriptors {
            passed_flags.push(rustix::fs::fcntl_getfl(descriptor).map_err(|err| err.to_string())?);
        }
        for (descriptor, flags) in descriptors.iter().zip(&passed_flags) {
            rustix::fs::fcntl_setfl(descriptor, *flags | OFlags::NONBLOCK).map_err(|err| err.to_string())?;
        }
        let mut descriptors = descriptors.into_iter();
        let first = descriptors.next().expect("one descriptor at least");
        let registered = match descriptors.next() {
            None => register(first, Interest::READABLE | Interest::WRITABLE).map(|input| (input, None)),
            Some(second) => register(first, Interest::READABLE)
                .and_then(|input| register(second, Interest::WRITABLE).map(|output| (input, Some(output)))),
        };
        match registered {
            Ok((input, output)) => Ok(Terminal { input, output, passed_flags }),
            // The descriptors are closed by now; their flags are shared
            // with the client's, so they go back through the client's own
            // (it clears O_NONBLOCK once the attachment ends).
            Err(err) => Err(format!("cannot wait on the terminal: {err}")),
        }
    }

    /// Reads keys: at least one byte, or 0 when the terminal hung up.
    ///
    /// # Errors
    /// The read's error (`EIO` once the terminal is gone).
    pub(crate) async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let mut ready = self.input.readable().await?;
            match ready.try_io(|descriptor| rustix::io::read(descriptor.get_ref(), &mut *buf).map_err(io::Error::from))
            {
                Ok(Err(err)) if err.kind() == io::ErrorKind::Interrupted => {}
                Ok(result) => return result,
                Err(_would_block) => {}
            }
        }
    }

    /// Writes what of `bytes` the terminal takes without waiting: how many
    /// bytes that was (none once it is gone; its next `write_all` says why).
    pub(crate) fn try_write(&self, bytes: &[u8]) -> usize {
        let output = self.output.as_ref().unwrap_or(&self.input);
        let mut written = 0;
        while written < bytes.len() {
            match rustix::io::write(output.get_ref(), &bytes[written..]) {
                Ok(0) => break,
                Ok(count) => written += count,
                Err(rustix::io::Errno::INTR) => {}
                // Full (EAGAIN) or gone.
                Err(_) => break,
            }
        }
        written
    }

    /// Writes all of `bytes`, waiting while the terminal's buffer is full.
    ///
    /// # Errors
    /// The write's error, once the terminal is gone.
    pub(crate) async fn write_all(&self, bytes: &[u8]) -> io::Result<()> {
        let output = self.output.as_ref().unwrap_or(&self.input);
        let mut written = 0;
        while written < bytes.len() {
            let mut ready = output.writable().await?;
            match ready.try_io(|descriptor| {
                rustix::io::write(descriptor.get_ref(), &bytes[written..]).map_err(io::Error::from)
            }) {
                Ok(Ok(0)) => return Err(io::ErrorKind::WriteZero.into()),
                Ok(Ok(count)) => written += count,
                Ok(Err(err)) if err.kind() == io::ErrorKind::Interrupted => {}
                Ok(Err(err)) => return Err(err),
                Err(_would_block) => {}
            }
        }
        Ok(())
    }
}

/// Registers `descriptor` with the reactor for `interest`.
fn register(descriptor: OwnedFd, interest: Interest) -> io::Result<AsyncFd<OwnedFd>> {
    // Safety: the OwnedFd is moved into the AsyncFd, which keeps it open
    // and unchanged for as long as it is registered.
    unsafe { AsyncFd::register_with_interest(descriptor, interest) }.map_err(io::Error::from)
}

impl Drop for Terminal {
    fn drop(&mut self) {
        let descriptors = std::iter::once(&self.input).chain(self.output.as_ref());
        for (descriptor, flags) in descriptors.zip(&self.passed_flags) {
            let _ = rustix::fs::fcntl_setfl(descriptor.get_ref().as_fd(), *flags);
        }
    }
}

/// True when `descriptor` is the host's controlling terminal: the same
/// device as the one `/proc/self/stat` names. (`TIOCGSID` would say so too,
/// but its answer is a session id that is 0 for a leader outside the host's
/// pid namespace, which the wrapper cannot hold.)
fn is_own_controlling_terminal(descriptor: &OwnedFd) -> bool {
    let Some((major, minor)) = ProcessStat::own().and_then(|own| own.controlling_terminal()) else { return false };
    rustix::fs::fstat(descriptor)
        .is_ok_and(|stat| rustix::fs::major(stat.st_rdev) == major && rustix::fs::minor(stat.st_rdev) == minor)
}
