//! Screen snapshots: what a terminal showed at one offset of the output.

use crate::byte_buf::ByteBuf;
use crate::pane::Size;
use serde::{Deserialize, Serialize};

/// Resets attributes, homes the cursor and clears the screen: what a
/// terminal needs before a snapshot's `formatted` bytes.
pub const CLEAR_TERMINAL: &[u8] = b"\x1b[0m\x1b[H\x1b[2J";

/// The screen as the host's terminal model saw it after the output bytes
/// up to `offset` (exclusive). Output that follows the snapshot starts at
/// `offset`, so snapshot plus stream is exact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ScreenSnapshot {
    /// The output offset this snapshot describes.
    pub offset: u64,
    /// The screen size.
    pub size: Size,
    /// The visible screen as plain text, rows joined by `\n`, trailing
    /// blanks trimmed.
    pub text: String,
    /// Bytes that redraw this screen on a blank terminal of the same size:
    /// contents with colours and attributes, input modes, cursor position.
    pub formatted: ByteBuf,
    /// Where the cursor is.
    pub cursor: Cursor,
    /// The window title the process set, or empty.
    pub title: String,
    /// Whether the alternate screen is active.
    pub alternate_screen: bool,
    /// Input modes the process enabled.
    pub modes: InputModes,
    /// Revision 5. Whether the snapshot was cut to fit its bounds
    /// ([`MAX_SNAPSHOT_FORMATTED_LEN`], [`MAX_SNAPSHOT_TEXT_LEN`],
    /// [`MAX_SNAPSHOT_TITLE_LEN`]): then `formatted` may draw the screen
    /// without colours or attributes, or only its first rows, and `text`
    /// and `title` may be cut. Only a screen drawn to be large (a big pane
    /// with many colours and combining marks in every cell) comes to this.
    #[serde(default)]
    pub trimmed: bool,
}

/// The most bytes a snapshot's `formatted` holds: a 1000x250 screen of
/// plain text fits many times over; one with a different true-colour pen
/// in every cell does not, and is drawn without colours instead.
pub const MAX_SNAPSHOT_FORMATTED_LEN: usize = 4 * 1024 * 1024;

/// The most bytes a snapshot's `text` holds.
pub const MAX_SNAPSHOT_TEXT_LEN: usize = 2 * 1024 * 1024;

/// The most bytes a snapshot's `title` holds.
pub const MAX_SNAPSHOT_TITLE_LEN: usize = 4 * 1024;

impl ScreenSnapshot {
    /// The bytes that show this screen on a terminal of its size, whatever
    /// the terminal showed before: [`CLEAR_TERMINAL`], then `formatted`.
    pub fn drawing(&self) -> Vec<u8> {
        let mut bytes = Vec::with_capacity(CLEAR_TERMINAL.len() + self.formatted.len());
        bytes.extend_from_slice(CLEAR_TERMINAL);
        bytes.extend_from_slice(self.formatted.as_slice());
        bytes
    }
}

/// Cursor position, zero-based.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Cursor {
    /// Row, from the top.
    pub row: u16,
    /// Column, from the left.
    pub col: u16,
    /// Whether the process left the cursor visible.
    pub visible: bool,
}

/// Terminal input modes that change what a client should send.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InputModes {
    /// Pasted text should be wrapped in `ESC [200~` and `ESC [201~`.
    pub bracketed_paste: bool,
    /// The process asked for mouse reports.
    pub mouse: bool,
    /// Application keypad mode.
    pub application_keypad: bool,
    /// Application cursor-key mode.
    pub application_cursor: bool,
}
