//! `deepseek`: Reasonix (DeepSeek), published on npm as `reasonix`, a node
//! launcher of the native binary in the platform's optional package
//! (`@reasonix/cli-linux-x64`, pinned beside it). Flags checked against
//! `reasonix --help` of 1.38.11 (`adapters/evidence/deepseek.json`):
//! `reasonix [--model NAME] [-c|--continue] [-r|--resume [QUERY]]
//! [--permission-mode MODE] …` ("interactive session"), and `reasonix
//! -p|--print … <task>`; `run --help` says `--model` is a provider name of
//! its configuration.
//!
//! Seen live offline (tests/live-records/deepseek.json, docs/LIVE.md):
//!
//! - providers come from `~/.reasonix/config.toml` (`[[providers]]`, each
//!   with the variable its key is read from, `api_key_env`); with one
//!   there it went straight to its prompt once `[telemetry] cli_metrics`
//!   was set (else it first asks whether to send usage statistics);
//! - each session is a directory
//!   `~/.reasonix/projects/<directory>/sessions-v4/<32 hex digits>/`, with
//!   `.<id>.ownership.lock` beside it and caches of the same name under
//!   `.query-cache/` and `.recovery-cache/`; `-r <id>` redraws it, `-c` the
//!   latest, `-r` alone opens a picker, and an id it does not know is
//!   refused (`error: no session matches "…"`, exit status 1);
//! - Esc stops a running answer and its request;
//! - `-p` answers once and exits, but leaves a session behind that a later
//!   `-c` would pick, and no flag of its help keeps it from doing so: no
//!   receipt is taken.

use super::{agent_cli, resume, strings, UNOBSERVED};
use crate::descriptor::{Descriptor, Evidence, ModelForm, ReferenceCapture, ResumeMode, VersionProbe};
use crate::reference_pattern::ReferencePattern;
use crate::session_store::{SessionEntry, SessionStore};
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        // Esc stops a running turn.
        interrupt_keys: b"\x1b".to_vec(),
        version: VersionProbe { args: strings(&["--version"]), floor: Some("1.38.11".into()) },
        // A provider's name in its configuration.
        model: ModelForm::Optional { flag: "--model".into() },
        resume_forms: vec![
            resume(ResumeMode::Reference, &["-r", "{reference}"]),
            resume(ResumeMode::ProviderSelection, &["-c"]),
            resume(ResumeMode::InteractivePicker, &["-r"]),
        ],
        // The session directory's name.
        reference_pattern: Some(ReferencePattern::constant("[0-9a-f]{32}")),
        // Its exact resume is proven live (`tests/live-records/deepseek.json`, step `resume_reference`).
        references_proven_live: true,
        reference_capture: ReferenceCapture::SessionStore(SessionStore {
            dir: ".reasonix/projects".into(),
            moved_by: None,
            entry: SessionEntry::NestedDirectory { parent: "sessions-v4".into() },
        }),
        // "Secrets come from the environment via api_key_env (e.g.
        // DEEPSEEK_API_KEY)".
        reads_environment: strings(&["DEEPSEEK_API_KEY"]),
        limitations: strings(&[
            UNOBSERVED,
            limitation::RECEIPT_UNAVAILABLE,
            limitation::LOGIN_NOT_IN_TERMINAL,
            limitation::PERMISSION_PROFILE_UNENFORCED,
        ]),
        // Published on the npm registry (`adapters/evidence/deepseek.json` names the same package).
        npm_package: Some("reasonix".into()),
        ..agent_cli(
            "deepseek",
            "Reasonix (DeepSeek)",
            &["reasonix"],
            Evidence::CapturedHelp { file: "deepseek.json".into() },
        )
    }
}
