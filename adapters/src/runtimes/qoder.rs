//! `qoder`: Qoder CLI (`qodercli`). Declared from its public docs (it does
//! not install here): `-r <uuid>` resumes an exact session; signing in
//! happens outside the terminal.

use super::{agent_cli, resume, strings, UNOBSERVED};
use crate::descriptor::{Descriptor, Evidence, ResumeMode};
use crate::reference_pattern::{ReferencePattern, UUID};
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        resume_forms: vec![resume(ResumeMode::Reference, &["-r", "{reference}"])],
        reference_pattern: Some(ReferencePattern::constant(UUID)),
        limitations: strings(&[
            limitation::REFERENCE_PENDING_LIVE_PROOF,
            limitation::PROVIDER_SELECTION_UNSUPPORTED,
            UNOBSERVED,
            limitation::LOGIN_NOT_IN_TERMINAL,
            limitation::PERMISSION_PROFILE_UNENFORCED,
            limitation::RECEIPT_UNAVAILABLE,
        ]),
        ..agent_cli("qoder", "Qoder", &["qodercli"], Evidence::Documentation)
    }
}
