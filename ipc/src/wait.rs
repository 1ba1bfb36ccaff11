//! `wait_for`: wait until a pane's screen, or its output, matches a
//! pattern (revision 3).
//!
//! The pattern is a regular expression in the syntax of the Rust `regex`
//! crate (no look-around, no back-references: matching takes time linear
//! in the text). Bounded here: its length, the time a wait may take, and
//! the matched text an answer carries.

use crate::pane::PaneId;
use serde::{Deserialize, Serialize};

/// The longest pattern, in bytes.
pub const MAX_WAIT_PATTERN_LEN: usize = 1024;
/// How long a wait takes at most when the request names no timeout.
pub const DEFAULT_WAIT_TIMEOUT_MS: u64 = 30_000;
/// The longest timeout a request may name: a day.
pub const MAX_WAIT_TIMEOUT_MS: u64 = 24 * 60 * 60 * 1000;
/// The most bytes of matched text an answer carries (cut at a character
/// boundary).
pub const MAX_MATCHED_LEN: usize = 4096;
/// How far back in the output a match may begin before the bytes most
/// recently read: a match longer than this that arrives in pieces may be
/// missed.
pub const OUTPUT_MATCH_SPAN: usize = 64 * 1024;

/// Parameters of `wait_for`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WaitForParams {
    /// The pane.
    pub pane: PaneId,
    /// The regular expression to wait for.
    pub pattern: String,
    /// What is matched: the screen (the default) or the output.
    #[serde(default)]
    pub target: WaitTarget,
    /// For `output`: the offset the output is read from. Default: the
    /// pane's end when the request is handled, so only new output counts.
    /// Ignored for `screen`.
    #[serde(default)]
    pub from: Option<u64>,
    /// How long to wait, in milliseconds (default
    /// [`DEFAULT_WAIT_TIMEOUT_MS`], at most [`MAX_WAIT_TIMEOUT_MS`]).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

/// What `wait_for` matches the pattern against.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum WaitTarget {
    /// The visible screen as text (rows joined by `\n`), as the terminal
    /// model has it: what a person looking at the pane would read. Checked
    /// at once, then whenever the model has parsed more output.
    #[default]
    Screen,
    /// The output bytes as the program wrote them, escape sequences
    /// included, from `from` on.
    Output,
}

impl WaitTarget {
    /// The name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            WaitTarget::Screen => "screen",
            WaitTarget::Output => "output",
        }
    }
}

/// Answer of `wait_for`: where the pattern was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct WaitMatch {
    /// The pane.
    pub pane: PaneId,
    /// What was matched.
    pub target: WaitTarget,
    /// For `screen`: the output offset the matching screen reflects (every
    /// byte before it, none after). For `output`: the offset just after
    /// the match's last byte; a subscription from there sees what came
    /// next.
    pub offset: u64,
    /// The text that matched (invalid UTF-8 replaced), at most
    /// [`MAX_MATCHED_LEN`] bytes.
    pub matched: String,
}

/// The first `max` bytes of `text` at most, cut at a character boundary.
pub fn cut_matched(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matched_text_is_cut_at_a_character_boundary() {
        assert_eq!(cut_matched("abc", 3), "abc");
        assert_eq!(cut_matched("abcd", 3), "abc");
        // "é" is two bytes: a cut inside it moves before it.
        assert_eq!(cut_matched("aé", 2), "a");
        assert_eq!(cut_matched("", 0), "");
    }

    #[test]
    fn the_target_defaults_to_the_screen() {
        let params: WaitForParams = serde_json::from_str(r#"{"pane":"p1","pattern":"\\$ $"}"#).unwrap();
        assert_eq!(params.target, WaitTarget::Screen);
        assert_eq!((params.from, params.timeout_ms), (None, None));
    }
}
