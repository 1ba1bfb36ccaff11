//! Lines from stdin, read on a thread of their own so the main loop can wait
//! for a line and still notice signals.

use std::io::{self, BufRead};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::thread;
use std::time::Duration;

/// The markers a terminal puts around a paste in bracketed paste mode.
const PASTE_START: &str = "\x1b[200~";
const PASTE_END: &str = "\x1b[201~";

/// The lines of stdin, in order.
pub struct Input {
    lines: Receiver<String>,
}

/// What waiting for a line gave.
#[derive(Debug, PartialEq)]
pub enum Poll {
    Line(String),
    /// Nothing yet.
    Waiting,
    /// End of input (or a read error, such as a hung-up terminal).
    Closed,
}

impl Input {
    /// Starts the reading thread.
    pub fn spawn() -> io::Result<Self> {
        let (sender, lines) = mpsc::channel();
        thread::Builder::new().name("stdin".into()).spawn(move || read_lines(sender))?;
        Ok(Input { lines })
    }

    /// Waits up to `timeout` for the next line.
    pub fn poll(&self, timeout: Duration) -> Poll {
        match self.lines.recv_timeout(timeout) {
            Ok(line) => Poll::Line(line),
            Err(RecvTimeoutError::Timeout) => Poll::Waiting,
            Err(RecvTimeoutError::Disconnected) => Poll::Closed,
        }
    }
}

/// Sends each line of stdin until it ends; dropping the sender then says so.
fn read_lines(sender: Sender<String>) {
    let mut stdin = io::stdin().lock();
    let mut raw = Vec::new();
    loop {
        raw.clear();
        match stdin.read_until(b'\n', &mut raw) {
            Ok(0) | Err(_) => return,
            Ok(_) => {
                if sender.send(decode_line(&raw)).is_err() {
                    return;
                }
            }
        }
    }
}

/// A line as text: invalid UTF-8 replaced, the line end and any bracketed
/// paste markers removed.
fn decode_line(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).trim_end_matches(['\n', '\r']).replace(PASTE_START, "").replace(PASTE_END, "")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_lose_their_ends_and_paste_markers() {
        assert_eq!(decode_line(b"hello\r\n"), "hello");
        assert_eq!(decode_line(b"\x1b[200~pasted\x1b[201~\n"), "pasted");
        assert_eq!(decode_line(b"bad \xff byte"), "bad \u{fffd} byte");
    }
}
