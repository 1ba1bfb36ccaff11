//! The error messages docs/PROTOCOL.md shows are messages the code sends.
//!
//! Every `error` and `refused` message of a tagged example must match one of
//! the message templates written in the sources of the crates that answer
//! clients (a string literal, its `{...}` placeholders standing for what the
//! host fills in). A named placeholder stands for one word; one named for
//! prose (an error, a reason), or unnamed, for any text. So a
//! message the host never sends, or one whose wording drifted, fails here
//! with its line.

use regex::Regex;
use serde_json::Value;
use std::path::{Path, PathBuf};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/..");

/// The crates whose messages reach a client.
const SOURCES: [&str; 4] = ["host/src", "ipc/src", "adapters/src", "client/src"];

/// Placeholder names that stand for prose rather than one word.
const PROSE: [&str; 10] = ["err", "error", "reason", "why", "message", "detail", "who", "what", "cause", "wanted"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap().flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs") {
            out.push(path);
        }
    }
}

/// The contents of every string literal of a Rust source (`"..."`, with
/// `\` line continuations joined; raw strings are left out: no message is
/// written as one).
fn string_literals(source: &str) -> Vec<String> {
    let mut literals = Vec::new();
    let mut chars = source.chars().peekable();
    let mut previous = ' ';
    while let Some(c) = chars.next() {
        // Skip line comments, and character literals such as '"'.
        if c == '/' && chars.peek() == Some(&'/') {
            for next in chars.by_ref() {
                if next == '\n' {
                    break;
                }
            }
            previous = '\n';
            continue;
        }
        if c == '\'' {
            let rest: String = chars.clone().take(3).collect();
            if rest.starts_with("\"'") || rest.starts_with("\\\"'") {
                chars.nth(rest.find('\'').unwrap());
                continue;
            }
        }
        if c == '"' && previous != 'r' && previous != '#' {
            let mut literal = String::new();
            while let Some(next) = chars.next() {
                match next {
                    '"' => break,
                    '\\' => match chars.next() {
                        Some('\n') => {
                            while chars.peek().is_some_and(|c| c.is_whitespace()) {
                                chars.next();
                            }
                        }
                        Some('n') => literal.push('\n'),
                        Some('t') => literal.push('\t'),
                        Some(other) => literal.push(other),
                        None => {}
                    },
                    other => literal.push(other),
                }
            }
            literals.push(literal);
        }
        previous = c;
    }
    literals
}

/// A template as an anchored pattern, or `None` when it holds no words
/// to match on.
fn template_pattern(template: &str) -> Option<Regex> {
    let words = template.split_whitespace().filter(|word| !word.contains(['{', '}'])).count();
    if words < 2 {
        return None;
    }
    let mut pattern = String::from("^");
    let mut rest = template;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("{{") {
            pattern.push_str(r"\{");
            rest = after;
        } else if let Some(after) = rest.strip_prefix("}}") {
            pattern.push_str(r"\}");
            rest = after;
        } else if rest.starts_with('{') {
            let Some(end) = rest.find('}') else {
                pattern.push_str(r"\{");
                rest = &rest[1..];
                continue;
            };
            let name = rest[1..end].split(':').next().unwrap_or("");
            // An unnamed (or numbered) placeholder's argument is not known
            // here: any text.
            let unnamed = name.chars().all(|c| c.is_ascii_digit());
            pattern.push_str(if unnamed || PROSE.contains(&name) { "(?s:.+)" } else { r"\S+" });
            rest = &rest[end + 1..];
        } else {
            let next = rest.find(['{', '}']).map_or(rest.len(), |at| at.max(1));
            pattern.push_str(&regex::escape(&rest[..next]));
            rest = &rest[next..];
        }
    }
    pattern.push('$');
    Regex::new(&pattern).ok()
}

fn templates() -> Vec<(String, Regex)> {
    let mut files = Vec::new();
    for dir in SOURCES {
        rust_files(&Path::new(ROOT).join(dir), &mut files);
    }
    let mut templates = Vec::new();
    for file in files {
        let source = std::fs::read_to_string(&file).unwrap();
        // A module's tests come last; their strings are no messages.
        let code = source.split("#[cfg(test)]").next().unwrap_or("");
        for literal in string_literals(code) {
            if let Some(pattern) = template_pattern(&literal) {
                templates.push((literal, pattern));
            }
        }
    }
    templates
}

/// Every error or refusal message of the tagged examples, with its line.
fn documented_messages() -> Vec<(usize, String)> {
    let doc = std::fs::read_to_string(Path::new(ROOT).join("docs/PROTOCOL.md")).unwrap();
    let mut messages = Vec::new();
    let mut block: Option<(usize, Vec<&str>)> = None;
    for (index, line) in doc.lines().enumerate() {
        let trimmed = line.trim();
        match &mut block {
            None if trimmed == "```json server" || trimmed == "```json handshake" => {
                block = Some((index + 1, Vec::new()))
            }
            None => {}
            Some((start, lines)) if trimmed == "```" => {
                let value: Value = serde_json::from_str(&lines.join("\n"))
                    .unwrap_or_else(|err| panic!("PROTOCOL.md line {start}: not JSON: {err}"));
                let error = value.pointer("/error/error").or_else(|| value.get("refused"));
                if let Some(message) = error.and_then(|error| error.get("message")).and_then(Value::as_str) {
                    messages.push((*start, message.to_owned()));
                }
                block = None;
            }
            Some((_, lines)) => lines.push(line),
        }
    }
    messages
}

#[test]
fn every_documented_error_message_is_one_the_code_sends() {
    let templates = templates();
    let messages = documented_messages();
    assert!(messages.len() >= 20, "found only {} error examples in PROTOCOL.md", messages.len());
    let unknown: Vec<String> = messages
        .iter()
        .filter(|(_, message)| !templates.iter().any(|(_, pattern)| pattern.is_match(message)))
        .map(|(line, message)| format!("PROTOCOL.md line {line}: {message:?}"))
        .collect();
    assert!(unknown.is_empty(), "messages no template of the code makes:\n{}", unknown.join("\n"));
}

/// The check can fail: messages the documentation once showed, which the
/// host never sent, match no template.
#[test]
fn messages_the_host_never_sent_match_no_template() {
    let templates = templates();
    for invented in [
        "no pane has the id p9",
        "a frame of 2097152 bytes exceeds the limit of 1048576 bytes",
        "this host speaks protocol 1; the client asked for 2",
        "the first frame must be a Hello, such as {\"protocol\":1,\"encoding\":\"json\"}",
        "the pane p1 is not running a turn",
        "no runtime has the id emacs",
    ] {
        let matched: Vec<&str> =
            templates.iter().filter(|(_, pattern)| pattern.is_match(invented)).map(|(t, _)| t.as_str()).collect();
        assert!(matched.is_empty(), "{invented:?} matches {matched:?}");
    }
    // And real ones do.
    for sent in ["no pane p9", "frames to the host are limited to 1048576 bytes"] {
        assert!(templates.iter().any(|(_, pattern)| pattern.is_match(sent)), "{sent:?}");
    }
}
