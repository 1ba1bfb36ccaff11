//! The result of admission: exactly what the host will spawn.

use crate::completion::{HookInjection, LaunchFile};
use crate::descriptor::{CompletionSignal, PermissionProfile, ReferenceCapture, ResumeMode};
use crate::reference_pattern::ReferencePattern;
use std::path::PathBuf;

/// Why a plan exists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LaunchPurpose {
    /// A fresh session.
    Start,
    /// A resumed session, in this mode.
    Resume(ResumeMode),
    /// The runtime's own interactive sign-in.
    Login,
    /// A one-shot run that takes a completion receipt.
    Receipt,
}

/// Everything the host needs to spawn a pane's process, and nothing it has
/// to decide itself.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchPlan {
    /// The runtime id the plan is for.
    pub runtime: String,
    /// Why it is launched.
    pub purpose: LaunchPurpose,
    /// The executable, resolved to a path.
    pub program: PathBuf,
    /// Arguments after the program name.
    pub args: Vec<String>,
    /// The working directory.
    pub cwd: PathBuf,
    /// The complete environment of the child; nothing else is inherited.
    pub env: Vec<(String, String)>,
    /// The bytes that ask the runtime to stop what it is doing.
    pub interrupt_keys: Vec<u8>,
    /// How many times the keys are pressed.
    pub interrupt_presses: u8,
    /// How the end of a turn will be observed for this launch.
    pub completion: CompletionSignal,
    /// How the CLI's hooks were injected into this launch (which also
    /// says how their payloads read); `None` when they were not.
    pub hook_injection: Option<HookInjection>,
    /// Files the host writes before spawning (the hooks of CLIs that read
    /// them only from files); each replaces what was there.
    pub files: Vec<LaunchFile>,
    /// Input must wait until the CLI has drawn its prompt.
    pub drops_early_input: bool,
    /// See [`Descriptor::reads_raw_input`](crate::Descriptor::reads_raw_input).
    pub reads_raw_input: bool,
    /// See [`Descriptor::ready_marker`](crate::Descriptor::ready_marker).
    pub ready_marker: Option<String>,
    /// Where the session's native reference is captured, and the pattern
    /// it must match.
    pub reference_capture: ReferenceCapture,
    /// The anchored pattern references are checked against.
    pub reference_pattern: Option<ReferencePattern>,
    /// The permission profile this launch enforces: the one asked for, or
    /// with none asked for (or one the runtime cannot enforce, accepted as
    /// a weaker boundary) the host's default where the runtime enforces it.
    pub permission_profile: Option<PermissionProfile>,
    /// A permission profile that was asked for, that the runtime cannot
    /// enforce, and that the client accepted as a weaker boundary: the
    /// launch runs with the host's default profile where the runtime
    /// enforces it, else with the CLI's own defaults.
    pub unenforced_profile: Option<PermissionProfile>,
    /// The client allows a version the adapter refuses
    /// (`allow_refused_version`); the host checks the detected version
    /// immediately before the spawn.
    pub allow_refused_version: bool,
}
