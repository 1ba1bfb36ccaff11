//! `droid`: Droid (`@factory/cli`). Flags checked against `droid --help`
//! and `droid resume --help` of 0.225.2 (`adapters/evidence/droid.json`):
//! `--resume <id>` resumes an exact session, `--resume --last` the newest in
//! the working directory, and `--resume` alone opens a picker.
//!
//! Seen live offline (tests/live-records/droid.json): the interactive CLI
//! first asks for a Factory account sign-in ("Please login with your Factory
//! account to continue", with a `Login` entry), even with a custom model
//! (BYOK) in `~/.factory/settings.json`; `droid exec` answers from that
//! custom model with no account. So the sign-in is in the terminal, on its
//! first screen, and the exact resume stays unproven: no interactive session
//! could be made. `droid exec` is not declared as the receipt's one-shot
//! mode: its read-only default is not one of the permission profiles this
//! adapter maps, and a receipt is taken inside that boundary.

use super::{agent_cli, resume, strings, UNOBSERVED};
use crate::descriptor::{Descriptor, Evidence, LoginForm, ResumeMode, VersionProbe};
use crate::reference_pattern::{ReferencePattern, UUID};
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        version: VersionProbe { args: strings(&["--version"]), floor: Some("0.225.2".into()) },
        resume_forms: vec![
            resume(ResumeMode::Reference, &["--resume", "{reference}"]),
            resume(ResumeMode::ProviderSelection, &["--resume", "--last"]),
            resume(ResumeMode::InteractivePicker, &["--resume"]),
        ],
        reference_pattern: Some(ReferencePattern::constant(UUID)),
        login: LoginForm::InTerminal { args: Vec::new() },
        limitations: strings(&[
            limitation::REFERENCE_PENDING_LIVE_PROOF,
            UNOBSERVED,
            limitation::PERMISSION_PROFILE_UNENFORCED,
            limitation::RECEIPT_UNAVAILABLE,
        ]),
        // Published on the npm registry (`adapters/evidence/droid.json` names the same package).
        npm_package: Some("@factory/cli".into()),
        ..agent_cli("droid", "Droid", &["droid"], Evidence::CapturedHelp { file: "droid.json".into() })
    }
}
