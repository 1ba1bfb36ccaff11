//! `pi`: pi, the coding agent published on npm as
//! `@mariozechner/pi-coding-agent` (a node script); omp's package has the
//! same name under another scope, and the same session layout. Flags checked against `pi --help` of 0.73.1
//! (`adapters/evidence/pi.json`): `--session <path|id>` ("Use specific
//! session file or partial UUID"), `--continue, -c` ("Continue previous
//! session"), `--resume, -r` ("Select a session to resume"), `--model`,
//! `--print, -p`, `--no-session` and `--no-tools` ("Disable all tools by
//! default (built-in and extension)").
//!
//! Seen live offline (tests/live-records/pi.json, docs/LIVE.md):
//!
//! - each session is `~/.pi/agent/sessions/<directory>/<time>_<uuid>.jsonl`
//!   (`$PI_CODING_AGENT_DIR/sessions` when that is set); `--session
//!   <uuid>` resumes it, and an id it does not know is refused ("No session
//!   found matching '…'", exit status 1);
//! - Esc stops a running answer (its banner: "escape interrupt");
//! - models and providers come from `~/.pi/agent/models.json` and
//!   `settings.json`; with a provider's key there it went straight to its
//!   prompt, no sign-in screen;
//! - at startup it downloads `fd` and `ripgrep` when they are missing and
//!   checks for a newer version; `PI_OFFLINE` stops both, and
//!   `PI_SKIP_VERSION_CHECK` the check alone.

use super::{agent_cli, resume, strings, variables, UNOBSERVED};
use crate::descriptor::{
    Descriptor, Evidence, ModelForm, ReceiptForm, ReceiptSupport, ReferenceCapture, ResumeMode, SelfUpdateOff,
    VersionProbe,
};
use crate::reference_pattern::{ReferencePattern, UUID};
use crate::session_store::{SessionEntry, SessionStore};
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        // Esc stops a running turn; Ctrl-C at the prompt clears it, and
        // exits on a second press.
        interrupt_keys: b"\x1b".to_vec(),
        version: VersionProbe { args: strings(&["--version"]), floor: Some("0.73.1".into()) },
        model: ModelForm::Optional { flag: "--model".into() },
        resume_forms: vec![
            resume(ResumeMode::Reference, &["--session", "{reference}"]),
            resume(ResumeMode::ProviderSelection, &["--continue"]),
            resume(ResumeMode::InteractivePicker, &["--resume"]),
        ],
        // The session's UUID (a "partial UUID" would also do; only whole
        // ids pass).
        reference_pattern: Some(ReferencePattern::constant(UUID)),
        // Its exact resume is proven live (`tests/live-records/pi.json`, step `resume_reference`).
        references_proven_live: true,
        reference_capture: ReferenceCapture::SessionStore(SessionStore {
            dir: ".pi/agent/sessions".into(),
            moved_by: Some(("PI_CODING_AGENT_DIR".into(), "sessions".into())),
            entry: SessionEntry::File {
                prefix: String::new(),
                suffix: ".jsonl".into(),
                reference_len: Some(36),
                parent: None,
            },
        }),
        // Print mode answers once and exits; `--no-session` leaves no
        // session for `--continue` to pick, and with `--no-tools` the model
        // is offered no tool.
        receipt: ReceiptSupport::OneShot(ReceiptForm {
            args: strings(&["-p", "--no-session", "{read_only}", "{prompt}"]),
            read_only_args: Some(strings(&["--no-tools"])),
        }),
        reads_environment: strings(&[
            "ANTHROPIC_API_KEY",
            "ANTHROPIC_OAUTH_TOKEN",
            "OPENAI_API_KEY",
            "GEMINI_API_KEY",
            "OPENROUTER_API_KEY",
            "PI_CODING_AGENT_DIR",
            "PI_OFFLINE",
        ]),
        self_update_off: SelfUpdateOff {
            environment: variables(&[("PI_SKIP_VERSION_CHECK", "1")]),
            ..SelfUpdateOff::default()
        },
        limitations: strings(&[
            UNOBSERVED,
            limitation::LOGIN_NOT_IN_TERMINAL,
            limitation::PERMISSION_PROFILE_UNENFORCED,
        ]),
        // Published on the npm registry (`adapters/evidence/pi.json` names the same package).
        npm_package: Some("@mariozechner/pi-coding-agent".into()),
        ..agent_cli("pi", "pi", &["pi"], Evidence::CapturedHelp { file: "pi.json".into() })
    }
}
