//! `copilot`: GitHub Copilot CLI. Flags checked against `copilot --help`,
//! `copilot login --help` and `copilot update --help` of 1.0.102
//! (`adapters/evidence/copilot.json`). `--resume` takes an optional value,
//! so the reference is attached with `=`.

use super::{agent_cli, profile, resume, strings, variables};
use crate::completion::{pretty_json, HookInjection, HookTarget, Injection, LaunchFile, RuntimeHooks};
use crate::descriptor::{
    CompletionSignal, Descriptor, Evidence, LoginForm, ModelForm, PermissionProfile, ReceiptForm, ReceiptSupport,
    ReferenceCapture, ResumeMode, SelfUpdateOff, VersionProbe,
};
use crate::reference_pattern::{ReferencePattern, UUID};
use crate::session_store::{SessionEntry, SessionStore};

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        // Esc, pressed twice, stops a running turn. (seen with the real CLI
        // against the local model endpoint; docs/LIVE.md)
        interrupt_keys: b"\x1b".to_vec(),
        interrupt_presses: 2,
        version: VersionProbe { args: strings(&["--version"]), floor: Some("1.0.102".into()) },
        model: ModelForm::Optional { flag: "--model".into() },
        resume_forms: vec![
            resume(ResumeMode::Reference, &["--resume={reference}"]),
            resume(ResumeMode::ProviderSelection, &["--continue"]),
            resume(ResumeMode::InteractivePicker, &["--resume"]),
        ],
        reference_pattern: Some(ReferencePattern::constant(UUID)),
        // Its exact resume is proven live (`tests/live-records/copilot.json`, step `resume_reference`).
        references_proven_live: true,
        // Each session is a directory `~/.copilot/session-state/<id>/`.
        reference_capture: ReferenceCapture::SessionStore(SessionStore {
            dir: ".copilot/session-state".into(),
            moved_by: None,
            entry: SessionEntry::Directory,
        }),
        login: LoginForm::InTerminal { args: strings(&["login"]) },
        reads_environment: strings(&[
            "COPILOT_GITHUB_TOKEN",
            "GH_TOKEN",
            "GITHUB_TOKEN",
            "COPILOT_PROVIDER_BASE_URL",
            "COPILOT_MODEL",
            "COPILOT_OFFLINE",
        ]),
        self_update_off: SelfUpdateOff {
            args: strings(&["--no-auto-update"]),
            environment: variables(&[("COPILOT_AUTO_UPDATE", "false")]),
            note: None,
        },
        // Typing before its prompt is drawn has lost input.
        drops_early_input: true,
        // Its tool and path permissions (`copilot help permissions`): file
        // access stays inside the working directory unless approved; deny
        // rules win over every allow rule. Read-only denies file writes and
        // the shell; workspace-write approves file writes (inside the
        // working directory, the temporary directory included only on
        // approval); full access is `--allow-all`. Values attach with `=`:
        // the options take lists.
        // `-p` runs one prompt and exits; it requires `--allow-all-tools`,
        // and the read-only denials take precedence over it (copilot's
        // documentation). Sign-in is not observed: the token may live in the
        // system keychain.
        receipt: ReceiptSupport::OneShot(ReceiptForm {
            args: strings(&["{read_only}", "-p", "{prompt}"]),
            read_only_args: Some(strings(&["--allow-all-tools", "--deny-tool=write", "--deny-tool=shell"])),
        }),
        permission_profiles: vec![
            profile(PermissionProfile::ReadOnly, &["--deny-tool=write", "--deny-tool=shell"]),
            profile(PermissionProfile::WorkspaceWrite, &["--allow-tool=write", "--disallow-temp-dir"]),
            profile(PermissionProfile::FullAccess, &["--allow-all"]),
        ],
        // `--plugin-dir` loads a plugin of the host's for this run only;
        // its hooks report userPromptSubmitted and agentStop.
        completion: CompletionSignal::Hook,
        hook_injection: Some(HookInjection::Runtime(&HOOKS)),
        limitations: Vec::new(),
        // Published on the npm registry (`adapters/evidence/copilot.json` names the same package).
        npm_package: Some("@github/copilot".into()),
        ..agent_cli(
            "copilot",
            "GitHub Copilot CLI",
            &["copilot"],
            Evidence::CapturedHelp { file: "copilot.json".into() },
        )
    }
}

/// `--plugin-dir <dir>` loads a plugin of the host's for this run only,
/// whose `hooks/hooks.json` holds `userPromptSubmitted` and `agentStop`.
static HOOKS: RuntimeHooks =
    RuntimeHooks { name: "copilot-plugin-dir", flags: &["--plugin-dir"], inject: plugin_dir, reads_turn: None };

fn plugin_dir(target: &HookTarget<'_>) -> Option<Injection> {
    let plugin = target.hook_dir?.join("copilot-plugin");
    let flat =
        |event: &str| serde_json::json!([{ "type": "command", "bash": target.command(event), "timeoutSec": 10 }]);
    let hooks = serde_json::json!({
        "version": 1,
        "hooks": {
            "userPromptSubmitted": flat("turn_started"),
            "agentStop": flat("turn_completed"),
        }
    });
    let manifest = serde_json::json!({
        "name": "panehost-turns",
        "description": "Reports the start and end of each turn to the panehost host.",
        "version": "1.0.0",
    });
    Some(Injection {
        args: vec!["--plugin-dir".to_owned(), plugin.display().to_string()],
        environment: Vec::new(),
        files: vec![
            LaunchFile { path: plugin.join(".plugin").join("plugin.json"), contents: pretty_json(&manifest) },
            LaunchFile { path: plugin.join("hooks").join("hooks.json"), contents: pretty_json(&hooks) },
        ],
    })
}

#[cfg(test)]
mod tests {
    use crate::completion::injection;
    use crate::completion::tests::{files_json, host};

    #[test]
    fn copilot_gets_a_plugin_directory_of_the_hosts() {
        let hooks = super::descriptor().hook_injection.unwrap();
        let copilot = injection(hooks, &host("/opt/panehost", Some("/state/hooks"))).unwrap();
        assert_eq!(copilot.args, ["--plugin-dir", "/state/hooks/copilot-plugin"]);
        let hooks = files_json(&copilot, "hooks/hooks.json");
        assert_eq!(hooks["hooks"]["agentStop"][0]["bash"], "'/opt/panehost' notify --event turn_completed");
        assert_eq!(files_json(&copilot, ".plugin/plugin.json")["name"], "panehost-turns");
    }
}
