//! Snapshots within their bounds, whatever a program draws.
//!
//! A screen's `formatted` bytes grow with what each cell carries: a
//! 1000x250 pane with a different true-colour pen and a letter with nine
//! combining marks in every cell redraws in about 16 MB, over what a frame
//! can carry and what a pane's record may hold. So every snapshot is held
//! to `panehost_ipc`'s bounds ([`MAX_SNAPSHOT_FORMATTED_LEN`],
//! [`MAX_SNAPSHOT_TEXT_LEN`], [`MAX_SNAPSHOT_TITLE_LEN`]): past them it is
//! drawn without colours and attributes (each row's text at its place),
//! then cut to the rows that fit, and marked `trimmed`. A screen of plain
//! text never comes near them.

use panehost_ipc::screen::{MAX_SNAPSHOT_FORMATTED_LEN, MAX_SNAPSHOT_TEXT_LEN, MAX_SNAPSHOT_TITLE_LEN};

/// The title, cut to its bound on a character boundary; whether it was cut.
pub(super) fn title(title: String) -> (String, bool) {
    let within = title_within_bound(&title);
    if within.len() == title.len() {
        return (title, false);
    }
    (within.to_owned(), true)
}

/// The longest start of `title` within its bound that ends on a character
/// boundary: what `list` and `pane_changed` carry of a window title.
pub(super) fn title_within_bound(title: &str) -> &str {
    prefix_within(title, MAX_SNAPSHOT_TITLE_LEN)
}

/// The screen's text, cut to its bound after the last whole row that fits;
/// whether it was cut.
pub(super) fn text(text: String) -> (String, bool) {
    if text.len() <= MAX_SNAPSHOT_TEXT_LEN {
        return (text, false);
    }
    let (cut, _) = cut_at_char(text, MAX_SNAPSHOT_TEXT_LEN);
    match cut.rfind('\n') {
        Some(end) => (cut[..end].to_owned(), true),
        None => (cut, true),
    }
}

/// Bytes that redraw `screen` (and set `title`, already within its bound)
/// on a blank terminal of its size, within [`MAX_SNAPSHOT_FORMATTED_LEN`];
/// whether they are less than the whole screen with its colours.
pub(super) fn formatted(screen: &vt100::Screen, title: &str) -> (Vec<u8>, bool) {
    let title_sequence = title_sequence(title);
    let mut whole = screen.state_formatted();
    if whole.len() + title_sequence.len() <= MAX_SNAPSHOT_FORMATTED_LEN {
        whole.extend_from_slice(&title_sequence);
        return (whole, false);
    }
    drop(whole);
    (plain(screen, &title_sequence), true)
}

/// The screen's text without colours or attributes, each row at its place,
/// as many rows as fit, then the input modes, the cursor and the title.
fn plain(screen: &vt100::Screen, title_sequence: &[u8]) -> Vec<u8> {
    let mut tail = screen.input_mode_formatted();
    tail.extend_from_slice(&screen.cursor_state_formatted());
    tail.extend_from_slice(title_sequence);
    let room = MAX_SNAPSHOT_FORMATTED_LEN.saturating_sub(tail.len());
    let (_, cols) = screen.size();
    let mut drawing = Vec::new();
    for (index, row) in screen.rows(0, cols).enumerate() {
        let place = format!("\x1b[{};1H", index + 1);
        if drawing.len() + place.len() + row.len() > room {
            break;
        }
        drawing.extend_from_slice(place.as_bytes());
        drawing.extend_from_slice(row.as_bytes());
    }
    drawing.extend_from_slice(&tail);
    drawing
}

fn title_sequence(title: &str) -> Vec<u8> {
    if title.is_empty() {
        return Vec::new();
    }
    format!("\x1b]2;{title}\x07").into_bytes()
}

/// `text` cut to at most `max` bytes on a character boundary.
fn cut_at_char(mut text: String, max: usize) -> (String, bool) {
    let end = prefix_within(&text, max).len();
    if end == text.len() {
        return (text, false);
    }
    text.truncate(end);
    (text, true)
}

/// The longest start of `text` of at most `max` bytes that ends on a
/// character boundary.
fn prefix_within(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 1000x250 screen with a different true-colour pen and a letter
    /// with nine combining marks in every cell.
    fn heavy_screen() -> vt100::Parser {
        let mut parser = vt100::Parser::new(250, 1000, 0);
        let cell = format!("\u{1D400}{}", "\u{0301}".repeat(9));
        let pens =
            ["\x1b[38;2;255;255;255;48;2;254;254;254;1;3;4;7m", "\x1b[38;2;253;253;253;48;2;252;252;252;22;23;24;27m"];
        for row in 0..250 {
            let mut line = format!("\x1b[{};1H", row + 1);
            for col in 0..1000 {
                line.push_str(pens[(row + col) % 2]);
                line.push_str(&cell);
            }
            parser.process(line.as_bytes());
        }
        parser
    }

    #[test]
    fn a_screen_past_the_bound_is_drawn_plain_within_it_and_redraws_its_text() {
        let parser = heavy_screen();
        assert!(parser.screen().state_formatted().len() > MAX_SNAPSHOT_FORMATTED_LEN, "the case is over the bound");
        let (drawing, trimmed) = formatted(parser.screen(), "a title");
        assert!(trimmed);
        assert!(drawing.len() <= MAX_SNAPSHOT_FORMATTED_LEN, "{}", drawing.len());
        // What it draws is the screen's text, row for row, as far as it
        // goes.
        let mut redrawn = vt100::Parser::new(250, 1000, 0);
        redrawn.process(&drawing);
        let rows_drawn = redrawn.screen().rows(0, 1000).take_while(|row| !row.is_empty()).count();
        assert!(rows_drawn > 0);
        let original: Vec<String> = parser.screen().rows(0, 1000).take(rows_drawn).collect();
        let copy: Vec<String> = redrawn.screen().rows(0, 1000).take(rows_drawn).collect();
        assert_eq!(original, copy);
        assert_eq!(redrawn.screen().cursor_position(), parser.screen().cursor_position());

        let (text, cut) = text(parser.screen().contents());
        assert!(cut && text.len() <= MAX_SNAPSHOT_TEXT_LEN && text.ends_with('\u{0301}'), "cut after a whole row");
    }

    #[test]
    fn a_plain_screen_is_whole() {
        let mut parser = vt100::Parser::new(250, 1000, 0);
        parser.process(b"\x1b[31mred\x1b[m plain");
        let (drawing, trimmed) = formatted(parser.screen(), "");
        assert!(!trimmed);
        assert_eq!(drawing, parser.screen().state_formatted());
        assert_eq!(text("short".into()), ("short".to_owned(), false));
    }

    #[test]
    fn a_title_is_cut_on_a_character_boundary() {
        let long = "é".repeat(MAX_SNAPSHOT_TITLE_LEN);
        assert_eq!(title_within_bound(&long), title(long.clone()).0, "list and snapshots cut alike");
        assert_eq!(title_within_bound("short"), "short");
        assert_eq!(title_within_bound(""), "");
        let (cut, trimmed) = title(long);
        assert!(trimmed);
        assert!(cut.len() <= MAX_SNAPSHOT_TITLE_LEN && cut.chars().all(|c| c == 'é'));
    }
}
