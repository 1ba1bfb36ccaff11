//! Tool calls: which of the tools a client declares writes a file or runs a
//! shell command, and the arguments that make it write the probe file.
//!
//! Dialect-neutral: each dialect reads its request's `tools` into
//! [`Declared`] and the tool result its client sent back into
//! [`ToolResult`], and renders the [`Call`] chosen here in its own shape.
//!
//! A tool **writes** when its parameters have a path property (`file_path`,
//! `path`, `filePath`, `absolute_path`, `filename`) and a content property
//! (`content`, `contents`, `file_text`, `text`) and no `old_string`-like
//! property (an edit). A tool **runs commands** when its parameters have a
//! `command` or `cmd` property. A script entry's `prefer` says which kind
//! is tried first; the other is the fallback.

use crate::script::{Answer, Prompt};
use serde::Deserialize;
use serde_json::{json, Map, Value};

/// What one request brings, read by its dialect.
#[derive(Debug, Clone, Default)]
pub struct Exchange {
    /// The last user message that is not a tool result.
    pub prompt: Prompt,
    /// The tools the request declares.
    pub tools: Vec<Declared>,
    /// The tool result, when the request's last message is one.
    pub result: Option<ToolResult>,
}

/// How long an excerpt of a tool result the final answer quotes.
const RESULT_EXCERPT: usize = 300;

/// Settles an answer whose entry asks for a tool call: the call itself
/// when the request has no tool result yet and declares a tool that
/// writes; else a text answer (`answer` followed by what the tool said, or
/// a note that no tool could write). Returns the call and a line for the
/// log.
pub fn settle(answer: &mut Answer, exchange: &Exchange, id: String) -> (Option<Call>, Option<String>) {
    let Some(spec) = answer.tool_call.clone() else { return (None, None) };
    if let Some(result) = &exchange.result {
        let name = result.name.as_deref().unwrap_or("the tool");
        let error = if result.is_error { " (marked as an error)" } else { "" };
        let excerpt = result.excerpt(RESULT_EXCERPT);
        answer.text = format!("{} TOOL-RESULT {name}{error}: {excerpt}", answer.text).trim_start().to_owned();
        return (None, Some(format!("tool result{error} from {name}: {excerpt:?}")));
    }
    match choose(&exchange.tools, &spec, id) {
        Some(call) => {
            let note = format!(
                "tool call {} ({}) {} of declared {}",
                call.name,
                call.kind.name(),
                call.arguments,
                describe(&exchange.tools)
            );
            (Some(call), Some(note))
        }
        None => {
            answer.text = format!("NO-WRITE-TOOL declared tools: {}", describe(&exchange.tools));
            (None, Some(format!("no tool that writes among {}", describe(&exchange.tools))))
        }
    }
}

/// What a script entry's `tool_call` asks for.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallSpec {
    /// The file to write: absolute, since some clients refuse relative paths.
    pub path: String,
    /// What to write into it.
    pub content: String,
    /// Which kind of tool is tried first (the other is the fallback).
    #[serde(default)]
    pub prefer: Kind,
}

/// The two kinds of tool that can write a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A file-writing tool (`Write`, `write_file`, `create`, …).
    #[default]
    Write,
    /// A shell tool (`Bash`, `run_shell_command`, `shell`, …).
    Shell,
}

impl Kind {
    fn other(self) -> Kind {
        match self {
            Kind::Write => Kind::Shell,
            Kind::Shell => Kind::Write,
        }
    }

    fn name(self) -> &'static str {
        match self {
            Kind::Write => "write",
            Kind::Shell => "shell",
        }
    }
}

/// One tool as a request declares it.
#[derive(Debug, Clone, PartialEq)]
pub struct Declared {
    pub name: String,
    /// Its parameters' JSON schema (`{}` when it declares none).
    pub parameters: Value,
}

/// The call the model makes.
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// The call's id, unique per request.
    pub id: String,
    pub name: String,
    /// The arguments, a JSON object.
    pub arguments: Value,
    pub kind: Kind,
}

/// The result of a tool, as the client sent it back.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ToolResult {
    /// The tool's name, where the dialect carries it.
    pub name: Option<String>,
    /// The result's text (JSON results as their text).
    pub text: String,
    /// Whether the client marked it as an error.
    pub is_error: bool,
}

impl ToolResult {
    /// The result on one line, cut at `max` characters.
    pub fn excerpt(&self, max: usize) -> String {
        crate::shorten(&self.text.split_whitespace().collect::<Vec<_>>().join(" "), max)
    }
}

const PATH_KEYS: &[&str] = &["file_path", "path", "filePath", "absolute_path", "filename"];
const CONTENT_KEYS: &[&str] = &["content", "contents", "file_text", "text"];
const EDIT_KEYS: &[&str] = &["old_string", "old_str", "oldString", "edits"];
const COMMAND_KEYS: &[&str] = &["command", "cmd"];

fn properties(tool: &Declared) -> Option<&Map<String, Value>> {
    tool.parameters["properties"].as_object()
}

fn first_key<'a>(props: &Map<String, Value>, keys: &[&'a str]) -> Option<&'a str> {
    keys.iter().copied().find(|key| props.contains_key(*key))
}

/// The kind of `tool`, if it can write a file.
pub fn kind_of(tool: &Declared) -> Option<Kind> {
    let props = properties(tool)?;
    let writes = first_key(props, PATH_KEYS).is_some()
        && first_key(props, CONTENT_KEYS).is_some()
        && first_key(props, EDIT_KEYS).is_none();
    if writes {
        Some(Kind::Write)
    } else if first_key(props, COMMAND_KEYS).is_some() {
        Some(Kind::Shell)
    } else {
        None
    }
}

/// The call that writes `spec`'s file with one of `tools`: a tool of the
/// preferred kind, else of the other; `None` when no tool can write. `id`
/// names the call.
pub fn choose(tools: &[Declared], spec: &CallSpec, id: String) -> Option<Call> {
    for kind in [spec.prefer, spec.prefer.other()] {
        if let Some(tool) = tools.iter().find(|tool| kind_of(tool) == Some(kind)) {
            return Some(Call { id, name: tool.name.clone(), arguments: arguments(tool, kind, spec), kind });
        }
    }
    None
}

/// The shell command that writes `spec`'s file.
pub fn shell_command(spec: &CallSpec) -> String {
    format!("printf '%s\\n' {} > {}", quote(&spec.content), quote(&spec.path))
}

/// `text` in single quotes for a POSIX shell.
fn quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

fn arguments(tool: &Declared, kind: Kind, spec: &CallSpec) -> Value {
    let mut args = Map::new();
    let Some(props) = properties(tool) else { return Value::Object(args) };
    match kind {
        Kind::Write => {
            if let (Some(path), Some(content)) = (first_key(props, PATH_KEYS), first_key(props, CONTENT_KEYS)) {
                args.insert(path.to_owned(), json!(spec.path));
                args.insert(content.to_owned(), json!(spec.content));
            }
        }
        Kind::Shell => {
            if let Some(key) = first_key(props, COMMAND_KEYS) {
                let command = shell_command(spec);
                let value =
                    if props[key]["type"] == "array" { json!(["bash", "-lc", command]) } else { json!(command) };
                args.insert(key.to_owned(), value);
            }
        }
    }
    // Whatever else the tool requires, filled with a plain value of its type.
    let required = tool.parameters["required"].as_array().map(Vec::as_slice).unwrap_or_default();
    for name in required.iter().filter_map(Value::as_str) {
        if !args.contains_key(name) {
            args.insert(name.to_owned(), filler(name, &props.get(name).cloned().unwrap_or(Value::Null)));
        }
    }
    Value::Object(args)
}

/// A plain value for a required property the probe has no use for.
fn filler(name: &str, schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|values| values.first()) {
        return first.clone();
    }
    let kind = match &schema["type"] {
        Value::Array(types) => types.iter().filter_map(Value::as_str).find(|t| *t != "null").unwrap_or("string"),
        other => other.as_str().unwrap_or("string"),
    };
    match kind {
        "boolean" => json!(false),
        "integer" | "number" => json!(30_000),
        "array" => json!([]),
        "object" => json!({}),
        _ => json!(format!("{name} for the write probe")),
    }
}

/// For the log: the declared tools, each with its kind when it can write.
pub fn describe(tools: &[Declared]) -> String {
    let names: Vec<String> = tools
        .iter()
        .map(|tool| match kind_of(tool) {
            Some(kind) => format!("{} ({})", tool.name, kind.name()),
            None => tool.name.clone(),
        })
        .collect();
    format!("[{}]", names.join(", "))
}

/// The text of a tool result's content: a string, a list of text parts, or
/// any other JSON as its text.
pub fn result_text(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Null => String::new(),
        Value::Array(parts) if parts.iter().all(|p| p["text"].is_string()) => {
            parts.iter().filter_map(|p| p["text"].as_str()).collect::<Vec<_>>().join("\n")
        }
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str, parameters: Value) -> Declared {
        Declared { name: name.into(), parameters }
    }

    fn spec(prefer: Kind) -> CallSpec {
        CallSpec { path: "/w/it's.txt".into(), content: "hi there".into(), prefer }
    }

    #[test]
    fn kinds_from_the_schema() {
        let write = tool("Write", json!({"properties": {"file_path": {}, "content": {}}}));
        let edit = tool("Edit", json!({"properties": {"file_path": {}, "old_string": {}, "content": {}}}));
        let shell = tool("Bash", json!({"properties": {"command": {"type": "string"}}}));
        let read = tool("Read", json!({"properties": {"file_path": {}}}));
        let none = tool("Other", json!({}));
        let kinds: Vec<Option<Kind>> = [&write, &edit, &shell, &read, &none].iter().map(|t| kind_of(t)).collect();
        assert_eq!(kinds, [Some(Kind::Write), None, Some(Kind::Shell), None, None]);
    }

    #[test]
    fn preferred_kind_first_then_the_other() {
        let tools = vec![
            tool("Read", json!({"properties": {"file_path": {}}})),
            tool("Bash", json!({"properties": {"command": {"type": "string"}, "timeout": {"type": "number"}}})),
            tool(
                "Write",
                json!({"properties": {"file_path": {}, "content": {}}, "required": ["file_path", "content"]}),
            ),
        ];
        let call = choose(&tools, &spec(Kind::Write), "c1".into()).unwrap();
        assert_eq!((call.name.as_str(), call.kind), ("Write", Kind::Write));
        assert_eq!(call.arguments, json!({"file_path": "/w/it's.txt", "content": "hi there"}));
        let call = choose(&tools, &spec(Kind::Shell), "c2".into()).unwrap();
        assert_eq!(call.arguments, json!({"command": "printf '%s\\n' 'hi there' > '/w/it'\\''s.txt'"}));
        let only_read = &tools[..1];
        assert_eq!(choose(only_read, &spec(Kind::Shell), "c3".into()), None);
        let no_write = &tools[..2];
        assert_eq!(choose(no_write, &spec(Kind::Write), "c4".into()).unwrap().name, "Bash");
    }

    #[test]
    fn array_commands_and_required_fillers() {
        let shell = tool(
            "shell",
            json!({
                "properties": {
                    "command": {"type": "array", "items": {"type": "string"}},
                    "mode": {"type": "string", "enum": ["sync", "async"]},
                    "wait": {"type": ["integer", "null"]},
                    "why": {"type": "string"},
                },
                "required": ["command", "mode", "wait", "why"],
            }),
        );
        let call = choose(&[shell], &spec(Kind::Write), "c".into()).unwrap();
        assert_eq!(call.arguments["command"].as_array().unwrap()[..2], [json!("bash"), json!("-lc")]);
        assert_eq!(call.arguments["mode"], "sync");
        assert_eq!(call.arguments["wait"], 30_000);
        assert!(call.arguments["why"].is_string());
    }

    #[test]
    fn result_texts() {
        assert_eq!(result_text(&json!("denied")), "denied");
        assert_eq!(result_text(&json!([{"type": "text", "text": "a"}, {"type": "text", "text": "b"}])), "a\nb");
        assert_eq!(result_text(&json!({"error": "no"})), r#"{"error":"no"}"#);
        let result = ToolResult { text: "a\n  b ".repeat(3), ..ToolResult::default() };
        assert_eq!(result.excerpt(7), "a b a b…");
    }
}
