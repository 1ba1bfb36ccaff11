//! `fixture`: the fixture agent of this repository's tests, a real program
//! that behaves like an agent CLI (a prompt, a busy phase, Ctrl-C, a
//! session store with ids to resume).

use super::{agent_cli, receipt, resume, strings};
use crate::descriptor::{
    CompletionSignal, Descriptor, Evidence, LoginForm, ReferenceCapture, ResumeMode, VersionProbe,
};
use crate::reference_pattern::ReferencePattern;
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        version: VersionProbe { args: strings(&["--version"]), floor: Some("1.0.0".into()) },
        resume_forms: vec![
            resume(ResumeMode::Reference, &["--resume", "{reference}"]),
            resume(ResumeMode::ProviderSelection, &["--continue"]),
        ],
        reference_pattern: Some(ReferencePattern::constant("fx-[0-9a-f]{16}")),
        // Its exact resume is proven by the end-to-end tests.
        references_proven_live: true,
        // It prints `session: fx-...` when it starts.
        reference_capture: ReferenceCapture::OutputMarker("session: ".into()),
        // It ends every turn with an OSC 9 notification.
        completion: CompletionSignal::TerminalNotification,
        // `--print PROMPT` answers once and exits.
        receipt: receipt(&["--print", "{prompt}"]),
        login: LoginForm::NotRequired,
        // It reads lines, in whatever mode the terminal is in.
        reads_raw_input: false,
        for_tests: true,
        // It has no sandbox or approvals to map a permission profile on.
        limitations: strings(&[limitation::PERMISSION_PROFILE_UNENFORCED]),
        ..agent_cli("fixture", "Fixture agent (tests)", &["panehost-fixture-agent"], Evidence::ThisRepository)
    }
}
