//! The pane's terminal model: a vt100 screen that follows the output.

use panehost_ipc::{ByteBuf, Cursor, InputModes, ScreenSnapshot, Size};

use super::turn::TerminalNotice;

/// Records what the vt100 callbacks report: the title, and terminal
/// notifications (bells, OSC 9, OSC 777) until they are taken.
#[derive(Debug, Default)]
pub struct ScreenCallbacks {
    title: String,
    notices: Vec<TerminalNotice>,
}

/// Notifications kept between two takes; more are dropped (a flood of
/// bells means nothing more than one).
const MAX_PENDING_NOTICES: usize = 64;

impl ScreenCallbacks {
    fn notice(&mut self, notice: TerminalNotice) {
        if self.notices.len() < MAX_PENDING_NOTICES {
            self.notices.push(notice);
        }
    }
}

impl vt100::Callbacks for ScreenCallbacks {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.title = String::from_utf8_lossy(title).into_owned();
    }

    fn audible_bell(&mut self, _: &mut vt100::Screen) {
        self.notice(TerminalNotice::Bell);
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        let text = |parts: &[&[u8]]| {
            parts.iter().map(|part| String::from_utf8_lossy(part).into_owned()).collect::<Vec<_>>().join(";")
        };
        match params {
            [b"9", rest @ ..] => self.notice(TerminalNotice::Osc9(text(rest))),
            [b"777", b"notify", rest @ ..] => self.notice(TerminalNotice::Osc777(text(rest))),
            _ => {}
        }
    }
}

/// The terminal model and the output offset it has parsed up to.
///
/// It keeps no scrollback: nothing reads parsed lines once they leave the
/// screen, and the ring holds the raw bytes, from which
/// [`history`](super::history) re-parses older lines when a client asks.
/// (1,000 parsed lines of 80 columns cost about 2.6 MiB per pane.)
pub struct TerminalScreen {
    parser: vt100::Parser<ScreenCallbacks>,
    parsed: u64,
}

impl std::fmt::Debug for TerminalScreen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalScreen").field("parsed", &self.parsed).finish_non_exhaustive()
    }
}

impl TerminalScreen {
    /// A blank screen of `size`.
    pub fn new(size: Size) -> Self {
        TerminalScreen {
            parser: vt100::Parser::new_with_callbacks(size.rows, size.cols, 0, ScreenCallbacks::default()),
            parsed: 0,
        }
    }

    /// Feeds output that starts exactly at [`parsed`](Self::parsed).
    pub fn process(&mut self, data: &[u8]) {
        self.parser.process(data);
        self.parsed += data.len() as u64;
    }

    /// Redraws a saved screen (its formatted bytes) without counting them
    /// as output.
    pub fn restore(&mut self, formatted: &[u8]) {
        self.parser.process(formatted);
        let _ = self.take_notices();
    }

    /// Declares the offset of the next byte the screen expects (for a pane
    /// whose output continues from a reserved offset).
    pub fn set_parsed(&mut self, offset: u64) {
        self.parsed = offset;
    }

    /// The offset of the next byte the screen expects.
    pub fn parsed(&self) -> u64 {
        self.parsed
    }

    /// Changes the size.
    pub fn resize(&mut self, size: Size) {
        self.parser.screen_mut().set_size(size.rows, size.cols);
    }

    /// The window title the process set.
    pub fn title(&self) -> &str {
        &self.parser.callbacks().title
    }

    /// Terminal notifications seen since the last take.
    pub fn take_notices(&mut self) -> Vec<TerminalNotice> {
        std::mem::take(&mut self.parser.callbacks_mut().notices)
    }

    /// The screen at [`parsed`](Self::parsed).
    pub fn snapshot(&self) -> ScreenSnapshot {
        let screen = self.parser.screen();
        let (rows, cols) = screen.size();
        let (cursor_row, cursor_col) = screen.cursor_position();
        let mut formatted = screen.state_formatted();
        if !self.title().is_empty() {
            formatted.extend_from_slice(format!("\x1b]2;{}\x07", self.title()).as_bytes());
        }
        ScreenSnapshot {
            offset: self.parsed,
            size: Size { cols, rows },
            text: screen.contents(),
            formatted: ByteBuf(formatted),
            cursor: Cursor { row: cursor_row, col: cursor_col, visible: !screen.hide_cursor() },
            title: self.title().to_owned(),
            alternate_screen: screen.alternate_screen(),
            modes: InputModes {
                bracketed_paste: screen.bracketed_paste(),
                mouse: screen.mouse_protocol_mode() != vt100::MouseProtocolMode::None,
                application_keypad: screen.application_keypad(),
                application_cursor: screen.application_cursor(),
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn snapshot_reports_text_cursor_title_and_modes() {
        let mut screen = TerminalScreen::new(Size { cols: 20, rows: 4 });
        let output = b"hello\r\nworld\x1b]2;my title\x07\x1b[?2004h";
        screen.process(output);
        let snapshot = screen.snapshot();
        assert_eq!(snapshot.offset, output.len() as u64);
        assert_eq!(snapshot.text, "hello\nworld");
        assert_eq!((snapshot.cursor.row, snapshot.cursor.col), (1, 5));
        assert_eq!(snapshot.title, "my title");
        assert!(snapshot.modes.bracketed_paste);
    }

    #[test]
    fn terminal_notifications_are_collected() {
        let mut screen = TerminalScreen::new(Size { cols: 20, rows: 4 });
        screen.process(b"a\x07b\x1b]9;turn complete\x07c\x1b]777;notify;Title;Body\x1b\\\x1b]2;t\x07");
        assert_eq!(
            screen.take_notices(),
            [
                TerminalNotice::Bell,
                TerminalNotice::Osc9("turn complete".into()),
                TerminalNotice::Osc777("Title;Body".into())
            ]
        );
        assert!(screen.take_notices().is_empty());
    }
}
