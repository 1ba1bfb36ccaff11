//! `shell`: the user's login shell, or a command given for it.

use super::strings;
use crate::completion::HookInjection;
use crate::descriptor::{
    CommandPolicy, CompletionSignal, ContextOwner, Descriptor, Evidence, Executable, LoginForm, ModelForm,
    ReceiptSupport, ReferenceCapture, SelfUpdateOff, VersionProbe,
};
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        id: panehost_ipc::runtime::SHELL.into(),
        display_name: "Shell".into(),
        executable: Executable::FromVariable { variable: "SHELL".into(), fallback: "/bin/sh".into() },
        version: VersionProbe::default(),
        supported: true,
        command_policy: CommandPolicy::ClientMayGiveCommand,
        base_args: Vec::new(),
        model: ModelForm::NotTaken,
        resume_forms: Vec::new(),
        reference_pattern: None,
        references_proven_live: false,
        interrupt_keys: b"\x03".to_vec(),
        interrupt_presses: 1,
        interrupt_keeps_request: false,
        // An interactive bash gets prompt marks that say where each command
        // ends, and with what status (`shell_integration.rs`). Other shells
        // say nothing when a command ends: the screen going quiet after
        // input is the best signal there, reported as a heuristic.
        completion: CompletionSignal::ScreenHeuristic,
        hook_injection: Some(HookInjection::BashPromptMarks),
        declared_hooks: None,
        drops_early_input: false,
        // bash's line editor reads raw keys only while it reads a line;
        // its prompt marks say when (`ready_for_input`).
        reads_raw_input: false,
        ready_marker: None,
        login: LoginForm::NotRequired,
        sign_in: None,
        receipt: ReceiptSupport::NotAnAgent,
        reads_environment: Vec::new(),
        environment: Vec::new(),
        self_update_off: SelfUpdateOff::default(),
        // A shell has no sandbox or approvals of its own to map a profile on.
        permission_profiles: Vec::new(),
        limitations: strings(&[
            limitation::NATIVE_RESUME_UNSUPPORTED,
            limitation::HOST_LOSS_RESTARTS_FRESH,
            limitation::PERMISSION_PROFILE_UNENFORCED,
        ]),
        evidence: Evidence::ThisRepository,
        npm_package: None,
        pypi_distribution: None,
        refused_versions: Vec::new(),
        reference_capture: ReferenceCapture::None,
        context_owner: ContextOwner::Cli,
        for_tests: false,
    }
}
