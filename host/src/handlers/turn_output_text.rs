//! The `added_text` of a turn a shell's prompt marks ended: the text its
//! output draws, re-parsed from the ring, rather than a comparison of two
//! screens.
//!
//! A command's output is a stream of lines. Comparing the screen after the
//! turn with the screen before loses what it should keep: lines that were
//! on the screen already (a command printing `ok` where `ok` was shown
//! before), lines that scrolled off, and the whole of it when another
//! client resized the pane while it ran (the program's redraw lands on a
//! screen the resize cut). Parsed on its own, from the cursor's line as
//! it stood when the input was written, the output gives exactly the
//! echoed command line and what the command printed.

use crate::limits::MAX_ADDED_TEXT_LINES;
use crate::pane::history;
use crate::pane::Pane;
use panehost_ipc::{ScreenSnapshot, MAX_SNAPSHOT_TEXT_LEN};

/// The text the output from `from` to `to` draws after the part of the
/// cursor's line that `before` shows left of the cursor: non-empty lines,
/// trailing blanks trimmed, joined by `\n`, at most
/// [`MAX_ADDED_TEXT_LINES`] lines and [`MAX_SNAPSHOT_TEXT_LEN`] bytes (the
/// last ones). `None` when the ring no longer holds that output or the
/// scratch model fails on it.
pub(crate) async fn turn_output_text(pane: &Pane, before: &ScreenSnapshot, from: u64, to: u64) -> Option<String> {
    let output = pane.output_between(from, to)?;
    let mut bytes = line_start(before);
    bytes.extend_from_slice(&output);
    let size = before.size;
    let lines = history::line_limit(size, MAX_ADDED_TEXT_LINES);
    // Up to a ring's worth of output: CPU work, off the async threads.
    let rendered = tokio::task::spawn_blocking(move || history::render(&bytes, size, lines)).await.ok()??;
    Some(last_bytes(&non_empty_lines(&rendered.text), MAX_SNAPSHOT_TEXT_LEN).to_owned())
}

/// What to draw first so the output lands where it did: the text left of
/// the cursor on its line (a prompt), and the cursor after it.
fn line_start(before: &ScreenSnapshot) -> Vec<u8> {
    let row = before.text.lines().nth(usize::from(before.cursor.row)).unwrap_or("");
    let left: String = row.chars().take(usize::from(before.cursor.col)).collect();
    // Columns the text does not fill (blanks trimmed from the row, or wide
    // characters counted once) are reached by moving the cursor.
    format!("{left}\x1b[{}G", u32::from(before.cursor.col) + 1).into_bytes()
}

/// `text`'s lines with trailing blanks trimmed, empty ones left out.
fn non_empty_lines(text: &str) -> String {
    text.lines().map(str::trim_end).filter(|line| !line.is_empty()).collect::<Vec<_>>().join("\n")
}

/// The longest tail of `text` within `max` bytes that starts on a
/// character.
fn last_bytes(text: &str, max: usize) -> &str {
    let mut start = text.len().saturating_sub(max);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

#[cfg(test)]
mod tests {
    use super::*;
    use panehost_ipc::{ByteBuf, Cursor, InputModes, Size};

    fn screen(text: &str, row: u16, col: u16) -> ScreenSnapshot {
        ScreenSnapshot {
            offset: 0,
            size: Size { cols: 20, rows: 4 },
            text: text.to_owned(),
            formatted: ByteBuf(Vec::new()),
            cursor: Cursor { row, col, visible: true },
            title: String::new(),
            alternate_screen: false,
            modes: InputModes::default(),
            trimmed: false,
        }
    }

    fn render(before: &ScreenSnapshot, output: &[u8]) -> String {
        let mut bytes = line_start(before);
        bytes.extend_from_slice(output);
        let rendered = history::render(&bytes, before.size, 100).unwrap();
        non_empty_lines(&rendered.text)
    }

    #[test]
    fn the_prompt_stays_in_front_of_the_echo_and_repeated_lines_stay() {
        let before = screen("ok\n$", 1, 2);
        let text = render(&before, b"echo ok\r\nok\r\nok\r\n$ ");
        assert_eq!(text, "$ echo ok\nok\nok\n$");
    }

    #[test]
    fn lines_that_scroll_off_a_small_screen_are_kept() {
        let before = screen("$", 0, 2);
        let output: Vec<u8> = (0..10).flat_map(|n| format!("line {n}\r\n").into_bytes()).collect();
        let text = render(&before, &output);
        let expected: Vec<String> = (0..10).map(|n| format!("line {n}")).collect();
        assert_eq!(text, format!("$ {}", expected.join("\n")));
    }

    #[test]
    fn the_tail_kept_starts_on_a_character() {
        assert_eq!(last_bytes("aé", 1), "");
        assert_eq!(last_bytes("aé", 2), "é");
        assert_eq!(last_bytes("abc", 10), "abc");
        assert_eq!(last_bytes("", 0), "");
    }
}
