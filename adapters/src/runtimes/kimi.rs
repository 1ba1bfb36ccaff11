//! `kimi`: Kimi Code. Declared from its public docs (it does not install
//! here): `--continue` picks the latest session in the directory, and
//! `--session` without an id opens a picker. `--session ID` with an
//! unknown id silently starts a new session, so it is not declared as an
//! exact resume: a resume that may quietly be something else is not one.

use super::{agent_cli, resume, strings, UNOBSERVED};
use crate::descriptor::{Descriptor, Evidence, LoginForm, ResumeMode};
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        resume_forms: vec![
            resume(ResumeMode::ProviderSelection, &["--continue"]),
            resume(ResumeMode::InteractivePicker, &["--session"]),
        ],
        login: LoginForm::InTerminal { args: Vec::new() },
        limitations: strings(&[
            limitation::PROVIDER_SELECTION_ONLY,
            UNOBSERVED,
            limitation::PERMISSION_PROFILE_UNENFORCED,
            limitation::RECEIPT_UNAVAILABLE,
        ]),
        ..agent_cli("kimi", "Kimi Code", &["kimi"], Evidence::Documentation)
    }
}
