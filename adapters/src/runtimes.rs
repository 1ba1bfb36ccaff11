//! The built-in descriptors.

use crate::descriptor::{no_reference, CommandPolicy, Descriptor, Executable, ResumeForm, ResumeMode};
use panehost_ipc::limitation;

/// The user's shell, or a command given for it.
pub const SHELL: Descriptor = Descriptor {
    id: "shell",
    display_name: "Shell",
    executable: Executable::FromVariable { variable: "SHELL", fallback: "/bin/sh" },
    supported: true,
    command_policy: CommandPolicy::ClientMayGiveCommand,
    base_args: &[],
    model_flag: None,
    resume_forms: &[],
    reference_is_valid: no_reference,
    interrupt_keys: b"\x03",
    environment: &[],
    limitations: &[limitation::NATIVE_RESUME_UNSUPPORTED, limitation::HOST_LOSS_RESTARTS_FRESH, limitation::COMPLETION_UNOBSERVED],
};

/// The fixture agent the tests drive: a real program that behaves like an
/// agent CLI (a prompt, a busy phase, an interrupt, a session store).
pub const FIXTURE: Descriptor = Descriptor {
    id: "fixture",
    display_name: "Fixture agent (tests)",
    executable: Executable::Named { names: &["panehost-fixture-agent"], known_paths: &[] },
    supported: true,
    command_policy: CommandPolicy::HostBuildsArgv,
    base_args: &[],
    model_flag: None,
    resume_forms: &[
        ResumeForm { mode: ResumeMode::Reference, args: &["--resume", crate::descriptor::REFERENCE_PLACEHOLDER] },
        ResumeForm { mode: ResumeMode::ProviderSelection, args: &["--continue"] },
    ],
    reference_is_valid: fixture_reference_is_valid,
    interrupt_keys: b"\x03",
    environment: &[],
    limitations: &[limitation::COMPLETION_UNOBSERVED],
};

/// Every built-in descriptor.
pub const BUILT_IN: &[Descriptor] = &[SHELL, FIXTURE];

/// `fx-` and exactly sixteen lowercase hex digits.
fn fixture_reference_is_valid(reference: &str) -> bool {
    let Some(hex) = reference.strip_prefix("fx-") else { return false };
    hex.len() == 16 && hex.bytes().all(|byte| matches!(byte, b'0'..=b'9' | b'a'..=b'f'))
}
