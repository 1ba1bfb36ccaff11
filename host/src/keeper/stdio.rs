//! The keeper's stdin and stdout: the host's pipes while it may still ask
//! for panes, `/dev/null` after.

use rustix::fs::{Mode, OFlags};
use std::io;

/// Writes `line` in full straight to fd 1. std's `stdout` would allocate a
/// buffer that stayed in the keeper's memory for the rest of its life.
pub(super) fn write_stdout(mut line: &[u8]) -> io::Result<()> {
    while !line.is_empty() {
        match rustix::io::write(rustix::stdio::stdout(), line) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(written) => line = &line[written..],
            Err(rustix::io::Errno::INTR) => {}
            Err(error) => return Err(error.into()),
        }
    }
    Ok(())
}

/// Reads what stdin has into `buffer`: `Ok(0)` at end of file.
pub(super) fn read_stdin(buffer: &mut [u8]) -> io::Result<usize> {
    loop {
        match rustix::io::read(rustix::stdio::stdin(), &mut *buffer) {
            Err(rustix::io::Errno::INTR) => {}
            result => return result.map_err(io::Error::from),
        }
    }
}

/// Points stdin, stdout and stderr at `/dev/null`: the host will ask for
/// no more panes, and the keeper must not hold its pipes or terminal. Best
/// effort: there is nowhere left to report a failure.
pub(super) fn detach() {
    let Ok(null) = rustix::fs::open("/dev/null", OFlags::RDWR | OFlags::CLOEXEC, Mode::empty()) else {
        return;
    };
    let _ = rustix::stdio::dup2_stdin(&null);
    let _ = rustix::stdio::dup2_stdout(&null);
    let _ = rustix::stdio::dup2_stderr(&null);
}
