//! `amp`: Amp. Declared from its public docs (it does not install here):
//! `amp threads continue [threadId]` continues an exact thread, or the
//! latest without one; threads are stored by the provider.

use super::{agent_cli, resume_subcommand, strings, UNOBSERVED};
use crate::descriptor::{Descriptor, Evidence, LoginForm, ResumeMode};
use crate::reference_pattern::ReferencePattern;
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        resume_forms: vec![
            resume_subcommand(ResumeMode::Reference, &["threads", "continue", "{reference}"]),
            resume_subcommand(ResumeMode::ProviderSelection, &["threads", "continue"]),
        ],
        reference_pattern: Some(ReferencePattern::constant(
            "T-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
        )),
        login: LoginForm::InTerminal { args: strings(&["login"]) },
        limitations: strings(&[
            limitation::REFERENCE_PENDING_LIVE_PROOF,
            UNOBSERVED,
            limitation::PERMISSION_PROFILE_UNENFORCED,
            limitation::RECEIPT_UNAVAILABLE,
        ]),
        ..agent_cli("amp", "Amp", &["amp"], Evidence::Documentation)
    }
}
