//! `cursor`: the Cursor agent CLI. Declared from its public docs (it
//! installs from no registry this machine reaches: docs/ADAPTERS.md):
//! `--resume [chatId]` resumes an exact chat, the `resume` subcommand the
//! latest, `login` signs in in the terminal.

use super::{agent_cli, resume, resume_subcommand, strings, UNOBSERVED};
use crate::descriptor::{Descriptor, Evidence, LoginForm, ModelForm, ResumeMode};
use crate::reference_pattern::{ReferencePattern, UUID};
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        model: ModelForm::Optional { flag: "--model".into() },
        resume_forms: vec![
            resume(ResumeMode::Reference, &["--resume", "{reference}"]),
            resume_subcommand(ResumeMode::ProviderSelection, &["resume"]),
        ],
        reference_pattern: Some(ReferencePattern::constant(UUID)),
        login: LoginForm::InTerminal { args: strings(&["login"]) },
        limitations: strings(&[
            limitation::REFERENCE_PENDING_LIVE_PROOF,
            UNOBSERVED,
            limitation::PERMISSION_PROFILE_UNENFORCED,
            limitation::RECEIPT_UNAVAILABLE,
        ]),
        ..agent_cli("cursor", "Cursor agent", &["cursor-agent"], Evidence::Documentation)
    }
}
