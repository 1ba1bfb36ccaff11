//! `goose`: Goose. Declared from its public docs (it installs from no
//! registry this machine reaches: docs/ADAPTERS.md): sessions run as
//! `goose session`; `--resume --session-id <id>` resumes an exact one,
//! `--resume` alone the latest; `goose configure` sets up a provider in the
//! terminal.

use super::{agent_cli, resume, strings, UNOBSERVED};
use crate::descriptor::{Descriptor, Evidence, LoginForm, ResumeMode};
use crate::reference_pattern::ReferencePattern;
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        base_args: strings(&["session"]),
        resume_forms: vec![
            resume(ResumeMode::Reference, &["--resume", "--session-id", "{reference}"]),
            resume(ResumeMode::ProviderSelection, &["--resume"]),
        ],
        reference_pattern: Some(ReferencePattern::constant("[0-9A-Za-z][0-9A-Za-z_]{0,63}")),
        login: LoginForm::InTerminal { args: strings(&["configure"]) },
        limitations: strings(&[
            limitation::REFERENCE_PENDING_LIVE_PROOF,
            UNOBSERVED,
            limitation::PERMISSION_PROFILE_UNENFORCED,
            limitation::RECEIPT_UNAVAILABLE,
        ]),
        ..agent_cli("goose", "Goose", &["goose"], Evidence::Documentation)
    }
}
