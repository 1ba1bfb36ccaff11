//! `qwen`: Qwen Code. Flags checked against `qwen --help` of 0.24.4
//! (`adapters/evidence/qwen.json`; its `qwen auth --help` says the
//! command was removed).

use super::{agent_cli, profile, receipt, resume, strings};
use crate::completion::{HookInjection, HookTarget, Injection, RuntimeHooks};
use crate::descriptor::{
    CompletionSignal, Descriptor, Evidence, LoginForm, ModelForm, PermissionProfile, ReferenceCapture, ResumeMode,
    SelfUpdateOff, VersionProbe,
};
use crate::reference_pattern::{ReferencePattern, UUID};
use crate::session_store::{SessionEntry, SessionStore};
use crate::system_defaults::DefaultsLocation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        // Esc stops a running turn; a second Ctrl-C at the prompt exits. (seen with the real CLI
        // against the local model endpoint; docs/LIVE.md)
        interrupt_keys: b"\x1b".to_vec(),
        version: VersionProbe { args: strings(&["--version"]), floor: Some("0.24.4".into()) },
        model: ModelForm::Optional { flag: "-m".into() },
        resume_forms: vec![
            resume(ResumeMode::Reference, &["--resume", "{reference}"]),
            resume(ResumeMode::ProviderSelection, &["--continue"]),
        ],
        reference_pattern: Some(ReferencePattern::constant(UUID)),
        // Its exact resume is proven live (`tests/live-records/qwen.json`, step `resume_reference`).
        references_proven_live: true,
        // Each session is `~/.qwen/projects/<project>/chats/<id>.jsonl`.
        reference_capture: ReferenceCapture::SessionStore(SessionStore {
            dir: ".qwen/projects".into(),
            moved_by: None,
            entry: SessionEntry::File {
                prefix: String::new(),
                suffix: ".jsonl".into(),
                reference_len: None,
                parent: Some("chats".into()),
            },
        }),
        // 0.24.4 removed `qwen auth` ("run qwen and use /auth to configure
        // providers"): the sign-in is the CLI itself, in the terminal.
        login: LoginForm::InTerminal { args: Vec::new() },
        reads_environment: strings(&["OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_MODEL", "DASHSCOPE_API_KEY"]),
        self_update_off: SelfUpdateOff { note: Some("settings only".into()), ..SelfUpdateOff::default() },
        // `--approval-mode`: plan only, default asks before every edit and
        // command, yolo approves everything. Workspace-write is `default`,
        // narrower than the profile: `auto-edit` approves edits anywhere,
        // and 0.15.10 under it wrote a file outside the working directory
        // without asking (tests/live-records/boundaries).
        // A positional prompt with no terminal on stdin runs once and exits
        // (`-p` is deprecated in favour of it). Sign-in is not observed: the
        // key may be in its settings file.
        receipt: receipt(&["{read_only}", "{prompt}"]),
        permission_profiles: vec![
            profile(PermissionProfile::ReadOnly, &["--approval-mode", "plan"]),
            profile(PermissionProfile::WorkspaceWrite, &["--approval-mode", "default"]),
            profile(PermissionProfile::FullAccess, &["--approval-mode", "yolo"]),
        ],
        // Claude Code's hooks, read from settings files only: a system
        // defaults file of the host's, named by a variable for this run,
        // adds UserPromptSubmit, Stop and Notification.
        completion: CompletionSignal::Hook,
        hook_injection: Some(HookInjection::Runtime(&HOOKS)),
        // Its input box's placeholder. 0.24.4 takes raw mode, asks the
        // terminal what it is, prints a warning line when its bundled
        // `rg` cannot run, is quiet for a second or more, and only then
        // draws its input box; a prompt typed in that pause was lost
        // (docs/ADAPTERS.md, "When a CLI reads its first prompt").
        ready_marker: Some("Type your message".into()),
        limitations: Vec::new(),
        // Published on the npm registry (`adapters/evidence/qwen.json` names the same package).
        npm_package: Some("@qwen-code/qwen-code".into()),
        ..agent_cli("qwen", "Qwen Code", &["qwen"], Evidence::CapturedHelp { file: "qwen.json".into() })
    }
}

/// Qwen Code's system-defaults file, the lowest layer of its settings.
const DEFAULTS: DefaultsLocation = DefaultsLocation {
    variable: "QWEN_CODE_SYSTEM_DEFAULTS_PATH",
    unix: "/etc/qwen-code/system-defaults.json",
    macos: "/Library/Application Support/QwenCode/system-defaults.json",
};

/// `QWEN_CODE_SYSTEM_DEFAULTS_PATH` names a settings file of the host's
/// with the hooks `UserPromptSubmit`, `Stop` and `Notification`.
static HOOKS: RuntimeHooks =
    RuntimeHooks { name: "qwen-system-defaults", flags: &[], inject: system_defaults, reads_turn: None };

fn system_defaults(target: &HookTarget<'_>) -> Option<Injection> {
    let hooks = target.command_hooks("UserPromptSubmit", "Stop", "Notification");
    target.system_defaults(&DEFAULTS, "qwen-system-defaults.json", hooks)
}

#[cfg(test)]
mod tests {
    use crate::completion::injection;
    use crate::completion::tests::{files_json, host};

    #[test]
    fn qwen_gets_a_system_defaults_file_of_the_hosts() {
        let hooks = super::descriptor().hook_injection.unwrap();
        let qwen = injection(hooks, &host("/opt/panehost", Some("/state/hooks"))).unwrap();
        assert_eq!(qwen.environment[0].0, "QWEN_CODE_SYSTEM_DEFAULTS_PATH");
        assert!(files_json(&qwen, "qwen-system-defaults.json")["hooks"]["Stop"].is_array());
        assert!(injection(hooks, &host("/opt/panehost", None)).is_none(), "no hook directory, no file");
    }
}
