//! The local terminal: raw mode, size, and leaving it tidy.

use panehost_ipc::Size;
use rustix::termios::{self, OptionalActions, Termios};
use std::io::{self, IsTerminal};

/// Undoes modes a pane's program may have switched on in the local
/// terminal: attributes, alternate screen, hidden cursor, mouse reports,
/// bracketed paste, application keypad and cursor keys.
pub(crate) const LEAVE_MODES: &[u8] =
    b"\x1b[0m\x1b[?1049l\x1b[?25h\x1b[?1000l\x1b[?1002l\x1b[?1003l\x1b[?1006l\x1b[?2004l\x1b[?1l\x1b>";

/// True when standard input is a terminal.
pub(crate) fn stdin_is_terminal() -> bool {
    io::stdin().is_terminal()
}

/// True when standard output is a terminal.
pub(crate) fn stdout_is_terminal() -> bool {
    io::stdout().is_terminal()
}

/// The terminal's size, when standard input is a terminal that knows it,
/// brought within the bounds of [`Size`] (a terminal narrower or larger
/// than a pane may be shows a pane of the nearest size it may have).
pub(crate) fn size() -> Option<Size> {
    let size = termios::tcgetwinsize(io::stdin()).ok()?;
    if size.ws_col == 0 || size.ws_row == 0 {
        return None;
    }
    Some(Size { cols: size.ws_col, rows: size.ws_row }.clamped())
}

/// Keeps the terminal on standard input in raw mode, and restores its
/// previous settings when dropped: on return, on error and on unwinding.
#[derive(Debug)]
pub(crate) struct RawMode {
    saved: Termios,
}

impl RawMode {
    /// Switches standard input's terminal to raw mode.
    pub(crate) fn enter() -> io::Result<RawMode> {
        let stdin = io::stdin();
        let saved = termios::tcgetattr(&stdin)?;
        let mut raw = saved.clone();
        raw.make_raw();
        termios::tcsetattr(&stdin, OptionalActions::Flush, &raw)?;
        Ok(RawMode { saved })
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        if let Err(error) = termios::tcsetattr(io::stdin(), OptionalActions::Now, &self.saved) {
            tracing::warn!(%error, "cannot restore the terminal settings");
        }
    }
}
