//! Scripted answers: which text answers a prompt, and how fast it streams.
//!
//! The prompt is the text of the last user message of a request. Rules are
//! tried in order, and the first whose `match` is a substring of the prompt
//! (case-sensitive) answers:
//!
//! 1. the entries of the `--script` file, in file order;
//! 2. `PING` answers `PONG`; `EARLYBIRD` answers `EARLYBIRD-ANSWERED`;
//! 3. `SLOW` answers `slow answer` sixty times (120 words), streamed one word
//!    every 500 ms, so the whole answer takes about a minute;
//! 4. a prompt that asks to "Reply with exactly this JSON object" (as
//!    panehost's completion receipt does) answers that object, verbatim:
//!    the first balanced `{...}` of its last text part;
//! 5. anything else answers `echo: ` followed by the prompt's last text part.
//!
//! A script file is a JSON list of
//! `{"match": "substring", "answer": "text", "delay_ms": N, "word_delay_ms": N}`;
//! `delay_ms` (default 0) is waited before the first byte of the response,
//! `word_delay_ms` (default 0) between two streamed words.
//!
//! An entry may also hold `"tool_call": {"path": "/abs/file", "content":
//! "text", "prefer": "write" | "shell"}` (see `tools.rs`): its prompt is then
//! answered with a call of the client's own file-writing or shell tool, and
//! the request that carries that tool's result with `answer` followed by
//! what the result said.

use crate::tools::CallSpec;
use serde::Deserialize;
use std::path::Path;
use std::time::Duration;

/// One rule of a script file.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    #[serde(rename = "match")]
    pub pattern: String,
    pub answer: String,
    #[serde(default)]
    pub delay_ms: u64,
    #[serde(default)]
    pub word_delay_ms: u64,
    /// Answer with a call of the client's writing tool first.
    #[serde(default)]
    pub tool_call: Option<CallSpec>,
}

/// The rules, the file's first and then the built-in ones.
#[derive(Debug, Clone)]
pub struct Script {
    entries: Vec<Entry>,
}

/// What a request's last user message said.
#[derive(Debug, Clone, Default)]
pub struct Prompt {
    /// All text parts of the message, joined with `\n`: what rules match.
    pub text: String,
    /// The last non-empty text part, trimmed: what `echo:` repeats. Clients
    /// put their own notes (environment, reminders) in earlier parts.
    pub last_part: String,
}

impl Prompt {
    /// A prompt from the text parts of one message, in order.
    pub fn from_parts<'a>(parts: impl IntoIterator<Item = &'a str>) -> Prompt {
        let parts: Vec<&str> = parts.into_iter().collect();
        let last_part = parts.iter().rev().map(|p| p.trim()).find(|p| !p.is_empty()).unwrap_or("").to_string();
        Prompt { text: parts.join("\n"), last_part }
    }
}

/// The answer chosen for a prompt.
#[derive(Debug, Clone)]
pub struct Answer {
    pub text: String,
    /// Before the first byte of the response (the rule's own; `--delay-ms` adds to it).
    pub delay: Duration,
    /// Between two streamed words.
    pub word_delay: Duration,
    /// Which rule answered, for the log.
    pub rule: String,
    /// The entry's tool call, when it asks for one.
    pub tool_call: Option<CallSpec>,
}

impl Answer {
    /// The answer cut into streamable pieces: each word with the whitespace
    /// after it. The pieces concatenate to exactly the answer; an empty answer
    /// is one empty piece.
    pub fn pieces(&self) -> Vec<String> {
        pieces(&self.text)
    }

    /// How long a whole (non-streamed) answer takes: one word delay between
    /// every two pieces.
    pub fn streaming_time(&self) -> Duration {
        let gaps = self.pieces().len().saturating_sub(1) as u32;
        self.word_delay * gaps
    }
}

impl Script {
    /// The built-in rules only.
    pub fn builtin() -> Script {
        Script { entries: builtin_entries() }
    }

    /// A script file's rules followed by the built-in ones.
    pub fn load(path: &Path) -> Result<Script, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read script {}: {e}", path.display()))?;
        let mut entries: Vec<Entry> =
            serde_json::from_str(&text).map_err(|e| format!("bad script {}: {e}", path.display()))?;
        entries.extend(builtin_entries());
        Ok(Script { entries })
    }

    /// The first rule that matches, or the echo.
    pub fn answer(&self, prompt: &Prompt) -> Answer {
        for entry in &self.entries {
            if prompt.text.contains(&entry.pattern) {
                return Answer {
                    text: entry.answer.clone(),
                    delay: Duration::from_millis(entry.delay_ms),
                    word_delay: Duration::from_millis(entry.word_delay_ms),
                    rule: format!("match {:?}", entry.pattern),
                    tool_call: entry.tool_call.clone(),
                };
            }
        }
        if prompt.last_part.contains(OBJECT_REQUEST) {
            if let Some(object) = first_object(&prompt.last_part) {
                return Answer {
                    text: unquoted(object),
                    delay: Duration::ZERO,
                    word_delay: Duration::ZERO,
                    rule: "object".into(),
                    tool_call: None,
                };
            }
        }
        Answer {
            text: format!("echo: {}", prompt.last_part),
            delay: Duration::ZERO,
            word_delay: Duration::ZERO,
            rule: "echo".into(),
            tool_call: None,
        }
    }
}

/// The words of a prompt that asks for one JSON object back.
const OBJECT_REQUEST: &str = "Reply with exactly this JSON object";

/// The first balanced `{...}` of `text`.
fn first_object(text: &str) -> Option<&str> {
    let start = text.find('{')?;
    let mut depth = 0usize;
    for (index, character) in text[start..].char_indices() {
        match character {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[start..=start + index]);
                }
            }
            _ => {}
        }
    }
    None
}

/// The object as it was meant: some clients pass the user's text on inside
/// a JSON string of their own, where its quotes arrive escaped (`{\"k\":1}`).
fn unquoted(object: &str) -> String {
    if serde_json::from_str::<serde_json::Value>(object).is_err() {
        let plain = object.replace("\\\"", "\"");
        if serde_json::from_str::<serde_json::Value>(&plain).is_ok() {
            return plain;
        }
    }
    object.to_owned()
}

fn builtin_entries() -> Vec<Entry> {
    vec![
        Entry { pattern: "PING".into(), answer: "PONG".into(), delay_ms: 0, word_delay_ms: 0, tool_call: None },
        Entry {
            pattern: "EARLYBIRD".into(),
            answer: "EARLYBIRD-ANSWERED".into(),
            delay_ms: 0,
            word_delay_ms: 0,
            tool_call: None,
        },
        Entry {
            pattern: "SLOW".into(),
            answer: vec!["slow answer"; 60].join(" "),
            delay_ms: 0,
            word_delay_ms: 500,
            tool_call: None,
        },
    ]
}

/// Deterministic token counts: whitespace-separated words.
pub fn words(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

/// Each word with the whitespace that follows it (leading whitespace stays
/// with the first word).
pub fn pieces(text: &str) -> Vec<String> {
    let mut pieces = Vec::new();
    let mut start = 0;
    let mut seen_word = false;
    let mut after_word_space = false;
    for (i, c) in text.char_indices() {
        if c.is_whitespace() {
            after_word_space |= seen_word;
        } else {
            if after_word_space {
                pieces.push(text[start..i].to_string());
                start = i;
                after_word_space = false;
            }
            seen_word = true;
        }
    }
    if start < text.len() || pieces.is_empty() {
        pieces.push(text[start..].to_string());
    }
    pieces
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_concatenate_to_the_text() {
        for text in ["", "PONG", "echo: hello  world", "  lead and trail  ", "a\nb\tc"] {
            assert_eq!(pieces(text).concat(), text);
        }
        assert_eq!(pieces("echo: hi there"), ["echo: ", "hi ", "there"]);
    }

    #[test]
    fn rules_in_order() {
        let script = Script::builtin();
        assert_eq!(script.answer(&Prompt::from_parts(["say PING"])).text, "PONG");
        let slow = script.answer(&Prompt::from_parts(["SLOW please"]));
        assert_eq!(words(&slow.text), 120);
        assert_eq!(slow.streaming_time(), Duration::from_millis(500 * 119));
        let echo = script.answer(&Prompt::from_parts(["<note>", " hello "]));
        assert_eq!(echo.text, "echo: hello");
        let asked = r#"Reply with exactly this JSON object and nothing else. {"k":{"v":"1"}} thanks"#;
        let object = script.answer(&Prompt::from_parts(["<note>", asked]));
        assert_eq!((object.text.as_str(), object.rule.as_str()), (r#"{"k":{"v":"1"}}"#, "object"));
        let escaped = script.answer(&Prompt::from_parts([r#"Reply with exactly this JSON object: {\"k\":\"v\"}"#]));
        assert_eq!(escaped.text, r#"{"k":"v"}"#, "quotes escaped by the client's own wrapping are undone");
        let unbalanced = script.answer(&Prompt::from_parts(["Reply with exactly this JSON object {"]));
        assert_eq!(unbalanced.rule, "echo");
    }
}
