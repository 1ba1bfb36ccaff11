//! `claude`: Claude Code. Flags checked against `claude --help` and
//! `claude auth --help` of 2.1.332 (`adapters/evidence/claude.json`).

use super::{agent_cli, profile, receipt, resume, sign_in, strings, variables};
use crate::completion::{HookInjection, HookTarget, Injection, RuntimeHooks};
use crate::descriptor::{
    CompletionSignal, Descriptor, Evidence, LoginForm, ModelForm, PermissionProfile, ReferenceCapture, ResumeMode,
    SelfUpdateOff, VersionProbe,
};
use crate::reference_pattern::{ReferencePattern, UUID};

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        // Esc stops a running turn; Ctrl-C at an idle prompt starts to exit. (seen with the real CLI
        // against the local model endpoint; docs/LIVE.md)
        interrupt_keys: b"\x1b".to_vec(),
        version: VersionProbe { args: strings(&["--version"]), floor: Some("2.1.332".into()) },
        model: ModelForm::Optional { flag: "--model".into() },
        resume_forms: vec![
            // `-r, --resume [value]`: a session id, or the picker without one.
            resume(ResumeMode::Reference, &["--resume", "{reference}"]),
            resume(ResumeMode::ProviderSelection, &["--continue"]),
            resume(ResumeMode::InteractivePicker, &["--resume"]),
        ],
        reference_pattern: Some(ReferencePattern::constant(UUID)),
        // Its exact resume is proven live (`tests/live-records/claude.json`, step `resume_reference`).
        references_proven_live: true,
        // Every hook payload carries the session's id.
        reference_capture: ReferenceCapture::HookField("session_id".into()),
        login: LoginForm::InTerminal { args: strings(&["auth", "login"]) },
        // On Linux the sign-in stores its tokens in `.credentials.json` of
        // the configuration directory; a key or token in the environment
        // signs in as well. (Declared from its documentation.)
        sign_in: sign_in(
            Some("CLAUDE_CONFIG_DIR"),
            ".claude",
            &[".credentials.json"],
            &["ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"],
        ),
        // `-p` prints the answer and exits; the read-only profile holds.
        receipt: receipt(&["-p", "{prompt}", "{read_only}"]),
        reads_environment: strings(&[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_AUTH_TOKEN",
            "ANTHROPIC_BASE_URL",
            "ANTHROPIC_MODEL",
            "CLAUDE_CONFIG_DIR",
        ]),
        // Its updater rewrites the global npm tree and the binary under a
        // running host; both variables keep it quiet.
        self_update_off: SelfUpdateOff {
            environment: variables(&[("DISABLE_AUTOUPDATER", "1"), ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")]),
            ..SelfUpdateOff::default()
        },
        // `--settings` adds hooks for this run only: UserPromptSubmit, Stop
        // and Notification report to the host.
        completion: CompletionSignal::Hook,
        hook_injection: Some(HookInjection::Runtime(&HOOKS)),
        // `--permission-mode` for this run only. Read-only is plan mode, and
        // the shell and every file-writing tool are denied as well
        // (`--disallowedTools`), so leaving plan mode does not lift it and
        // no allow rule of the user's overrides it. `Edit` alone does not
        // cover `Write`: 2.1.197 in plan mode still offered `Write` and asked
        // before creating a file (tests/live-records/boundaries). Its
        // `NotebookEdit` is not named in the recorded help, so it is not
        // denied here and still asks. The value is attached with `=`: the
        // option is variadic.
        permission_profiles: vec![
            profile(PermissionProfile::ReadOnly, &["--permission-mode", "plan", "--disallowedTools=Bash,Edit,Write"]),
            profile(PermissionProfile::WorkspaceWrite, &["--permission-mode", "acceptEdits"]),
            profile(PermissionProfile::FullAccess, &["--permission-mode", "bypassPermissions"]),
        ],
        limitations: Vec::new(),
        // Published on the npm registry (`adapters/evidence/claude.json` names the same package).
        npm_package: Some("@anthropic-ai/claude-code".into()),
        ..agent_cli("claude", "Claude Code", &["claude"], Evidence::CapturedHelp { file: "claude.json".into() })
    }
}

/// `--settings <json>` adds hooks for this run only: `UserPromptSubmit`,
/// `Stop` and `Notification` report to the host. Its hooks report the
/// conversation's turns only (sub-agents have `SubagentStop`, which is not
/// injected), and the session id changes on `/clear`: no payload field is
/// read to tell turns apart.
static HOOKS: RuntimeHooks =
    RuntimeHooks { name: "claude-settings", flags: &["--settings"], inject: settings, reads_turn: None };

fn settings(target: &HookTarget<'_>) -> Option<Injection> {
    let settings = serde_json::json!({ "hooks": target.command_hooks("UserPromptSubmit", "Stop", "Notification") });
    Some(Injection { args: vec!["--settings".to_owned(), settings.to_string()], ..Injection::default() })
}

#[cfg(test)]
mod tests {
    use crate::completion::injection;
    use crate::completion::tests::host;
    use crate::environment::HostEnvironment;

    #[test]
    fn claude_gets_settings_json_with_three_hooks() {
        let hooks = super::descriptor().hook_injection.unwrap();
        let args = injection(hooks, &host("/opt/it's/panehost", None)).unwrap().args;
        assert_eq!(args[0], "--settings");
        let settings: serde_json::Value = serde_json::from_str(&args[1]).unwrap();
        let command = settings["hooks"]["Stop"][0]["hooks"][0]["command"].as_str().unwrap();
        assert_eq!(command, r"'/opt/it'\''s/panehost' notify --event turn_completed");
        assert!(settings["hooks"]["UserPromptSubmit"].is_array());
        assert!(settings["hooks"]["Notification"].is_array());
        assert!(injection(hooks, &HostEnvironment::default()).is_none(), "no notify command, no hooks");
        assert_eq!(hooks.reported_turn(r#"{"session_id":"s"}"#), Default::default());
    }
}
