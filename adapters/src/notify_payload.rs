//! Reading what a hook's or notify program's payload says about the turn it
//! reports: which conversation thread, which turn, and the user's input.
//!
//! A CLI can run turns of its own beside the user's conversation. Codex,
//! for one, names each new conversation by asking the model for a title in
//! a thread of its own, and its notify program reports that thread's turn
//! as well, as a second `agent-turn-complete` with another `thread-id`
//! whose `input-messages` is its title prompt (seen with 0.171.0). The
//! host counts only the conversation's turns; these fields are what it
//! tells them apart by.

use crate::completion::HookInjection;

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
/// writes it. Only payloads that can report turns of other threads name a
/// thread; for the others the result is empty and every report counts.
/// Bad JSON or missing fields give an empty result, never an error.
pub fn reported_turn(injection: Option<HookInjection>, payload: &str) -> ReportedTurn {
    match injection {
        // {"type":"agent-turn-complete","thread-id":…,"turn-id":…,
        //  "input-messages":[…],"last-assistant-message":…}
        Some(HookInjection::CodexNotify) => {
            let Ok(value) = serde_json::from_str::<serde_json::Value>(payload) else { return ReportedTurn::default() };
            let text = |name: &str| value.get(name).and_then(serde_json::Value::as_str).map(str::to_owned);
            let inputs = value
                .get("input-messages")
                .and_then(serde_json::Value::as_array)
                .map(|items| items.iter().filter_map(serde_json::Value::as_str).map(str::to_owned).collect())
                .unwrap_or_default();
            ReportedTurn { thread: text("thread-id"), turn: text("turn-id"), inputs }
        }
        // Claude Code, Gemini CLI, Qwen Code and Copilot report their
        // sub-agents through hooks of their own (SubagentStop), which are
        // not injected (the OpenCode plugin leaves sub-agents' sessions
        // out itself); their session id changes on /clear, so it is no
        // conversation identity to hold on to.
        Some(
            HookInjection::ClaudeSettings
            | HookInjection::GeminiSystemDefaults
            | HookInjection::QwenSystemDefaults
            | HookInjection::CopilotPluginDir
            | HookInjection::OpencodePlugin,
        )
        | None => ReportedTurn::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codex_payloads_name_their_thread_turn_and_input() {
        let payload = r#"{"type":"agent-turn-complete","thread-id":"t-1","turn-id":"u-1","cwd":"/w","client":"codex-tui","input-messages":["PING"],"last-assistant-message":"PONG"}"#;
        let turn = reported_turn(Some(HookInjection::CodexNotify), payload);
        assert_eq!(turn.thread.as_deref(), Some("t-1"));
        assert_eq!(turn.turn.as_deref(), Some("u-1"));
        assert_eq!(turn.inputs, ["PING"]);
    }

    #[test]
    fn unreadable_or_foreign_payloads_say_nothing() {
        for payload in ["", "not json", "[1,2]", r#"{"thread-id":7,"input-messages":"x"}"#] {
            assert_eq!(reported_turn(Some(HookInjection::CodexNotify), payload), ReportedTurn::default());
        }
        let claude = reported_turn(Some(HookInjection::ClaudeSettings), r#"{"session_id":"s"}"#);
        assert_eq!(claude, ReportedTurn::default());
    }
}
