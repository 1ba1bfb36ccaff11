//! A pane's older lines, re-parsed from the raw output its ring holds.
//!
//! The live terminal model keeps no scrollback (it would cost about 2.6
//! MiB per pane for 1,000 lines of 80 columns, and nothing reads it while
//! the pane runs). When a client asks, the held bytes are parsed again by
//! a scratch model that does keep scrollback, and dropped afterwards.

use crate::limits::{HISTORY_MODEL_BYTES, SCREEN_CELL_BYTES};
use panehost_ipc::Size;

/// The text of the lines a scratch model ends up with.
#[derive(Debug, PartialEq, Eq)]
pub struct RenderedHistory {
    /// The lines that scrolled off, then the screen, joined by `\n`.
    pub text: String,
    /// True when more lines scrolled off than were kept.
    pub lines_dropped: bool,
}

/// The most lines above the screen a re-parse may keep for a pane this
/// wide: `wanted`, lowered so that the scratch model stays within
/// [`HISTORY_MODEL_BYTES`].
pub fn line_limit(size: Size, wanted: usize) -> usize {
    let line_cost = usize::from(size.cols.max(1)) * SCREEN_CELL_BYTES;
    wanted.min(HISTORY_MODEL_BYTES / line_cost)
}

/// Parses `output` on a blank screen of `size` that keeps up to `lines`
/// lines above it, and returns them and the screen as text. Rows the
/// terminal wrapped are joined; trailing blanks are trimmed.
///
/// Returns `None` when the scratch model fails on the output (a panic
/// inside it, contained).
pub fn render(output: &[u8], size: Size, lines: usize) -> Option<RenderedHistory> {
    crate::contained::contained("the history's terminal model", || render_unguarded(output, size, lines))
}

fn render_unguarded(output: &[u8], size: Size, lines: usize) -> RenderedHistory {
    // One more line than asked for tells whether any were dropped.
    let mut parser = vt100::Parser::new(size.rows, size.cols, lines + 1);
    parser.process(output);
    let screen = parser.screen_mut();
    screen.set_scrollback(usize::MAX);
    let held = screen.scrollback();
    let lines_dropped = held > lines;
    let skip = held.saturating_sub(lines);

    let mut text = String::new();
    let mut offset = held;
    let mut index = 0;
    while offset > 0 {
        // With the view `offset` lines back, visible row `i` shows the
        // line `held - offset + i` of the scrollback.
        screen.set_scrollback(offset);
        let take = offset.min(usize::from(size.rows));
        for (row, contents) in screen.rows(0, size.cols).take(take).enumerate() {
            if index >= skip {
                text.push_str(&contents);
                // `rows` has already dropped trailing blanks.
                let wrapped = screen.row_wrapped(row as u16);
                if !wrapped {
                    text.push('\n');
                }
            }
            index += 1;
        }
        offset -= take;
    }
    screen.set_scrollback(0);
    text.push_str(&screen.contents());
    RenderedHistory { text, lines_dropped }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZE: Size = Size { cols: 10, rows: 3 };

    fn numbered(count: usize) -> Vec<u8> {
        (1..=count).map(|n| format!("line {n}\r\n")).collect::<String>().into_bytes()
    }

    #[test]
    fn lines_that_scrolled_off_come_before_the_screen() {
        let rendered = render_unguarded(&numbered(6), SIZE, 100);
        assert_eq!(rendered.text, "line 1\nline 2\nline 3\nline 4\nline 5\nline 6");
        assert!(!rendered.lines_dropped);
    }

    #[test]
    fn only_the_newest_lines_are_kept() {
        let rendered = render_unguarded(&numbered(10), SIZE, 4);
        // 8 lines scrolled off (two are on the screen with the empty last row).
        assert_eq!(rendered.text, "line 5\nline 6\nline 7\nline 8\nline 9\nline 10");
        assert!(rendered.lines_dropped);
    }

    #[test]
    fn wrapped_rows_come_back_as_one_line() {
        let rendered = render_unguarded(b"0123456789abcdefghij\r\nx\r\ny\r\nz", SIZE, 100);
        assert_eq!(rendered.text, "0123456789abcdefghij\nx\ny\nz");
        assert!(!rendered.lines_dropped);
    }

    #[test]
    fn output_the_scratch_model_fails_on_is_contained() {
        // A wide character in one column makes the vt100 model panic.
        assert_eq!(render("\u{6f22}".as_bytes(), Size { cols: 1, rows: 5 }, 10), None);
        assert!(render(b"fine", SIZE, 10).is_some());
    }

    #[test]
    fn nothing_scrolled_off_gives_the_screen() {
        let rendered = render_unguarded(b"\x1b[1mbold\x1b[m", SIZE, 100);
        assert_eq!(rendered.text, "bold");
    }

    #[test]
    fn wide_panes_keep_fewer_lines() {
        assert_eq!(line_limit(Size { cols: 80, rows: 24 }, 1000), 1000);
        assert_eq!(line_limit(Size { cols: 10_000, rows: 24 }, 1000), HISTORY_MODEL_BYTES / 360_000);
    }
}
