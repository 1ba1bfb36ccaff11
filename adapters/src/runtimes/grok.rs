//! `grok`: the Grok CLI published on npm as `@vibe-kit/grok-cli` (a
//! community CLI, not xAI's Grok Build). Flags checked against `grok
//! --help` of 1.0.1 (`adapters/evidence/grok.json`): a model flag, an API
//! key from the environment, and no way to resume a session.

use super::{agent_cli, strings, UNOBSERVED};
use crate::descriptor::{Descriptor, Evidence, ModelForm, VersionProbe};
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        // Esc stops a running answer; Ctrl-C does not. (seen live; tests/live-records)
        interrupt_keys: b"\x1b".to_vec(),
        version: VersionProbe { args: strings(&["--version"]), floor: Some("1.0.1".into()) },
        model: ModelForm::Optional { flag: "-m".into() },
        reads_environment: strings(&["GROK_API_KEY", "GROK_BASE_URL", "GROK_MODEL"]),
        // `-p` prints the conversation as JSON message objects, the answer
        // quoted inside one: not the bare object a completion receipt checks.
        limitations: strings(&[
            limitation::NATIVE_RESUME_UNSUPPORTED,
            limitation::HOST_LOSS_RESTARTS_FRESH,
            UNOBSERVED,
            limitation::LOGIN_NOT_IN_TERMINAL,
            limitation::PERMISSION_PROFILE_UNENFORCED,
            limitation::RECEIPT_UNAVAILABLE,
        ]),
        // Published on the npm registry (`adapters/evidence/grok.json` names the same package).
        npm_package: Some("@vibe-kit/grok-cli".into()),
        ..agent_cli("grok", "Grok CLI", &["grok"], Evidence::CapturedHelp { file: "grok.json".into() })
    }
}
