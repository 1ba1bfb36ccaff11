//! `codex`: Codex. Flags checked against `codex --help`, `codex resume
//! --help` and `codex login --help` of 0.171.0 (`adapters/evidence/codex.json`).

use super::{agent_cli, profile, resume_subcommand, strings};
use crate::completion::HookInjection;
use crate::descriptor::{
    CompletionSignal, Descriptor, Evidence, LoginForm, ModelForm, PermissionProfile, ResumeMode, SelfUpdateOff,
    VersionProbe,
};
use crate::reference_pattern::{ReferencePattern, UUID};

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
        login: LoginForm::InTerminal { args: strings(&["login"]) },
        reads_environment: strings(&["OPENAI_API_KEY", "OPENAI_BASE_URL", "CODEX_HOME"]),
        self_update_off: SelfUpdateOff {
            args: strings(&["-c", "check_for_update_on_startup=false"]),
            ..SelfUpdateOff::default()
        },
        // `-c notify=[...]` for this run only: Codex calls the program after
        // each turn (it reports no turn start).
        completion: CompletionSignal::NotifyProgram,
        hook_injection: Some(HookInjection::CodexNotify),
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
