//! `opencode`: OpenCode. Flags checked against `opencode --help` of
//! 1.18.33 (`adapters/evidence/opencode.json`): `-s, --session` continues an
//! exact session, `-c, --continue` the last one, `auth` manages providers
//! and credentials in the terminal.

use super::{agent_cli, profile, receipt, resume, strings, variables};
use crate::completion::HookInjection;
use crate::descriptor::{
    CompletionSignal, Descriptor, Evidence, LoginForm, ModelForm, PermissionProfile, ReferenceCapture, ResumeMode,
    SelfUpdateOff, VersionProbe,
};
use crate::reference_pattern::ReferencePattern;
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        // Esc, pressed twice as separate presses, stops a running turn; Ctrl-C quits it. (seen live; tests/live-records)
        interrupt_keys: b"\x1b".to_vec(),
        interrupt_presses: 2,
        version: VersionProbe { args: strings(&["--version"]), floor: Some("1.18.33".into()) },
        model: ModelForm::Optional { flag: "-m".into() },
        resume_forms: vec![
            resume(ResumeMode::Reference, &["--session", "{reference}"]),
            resume(ResumeMode::ProviderSelection, &["--continue"]),
        ],
        reference_pattern: Some(ReferencePattern::constant("ses_[0-9A-Za-z]{8,64}")),
        // The host's plugin names the session in every report; its
        // sessions themselves live in an SQLite database, and its one log
        // is shared by every run, so neither tells panes apart.
        reference_capture: ReferenceCapture::HookField("sessionID".into()),
        login: LoginForm::InTerminal { args: strings(&["auth", "login"]) },
        self_update_off: SelfUpdateOff {
            environment: variables(&[("OPENCODE_DISABLE_AUTOUPDATE", "1")]),
            ..SelfUpdateOff::default()
        },
        // It has no sandbox, and its help offers only `--auto` ("auto-approve
        // permissions that are not explicitly denied"): full access, and no
        // narrower profile.
        // `run` answers one message and exits. It has no read-only mode:
        // a receipt needs the weaker boundary accepted. Sign-in is not
        // observed: providers may carry their key in opencode.json.
        receipt: receipt(&["run", "{prompt}"]),
        permission_profiles: vec![profile(PermissionProfile::FullAccess, &["--auto"])],
        // A plugin of the host's, added to this run's configuration through
        // OPENCODE_CONFIG_CONTENT, reports its session going busy and idle.
        completion: CompletionSignal::Hook,
        hook_injection: Some(HookInjection::OpencodePlugin),
        limitations: strings(&[limitation::PERMISSION_PROFILE_UNENFORCED]),
        // Published on the npm registry (`adapters/evidence/opencode.json` names the same package).
        npm_package: Some("opencode-ai".into()),
        ..agent_cli("opencode", "OpenCode", &["opencode"], Evidence::CapturedHelp { file: "opencode.json".into() })
    }
}
