//! What the fixture's log says about a probe's turn: the tool call the
//! model made, the result the CLI sent back, or that the CLI declared no
//! tool that writes.
//!
//! The fixture logs, per request (`#N …`): `tool call NAME (KIND) ARGS of
//! declared [TOOLS]`, `tool result[ (marked as an error)] from NAME:
//! "EXCERPT"` and `no tool that writes among [TOOLS]`. A CLI's side
//! requests (titles, topic checks) quote the prompt too but declare no
//! tools: an empty list is theirs and is left out.

use crate::endpoint::Endpoint;

/// The probe's turn as far as the fixture saw it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Turn {
    /// `tool call …` (without the request number).
    pub call: Option<String>,
    /// `tool result …`.
    pub result: Option<String>,
    /// `no tool that writes among […]`, with at least one tool.
    pub no_tool: Option<String>,
}

impl Turn {
    /// Whether the model gave its last answer: after the tool's result, or
    /// in place of a call.
    pub fn ended(&self) -> bool {
        self.result.is_some() || self.no_tool.is_some()
    }
}

/// Reads the log after `mark`.
pub fn read(endpoint: &Endpoint, mark: u64) -> Turn {
    parse(&endpoint.lines_since(mark))
}

/// The first line of each kind.
pub fn parse(lines: &[String]) -> Turn {
    let mut turn = Turn::default();
    for line in lines {
        let Some(text) = line.strip_prefix('#').and_then(|rest| rest.split_once(' ')).map(|(_, text)| text) else {
            continue;
        };
        let slot = if text.starts_with("tool call ") {
            &mut turn.call
        } else if text.starts_with("tool result") {
            &mut turn.result
        } else if text.starts_with("no tool that writes among ") && !text.ends_with("[]") {
            &mut turn.no_tool
        } else {
            continue;
        };
        if slot.is_none() {
            *slot = Some(text.to_owned());
        }
    }
    turn
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_of_each_kind_and_side_requests_left_out() {
        let lines: Vec<String> = [
            "#3 POST /v1/messages",
            "#3 no tool that writes among []",
            "#4 tool call Write (write) {} of declared [Write (write)]",
            "#5 tool result (marked as an error) from Write: \"denied\"",
            "#6 tool result from Write: \"later\"",
            "not a request line",
        ]
        .map(String::from)
        .to_vec();
        let turn = parse(&lines);
        assert_eq!(turn.call.as_deref(), Some("tool call Write (write) {} of declared [Write (write)]"));
        assert_eq!(turn.result.as_deref(), Some("tool result (marked as an error) from Write: \"denied\""));
        assert_eq!(turn.no_tool, None);
        assert!(turn.ended());
        let offered_none = parse(&["#2 no tool that writes among [Read]".to_owned()]);
        assert!(offered_none.ended() && offered_none.call.is_none());
        assert!(!parse(&lines[..3]).ended());
    }
}
