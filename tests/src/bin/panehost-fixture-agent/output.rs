//! Writing to the terminal: every write is flushed at once, and a failed write
//! is an error to return (the terminal is gone), never a panic.

use std::io::{self, Write};

/// The prompt, printed without a newline.
pub const PROMPT: &str = "fixture> ";

/// Terminal control sequences the agent emits.
pub mod sequence {
    /// OSC 9 desktop notification sent when a turn completes.
    pub const TURN_COMPLETE: &str = "\x1b]9;turn complete\x07";
    pub const BELL: &str = "\x07";
    pub const ALTERNATE_SCREEN_ENTER: &str = "\x1b[?1049h";
    pub const ALTERNATE_SCREEN_LEAVE: &str = "\x1b[?1049l";
    pub const BRACKETED_PASTE_ON: &str = "\x1b[?2004h";
    pub const BRACKETED_PASTE_OFF: &str = "\x1b[?2004l";

    /// OSC 2: set the window title. Control characters are dropped from
    /// `title` so it cannot end the sequence early.
    pub fn set_title(title: &str) -> String {
        let title: String = title.chars().filter(|c| !c.is_control()).collect();
        format!("\x1b]2;{title}\x07")
    }
}

/// The agent's stdout.
pub struct Output {
    stdout: io::Stdout,
}

impl Output {
    pub fn new() -> Self {
        Output { stdout: io::stdout() }
    }

    /// Writes `text` as is.
    pub fn text(&mut self, text: &str) -> io::Result<()> {
        self.bytes(text.as_bytes())
    }

    /// Writes `text` and a newline.
    pub fn line(&mut self, text: &str) -> io::Result<()> {
        let mut stdout = self.stdout.lock();
        stdout.write_all(text.as_bytes())?;
        stdout.write_all(b"\n")?;
        stdout.flush()
    }

    pub fn prompt(&mut self) -> io::Result<()> {
        self.text(PROMPT)
    }

    pub fn bytes(&mut self, bytes: &[u8]) -> io::Result<()> {
        let mut stdout = self.stdout.lock();
        stdout.write_all(bytes)?;
        stdout.flush()
    }
}

/// Writes a diagnostic line to stderr; if even that fails there is no one left to tell.
pub fn report(message: &str) {
    let _ = writeln!(io::stderr(), "{message}");
}
