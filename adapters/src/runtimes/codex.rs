//! `codex`: Codex. Flags checked against `codex --help`, `codex resume
//! --help`, `codex exec --help` and `codex login --help` of 0.171.0 (`adapters/evidence/codex.json`).

use super::{agent_cli, profile, resume_subcommand, strings};
use crate::completion::{HookInjection, HookTarget, Injection, RuntimeHooks};
use crate::descriptor::{
    CompletionSignal, Descriptor, Evidence, LoginForm, ModelForm, PermissionProfile, ReceiptForm, ReceiptSupport,
    ReferenceCapture, ResumeMode, SelfUpdateOff, VersionProbe,
};
use crate::notify_payload::ReportedTurn;
use crate::reference_pattern::{ReferencePattern, UUID};
use crate::session_store::{SessionEntry, SessionStore};

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        // Esc stops a running turn; Ctrl-C exits on one press when idle. (seen with the real CLI
        // against the local model endpoint; docs/LIVE.md)
        interrupt_keys: b"\x1b".to_vec(),
        version: VersionProbe { args: strings(&["--version"]), floor: Some("0.171.0".into()) },
        // The shared background server would outlive the pane.
        base_args: strings(&["--no-daemon"]),
        model: ModelForm::Optional { flag: "-m".into() },
        // `codex resume [SESSION_ID]` is a subcommand: it leads the argv,
        // and the start options follow it (its help lists them all).
        resume_forms: vec![
            resume_subcommand(ResumeMode::Reference, &["resume", "{reference}"]),
            resume_subcommand(ResumeMode::ProviderSelection, &["resume", "--last"]),
            resume_subcommand(ResumeMode::InteractivePicker, &["resume"]),
        ],
        reference_pattern: Some(ReferencePattern::constant(UUID)),
        // Its exact resume is proven live (`tests/live-records/codex.json`, step `resume_reference`).
        references_proven_live: true,
        // Each session is a rollout file named after its id, under
        // `$CODEX_HOME/sessions` (default `~/.codex/sessions`).
        reference_capture: ReferenceCapture::SessionStore(SessionStore {
            dir: ".codex/sessions".into(),
            moved_by: Some(("CODEX_HOME".into(), "sessions".into())),
            entry: SessionEntry::File {
                prefix: "rollout-".into(),
                suffix: ".jsonl".into(),
                reference_len: Some(36),
                parent: None,
            },
        }),
        login: LoginForm::InTerminal { args: strings(&["login"]) },
        // `exec` runs one prompt and prints the last message; it asks for no
        // approvals and takes no `-a`, so the boundary is the sandbox alone.
        // `--ephemeral` leaves no session behind. Sign-in is not observed:
        // a provider of the user's config.toml signs in with a variable it
        // names, which the host cannot know without reading that file.
        receipt: ReceiptSupport::OneShot(ReceiptForm {
            args: strings(&["exec", "--skip-git-repo-check", "--ephemeral", "{read_only}", "{prompt}"]),
            read_only_args: Some(strings(&["-s", "read-only"])),
        }),
        reads_environment: strings(&["OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"]),
        self_update_off: SelfUpdateOff {
            args: strings(&["-c", "check_for_update_on_startup=false"]),
            ..SelfUpdateOff::default()
        },
        // `-c notify=[...]` for this run only: Codex calls the program after
        // each turn (it reports no turn start).
        completion: CompletionSignal::NotifyProgram,
        hook_injection: Some(HookInjection::Runtime(&HOOKS)),
        // `-s, --sandbox` and `-a, --ask-for-approval` for this run only;
        // `codex resume --help` lists both, so they hold after a resume.
        // Read-only never asks: nothing can lift its sandbox from inside.
        permission_profiles: vec![
            profile(PermissionProfile::ReadOnly, &["-s", "read-only", "-a", "never"]),
            profile(PermissionProfile::WorkspaceWrite, &["-s", "workspace-write", "-a", "on-request"]),
            profile(PermissionProfile::FullAccess, &["-s", "danger-full-access", "-a", "never"]),
        ],
        limitations: Vec::new(),
        // Published on the npm registry (`adapters/evidence/codex.json` names the same package).
        npm_package: Some("@openai/codex".into()),
        ..agent_cli("codex", "Codex", &["codex"], Evidence::CapturedHelp { file: "codex.json".into() })
    }
}

/// `-c notify=[...]` sets the notify program for this run only; Codex
/// calls it with a JSON payload after each turn. Codex names each new
/// conversation by asking the model for a title in a thread of its own,
/// and its notify program reports that thread's turn too (seen with
/// 0.171.0): the payload's thread and input tell the two apart.
static HOOKS: RuntimeHooks =
    RuntimeHooks { name: "codex-notify", flags: &["-c"], inject: notify_program, reads_turn: Some(reported_turn) };

fn notify_program(target: &HookTarget<'_>) -> Option<Injection> {
    let array = serde_json::json!([target.program(), "notify", "--event", "turn_completed"]);
    Some(Injection { args: vec!["-c".to_owned(), format!("notify={array}")], ..Injection::default() })
}

/// `{"type":"agent-turn-complete","thread-id":…,"turn-id":…,
/// "input-messages":[…],"last-assistant-message":…}`
fn reported_turn(payload: &str) -> ReportedTurn {
    let Ok(value) = serde_json::from_str::<serde_json::Value>(payload) else { return ReportedTurn::default() };
    let text = |name: &str| value.get(name).and_then(serde_json::Value::as_str).map(str::to_owned);
    let inputs = value
        .get("input-messages")
        .and_then(serde_json::Value::as_array)
        .map(|items| items.iter().filter_map(serde_json::Value::as_str).map(str::to_owned).collect())
        .unwrap_or_default();
    ReportedTurn { thread: text("thread-id"), turn: text("turn-id"), inputs }
}

#[cfg(test)]
mod tests {
    use crate::completion::injection;
    use crate::completion::tests::host;
    use crate::notify_payload::ReportedTurn;

    #[test]
    fn codex_gets_a_toml_array_of_strings() {
        let hooks = super::descriptor().hook_injection.unwrap();
        let args = injection(hooks, &host("/opt/panehost", None)).unwrap().args;
        assert_eq!(args, ["-c", r#"notify=["/opt/panehost","notify","--event","turn_completed"]"#]);
    }

    #[test]
    fn codex_payloads_name_their_thread_turn_and_input() {
        let hooks = super::descriptor().hook_injection.unwrap();
        let payload = r#"{"type":"agent-turn-complete","thread-id":"t-1","turn-id":"u-1","cwd":"/w","client":"codex-tui","input-messages":["PING"],"last-assistant-message":"PONG"}"#;
        let turn = hooks.reported_turn(payload);
        assert_eq!(turn.thread.as_deref(), Some("t-1"));
        assert_eq!(turn.turn.as_deref(), Some("u-1"));
        assert_eq!(turn.inputs, ["PING"]);
        for payload in ["", "not json", "[1,2]", r#"{"thread-id":7,"input-messages":"x"}"#] {
            assert_eq!(hooks.reported_turn(payload), ReportedTurn::default());
        }
    }
}
