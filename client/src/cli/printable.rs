//! Printable text: what the `panehost` command prints of what a host said,
//! with nothing left in it that a terminal would act on.
//!
//! A host's strings (pane ids, runtime names, titles, screen text, error
//! messages) are text to show, never commands for the operator's terminal:
//! a host reached with `--remote`, or a program serving the socket, could
//! otherwise write `ESC ] 52` (the clipboard), retitle the terminal or
//! clear it. Every control character (Unicode's `Cc`: the C0 controls
//! U+0000 to U+001F, DEL U+007F and the C1 controls U+0080 to U+009F, which
//! some terminals take as ESC sequences: U+009B is CSI) is written escaped:
//!
//! - in text, as Rust writes it: `\u{1b}`, `\u{9b}`, `\r`, `\t`; a line
//!   ([`line`]) escapes newlines too, multi-line text ([`text`]) keeps them
//!   (the rows of a screen);
//! - in JSON, as JSON writes it: `\u001b`, `\u009b`. `serde_json` escapes
//!   the C0 controls in strings but writes DEL and the C1 controls as they
//!   are; these are escaped too, which leaves every string's value as it
//!   was ([`json`], [`json_line`], [`json_text`]).
//!
//! What `attach` and `events` (without `--json`) write is a pane's output
//! itself, as a terminal would show it, and does not pass through here.

use serde_json::Value;
use std::borrow::Cow;
use std::fmt::Write as _;

/// `text` for one line: every control character escaped, newlines too.
pub(crate) fn line(text: &str) -> Cow<'_, str> {
    escaped(text, |_| false, rust_escape)
}

/// Multi-line `text`: every control character escaped but the newline.
pub(crate) fn text(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c == '\n', rust_escape)
}

/// `value` as compact JSON with every control character escaped.
pub(crate) fn json(value: &Value) -> String {
    // Compact JSON holds no control character outside its strings, and
    // `\u00XX` inside a string is the character itself.
    json_line(&value.to_string()).into_owned()
}

/// A line of JSON text (a frame of the host's, say) with every control
/// character written as a JSON escape. In valid JSON a control character
/// can only stand inside a string (where the escape means the same
/// character) or be whitespace between tokens; text that is not valid JSON
/// stays invalid, and is shown on one line all the same.
pub(crate) fn json_line(text: &str) -> Cow<'_, str> {
    escaped(text, |_| false, json_escape)
}

/// Multi-line JSON text (pretty-printed): as [`json_line`], the newlines
/// between tokens kept.
pub(crate) fn json_text(text: &str) -> Cow<'_, str> {
    escaped(text, |c| c == '\n', json_escape)
}

/// `text` with each control character that `keep` does not keep written by
/// `escape`; borrowed when there is none.
fn escaped(text: &str, keep: impl Fn(char) -> bool, escape: fn(char, &mut String)) -> Cow<'_, str> {
    let shown = |c: char| !c.is_control() || keep(c);
    if text.chars().all(shown) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if shown(c) {
            out.push(c);
        } else {
            escape(c, &mut out);
        }
    }
    Cow::Owned(out)
}

/// `\u{1b}`, `\n`, `\u{9b}`.
fn rust_escape(c: char, out: &mut String) {
    out.extend(c.escape_default());
}

/// `\u001b`: every control character is below U+0100.
fn json_escape(c: char, out: &mut String) {
    let _ = write!(out, "\\u{:04x}", u32::from(c));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every character a terminal may act on: C0, DEL, C1.
    fn controls() -> impl Iterator<Item = char> {
        (0u32..0x20).chain(0x7f..0xa0).filter_map(char::from_u32)
    }

    const HOSTILE: &str = "\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b]0;title\x07\u{9b}31m\r\nrow 2\u{7f}";

    #[test]
    fn a_line_shows_every_control_character_escaped() {
        let shown = line(HOSTILE);
        assert!(!shown.chars().any(char::is_control), "{shown:?}");
        assert_eq!(shown, "\\u{1b}]52;c;cHduZWQ=\\u{7}\\u{1b}[2J\\u{1b}]0;title\\u{7}\\u{9b}31m\\r\\nrow 2\\u{7f}");
        for c in controls() {
            assert!(!line(&c.to_string()).chars().any(char::is_control), "{c:?}");
        }
    }

    #[test]
    fn text_keeps_its_newlines_and_nothing_else() {
        let shown = text(HOSTILE);
        assert_eq!(shown.lines().count(), 2, "{shown:?}");
        assert!(!shown.chars().any(|c| c.is_control() && c != '\n'), "{shown:?}");
        assert!(shown.contains("\\u{9b}31m\\r\nrow 2\\u{7f}"), "{shown:?}");
    }

    #[test]
    fn text_without_controls_is_borrowed_as_it_is() {
        for plain in ["", "p1 shell running", "tête-à-tête 漢字 ✓", "a\\u{1b}b"] {
            assert!(matches!(line(plain), Cow::Borrowed(same) if same == plain));
        }
        assert!(matches!(text("row 1\nrow 2"), Cow::Borrowed(_)));
    }

    #[test]
    fn json_stays_json_and_holds_the_same_strings() {
        let every: String = controls().collect();
        let value = serde_json::json!({"title": HOSTILE, "every": every, "key\u{9b}": ["\u{85}", 1]});
        let shown = json(&value);
        assert!(!shown.chars().any(char::is_control), "{shown:?}");
        assert!(shown.contains("\\u009b") && shown.contains("\\u007f") && shown.contains("\\u001b"), "{shown}");
        assert_eq!(serde_json::from_str::<Value>(&shown).unwrap(), value);
    }

    #[test]
    fn pretty_json_keeps_its_lines() {
        let value = serde_json::json!([{"detail": "\u{9b}2J\x1b[2J"}]);
        let pretty = serde_json::to_string_pretty(&value).unwrap();
        let shown = json_text(&pretty);
        assert_eq!(shown.lines().count(), pretty.lines().count());
        assert!(!shown.chars().any(|c| c.is_control() && c != '\n'), "{shown:?}");
        assert_eq!(serde_json::from_str::<Value>(&shown).unwrap(), value);
    }

    #[test]
    fn a_frame_that_is_not_json_is_still_one_inert_line() {
        let shown = json_line("{\"a\":\"\x1b[2J\n\u{9b}");
        assert_eq!(shown, "{\"a\":\"\\u001b[2J\\u000a\\u009b");
    }
}
