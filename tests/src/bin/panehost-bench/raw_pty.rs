//! A raw PTY: the bench itself holds the master, with nothing between the
//! child and the reader but the kernel's terminal driver.

use crate::BenchResult;
use panehost_ipc::Size;
use portable_pty::{native_pty_system, Child, CommandBuilder, MasterPty, PtySize};
use std::io::{Read, Write};

/// A child in a fresh 80x24 PTY, its master held by the bench.
pub struct RawPty {
    /// Kept open so the reader and writer stay valid.
    _master: Box<dyn MasterPty + Send>,
    /// The child.
    pub child: Box<dyn Child + Send + Sync>,
    /// Reads the master.
    pub reader: Box<dyn Read + Send>,
    /// Writes the master.
    pub writer: Box<dyn Write + Send>,
}

impl RawPty {
    /// Spawns `argv` in a new 80x24 PTY; the slave is closed in the bench,
    /// so reading the master ends (EOF or EIO) once the child is gone.
    pub fn spawn(argv: &[&str]) -> BenchResult<RawPty> {
        RawPty::spawn_sized(argv, Size::DEFAULT)
    }

    /// Spawns `argv` in a new PTY of `size`, as [`RawPty::spawn`] does.
    pub fn spawn_sized(argv: &[&str], size: Size) -> BenchResult<RawPty> {
        let pty_size = PtySize { rows: size.rows, cols: size.cols, pixel_width: 0, pixel_height: 0 };
        let pair = native_pty_system().openpty(pty_size)?;
        let mut command = CommandBuilder::new(argv[0]);
        command.args(&argv[1..]);
        command.env("LANG", "C.UTF-8");
        command.env("TERM", "xterm-256color");
        let child = pair.slave.spawn_command(command)?;
        drop(pair.slave);
        let reader = pair.master.try_clone_reader()?;
        let writer = pair.master.take_writer()?;
        Ok(RawPty { _master: pair.master, child, reader, writer })
    }

    /// Reads (and drops) output until none has come for `quiet`: what a
    /// program draws at start, say, before anything is timed.
    pub fn drain_until_quiet(&mut self, quiet: std::time::Duration) -> BenchResult<()> {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        use std::os::fd::BorrowedFd;
        let fd = self._master.as_raw_fd().ok_or("the terminal has no descriptor")?;
        // The master outlives this call.
        let fd = unsafe { BorrowedFd::borrow_raw(fd) };
        let timeout = Timespec { tv_sec: quiet.as_secs() as i64, tv_nsec: i64::from(quiet.subsec_nanos()) };
        let mut buf = [0u8; 4096];
        loop {
            let mut fds = [PollFd::new(&fd, PollFlags::IN)];
            if poll(&mut fds, Some(&timeout))? == 0 {
                return Ok(());
            }
            if self.reader.read(&mut buf)? == 0 {
                return Err("end of output while draining".into());
            }
        }
    }

    /// Ends the child (SIGKILL by its pid, through portable-pty) and reaps it.
    pub fn end(mut self) {
        if let Ok(None) = self.child.try_wait() {
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// Reads until `needle` has appeared in what was read; returns everything
/// read.
pub fn read_until(reader: &mut dyn Read, needle: &[u8]) -> BenchResult<Vec<u8>> {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    while !seen.windows(needle.len()).any(|w| w == needle) {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            return Err(format!("end of output before {:?}", String::from_utf8_lossy(needle)).into());
        }
        seen.extend_from_slice(&buf[..n]);
    }
    Ok(seen)
}
