//! Reading what a hook's or notify program's payload says: about the turn
//! it reports (which conversation thread, which turn, the user's input, the
//! usage), and about a notification (its message, and whether it asks for
//! an approval). Field names are the CLIs' own; the host reads payloads
//! only through here, and what one runtime's payloads alone carry is read
//! by that runtime's own file (`RuntimeHooks::reads_turn`).
//!
//! A CLI can run turns of its own beside the user's conversation. Codex,
//! for one, names each new conversation by asking the model for a title in
//! a thread of its own, and its notify program reports that thread's turn
//! as well, as a second `agent-turn-complete` with another `thread-id`
//! whose `input-messages` is its title prompt (seen with 0.171.0). The
//! host counts only the conversation's turns; these fields are what it
//! tells them apart by.

use crate::completion::HookInjection;
use panehost_ipc::Usage;

/// What a notification hook says: its message, and whether it asks the
/// user to approve something (rather than simply waiting for input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notification {
    /// The message (`message` of a JSON payload; else the payload's first
    /// 200 characters).
    pub detail: String,
    /// The message speaks of a permission or an approval.
    pub asks_approval: bool,
}

/// Reads a notification hook's payload. Claude Code, Gemini CLI and Qwen
/// Code send JSON with a `message`; any other payload is taken as text.
pub fn notification(payload: &str) -> Notification {
    let detail = serde_json::from_str::<serde_json::Value>(payload)
        .ok()
        .and_then(|value| value.get("message").and_then(|message| message.as_str()).map(str::to_owned))
        .unwrap_or_else(|| payload.chars().take(200).collect());
    let lower = detail.to_lowercase();
    let asks_approval = lower.contains("permission") || lower.contains("approv");
    Notification { detail, asks_approval }
}

/// The usage an end-of-turn payload reports (`usage.input_tokens`,
/// `usage.output_tokens`, `total_cost_usd`, as Claude Code's hooks carry
/// them), labelled measured; `unavailable` when it reports none, never zero.
pub fn usage(payload: &str) -> Usage {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(payload) else { return Usage::unavailable() };
    let usage = value.get("usage");
    let tokens = |name: &str| usage.and_then(|usage| usage.get(name)).and_then(serde_json::Value::as_u64);
    let cost =
        value.get("total_cost_usd").and_then(serde_json::Value::as_f64).map(|usd| (usd * 1_000_000.0).round() as u64);
    let (input_tokens, output_tokens) = (tokens("input_tokens"), tokens("output_tokens"));
    if input_tokens.is_none() && output_tokens.is_none() && cost.is_none() {
        return Usage::unavailable();
    }
    Usage { kind: panehost_ipc::turn::usage_kind::MEASURED.into(), input_tokens, output_tokens, cost_micro_usd: cost }
}

/// What a payload says about the turn it reports. Empty fields mean the
/// payload does not say (or could not be read).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReportedTurn {
    /// The conversation thread the turn belongs to.
    pub thread: Option<String>,
    /// The turn's own id.
    pub turn: Option<String>,
    /// The user's input that started the turn.
    pub inputs: Vec<String>,
}

/// Reads `payload` as the runtime whose hooks were injected by `injection`
/// writes it (the runtime's own file says how). Only payloads that can
/// report turns of other threads name a thread; for the others the result
/// is empty and every report counts. Bad JSON or missing fields give an
/// empty result, never an error.
pub fn reported_turn(injection: Option<HookInjection>, payload: &str) -> ReportedTurn {
    injection.map(|injection| injection.reported_turn(payload)).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_and_usage_read_the_clis_fields() {
        let asks = notification(r#"{"message":"Claude needs your permission to use Bash"}"#);
        assert!(asks.asks_approval && asks.detail.starts_with("Claude needs"));
        let waits = notification("waiting for your input");
        assert_eq!((waits.asks_approval, waits.detail.as_str()), (false, "waiting for your input"));
        let measured = usage(r#"{"usage":{"input_tokens":3,"output_tokens":4},"total_cost_usd":0.0012}"#);
        assert_eq!(
            (measured.kind.as_str(), measured.input_tokens, measured.cost_micro_usd),
            ("measured", Some(3), Some(1200))
        );
        assert_eq!(usage(r#"{"session_id":"s"}"#), Usage::unavailable(), "no usage is not zero usage");
        assert_eq!(usage("not json"), Usage::unavailable());
    }
}
