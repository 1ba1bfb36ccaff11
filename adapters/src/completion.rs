//! Pointing a CLI's own completion signals at the host, per launch, without
//! touching the user's configuration files.
//!
//! A hook runs `panehost notify --event EVENT` inside the pane; that command
//! finds its pane through `PANEHOST_PANE`, `PANEHOST_NOTIFY_TOKEN` and
//! `PANEHOST_SOCKET`, which the host sets for every pane.

use std::path::Path;

/// How a runtime's hooks are injected into a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookInjection {
    /// Claude Code: `--settings <json>` adds hooks for this run only
    /// (`UserPromptSubmit`, `Stop`, `Notification`).
    ClaudeSettings,
    /// Codex: `-c notify=[...]` sets the notify program for this run only;
    /// Codex calls it with a JSON payload after each turn.
    CodexNotify,
}

/// The arguments that inject the hooks, calling `notify_command`.
pub fn injection_args(injection: HookInjection, notify_command: &Path) -> Vec<String> {
    let program = notify_command.display().to_string();
    match injection {
        HookInjection::ClaudeSettings => {
            let hook = |event: &str| serde_json::json!([{ "hooks": [{ "type": "command", "command": format!("{} notify --event {event}", shell_quote(&program)) }] }]);
            let settings = serde_json::json!({
                "hooks": {
                    "UserPromptSubmit": hook("turn_started"),
                    "Stop": hook("turn_completed"),
                    "Notification": hook("notification"),
                }
            });
            vec!["--settings".to_owned(), settings.to_string()]
        }
        HookInjection::CodexNotify => {
            let array = serde_json::json!([program, "notify", "--event", "turn_completed"]);
            vec!["-c".to_owned(), format!("notify={array}")]
        }
    }
}

/// Quotes a path for a POSIX shell command line.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claude_gets_settings_json_with_three_hooks() {
        let args = injection_args(HookInjection::ClaudeSettings, Path::new("/opt/it's/panehost"));
        assert_eq!(args[0], "--settings");
        let settings: serde_json::Value = serde_json::from_str(&args[1]).unwrap();
        let command = settings["hooks"]["Stop"][0]["hooks"][0]["command"].as_str().unwrap();
        assert_eq!(command, r"'/opt/it'\''s/panehost' notify --event turn_completed");
        assert!(settings["hooks"]["UserPromptSubmit"].is_array());
        assert!(settings["hooks"]["Notification"].is_array());
    }

    #[test]
    fn codex_gets_a_toml_array_of_strings() {
        let args = injection_args(HookInjection::CodexNotify, Path::new("/opt/panehost"));
        assert_eq!(args, ["-c", r#"notify=["/opt/panehost","notify","--event","turn_completed"]"#]);
    }
}
