//! `gemini`: Gemini CLI. Flags checked against `gemini --help` of 0.61.0
//! (`adapters/evidence/gemini.json`). Its `--resume` takes `latest` or a
//! list index, not a session id, and `--session-id` only names a new
//! session: there is no exact resume, so it declares provider selection
//! only.

use super::{agent_cli, profile, receipt, resume, strings};
use crate::completion::{HookInjection, HookTarget, Injection, RuntimeHooks};
use crate::descriptor::{
    CompletionSignal, Descriptor, Evidence, ModelForm, PermissionProfile, ResumeMode, SelfUpdateOff, VersionProbe,
};
use crate::system_defaults::DefaultsLocation;
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        // Esc stops a running turn; a second Ctrl-C at the prompt exits. (seen with the real CLI
        // against the local model endpoint; docs/LIVE.md)
        interrupt_keys: b"\x1b".to_vec(),
        version: VersionProbe { args: strings(&["--version"]), floor: Some("0.61.0".into()) },
        model: ModelForm::Optional { flag: "-m".into() },
        resume_forms: vec![resume(ResumeMode::ProviderSelection, &["--resume", "latest"])],
        reads_environment: strings(&[
            "GEMINI_API_KEY",
            "GOOGLE_API_KEY",
            "GOOGLE_GEMINI_BASE_URL",
            "GOOGLE_CLOUD_PROJECT",
            "GOOGLE_GENAI_USE_VERTEXAI",
        ]),
        self_update_off: SelfUpdateOff {
            note: Some("settings only: general.enableAutoUpdate=false".into()),
            ..SelfUpdateOff::default()
        },
        // `--approval-mode`: plan is its read-only mode, auto_edit approves
        // edit tools (commands still ask), yolo approves everything.
        // `-p` runs one prompt headless; `--skip-trust` trusts the probe's
        // scratch directory for this run only. Sign-in is not observed: a
        // key may come from a `.env` file of the working directory or any
        // directory above it.
        receipt: receipt(&["--skip-trust", "{read_only}", "-p", "{prompt}"]),
        permission_profiles: vec![
            profile(PermissionProfile::ReadOnly, &["--approval-mode", "plan"]),
            profile(PermissionProfile::WorkspaceWrite, &["--approval-mode", "auto_edit"]),
            profile(PermissionProfile::FullAccess, &["--approval-mode", "yolo"]),
        ],
        // Its hooks (on by default) read settings files only: a system
        // defaults file of the host's, named by a variable for this run,
        // adds BeforeAgent, AfterAgent and Notification.
        completion: CompletionSignal::Hook,
        hook_injection: Some(HookInjection::Runtime(&HOOKS)),
        limitations: strings(&[limitation::PROVIDER_SELECTION_ONLY, limitation::LOGIN_NOT_IN_TERMINAL]),
        // Published on the npm registry (`adapters/evidence/gemini.json` names the same package).
        npm_package: Some("@google/gemini-cli".into()),
        ..agent_cli("gemini", "Gemini CLI", &["gemini"], Evidence::CapturedHelp { file: "gemini.json".into() })
    }
}

/// Gemini CLI's system-defaults file, the lowest layer of its settings.
const DEFAULTS: DefaultsLocation = DefaultsLocation {
    variable: "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
    unix: "/etc/gemini-cli/system-defaults.json",
    macos: "/Library/Application Support/GeminiCli/system-defaults.json",
};

/// `GEMINI_CLI_SYSTEM_DEFAULTS_PATH` names a settings file of the host's
/// with the hooks `BeforeAgent`, `AfterAgent` and `Notification` (hooks are
/// on by default); the user's own settings still apply over it.
static HOOKS: RuntimeHooks =
    RuntimeHooks { name: "gemini-system-defaults", flags: &[], inject: system_defaults, reads_turn: None };

fn system_defaults(target: &HookTarget<'_>) -> Option<Injection> {
    let hooks = target.command_hooks("BeforeAgent", "AfterAgent", "Notification");
    target.system_defaults(&DEFAULTS, "gemini-system-defaults.json", hooks)
}

#[cfg(test)]
mod tests {
    use crate::completion::injection;
    use crate::completion::tests::{files_json, host};

    #[test]
    fn gemini_gets_a_system_defaults_file_of_the_hosts() {
        let hooks = super::descriptor().hook_injection.unwrap();
        let gemini = injection(hooks, &host("/opt/panehost", Some("/state/hooks"))).unwrap();
        assert!(gemini.args.is_empty());
        assert_eq!(
            gemini.environment,
            [("GEMINI_CLI_SYSTEM_DEFAULTS_PATH".to_owned(), "/state/hooks/gemini-system-defaults.json".to_owned())]
        );
        let settings = files_json(&gemini, "gemini-system-defaults.json");
        let command = settings["hooks"]["AfterAgent"][0]["hooks"][0]["command"].as_str().unwrap();
        assert_eq!(command, "'/opt/panehost' notify --event turn_completed");
        assert!(injection(hooks, &host("/opt/panehost", None)).is_none(), "no hook directory, no file");
    }
}
