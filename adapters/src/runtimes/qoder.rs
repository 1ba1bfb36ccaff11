//! `qoder`: Qoder CLI (`qodercli`, `@qoder-ai/qodercli`). Flags checked
//! against `qodercli --help` of 1.1.52 (`adapters/evidence/qoder.json`):
//! `-r, --resume [id]` resumes a session by identifier, `-c, --continue`
//! the most recent one, `-m` names the model.
//!
//! Seen live offline (tests/live-records/qoder.json): it shows "Not Login
//! Please Auth" and `qodercli -p` prints "Not logged in · Please run
//! /login"; its documented custom models are added through a wizard that
//! checks them against the signed-in account, so no prompt reached a model
//! and the exact resume stays unproven. Signing in is `qodercli login` (or
//! `/login`), in the terminal.

use super::{agent_cli, resume, strings, UNOBSERVED};
use crate::descriptor::{Descriptor, Evidence, LoginForm, ModelForm, ResumeMode, VersionProbe};
use crate::reference_pattern::{ReferencePattern, UUID};
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        version: VersionProbe { args: strings(&["--version"]), floor: Some("1.1.52".into()) },
        model: ModelForm::Optional { flag: "-m".into() },
        resume_forms: vec![
            resume(ResumeMode::Reference, &["-r", "{reference}"]),
            resume(ResumeMode::ProviderSelection, &["-c"]),
        ],
        reference_pattern: Some(ReferencePattern::constant(UUID)),
        login: LoginForm::InTerminal { args: strings(&["login"]) },
        limitations: strings(&[
            limitation::REFERENCE_PENDING_LIVE_PROOF,
            UNOBSERVED,
            limitation::PERMISSION_PROFILE_UNENFORCED,
            limitation::RECEIPT_UNAVAILABLE,
        ]),
        // Published on the npm registry (`adapters/evidence/qoder.json` names the same package).
        npm_package: Some("@qoder-ai/qodercli".into()),
        ..agent_cli("qoder", "Qoder", &["qodercli"], Evidence::CapturedHelp { file: "qoder.json".into() })
    }
}
