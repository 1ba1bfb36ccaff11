//! Runtimes as `runtimes` lists them.

use serde::{Deserialize, Serialize};

/// The id of the runtime every host offers: the user's login shell, or a
/// command given for it. `panehost new` starts it when no runtime is named.
pub const SHELL: &str = "shell";

/// Whether a runtime is ready for work (`RuntimeInfo.readiness`).
pub mod readiness {
    /// Every gate passed.
    pub const READY: &str = "ready";
    /// A gate stops it (`readiness_gate` names it).
    pub const NOT_READY: &str = "not_ready";
    /// Its version could not be read: it can be started, with the
    /// capabilities that need a known version withheld.
    pub const REDUCED: &str = "reduced";

    /// The known values of the `Readiness` vocabulary ([`crate::vocabulary`]).
    pub const ALL: &[&str] = &[READY, NOT_READY, REDUCED];
}

/// The readiness gates (`RuntimeInfo.readiness_gate`), in the order they
/// are checked.
pub mod readiness_gate {
    /// Policy allows starting it.
    pub const SUPPORTED: &str = "supported";
    /// It is installed and its executable identified.
    pub const INSTALLED: &str = "installed";
    /// Its version is not below the adapter's floor.
    pub const VERSION: &str = "version";
    /// It is signed in, where that can be seen.
    pub const SIGN_IN: &str = "sign_in";
    /// A valid completion receipt exists for the executable installed.
    pub const RECEIPT: &str = "receipt";

    /// The known values of the `ReadinessGate` vocabulary
    /// ([`crate::vocabulary`]).
    pub const ALL: &[&str] = &[SUPPORTED, INSTALLED, VERSION, SIGN_IN, RECEIPT];
}

/// What the host can read of a runtime's sign-in (`RuntimeInfo.sign_in`).
pub mod sign_in {
    /// A trace of a sign-in is there.
    pub const SIGNED_IN: &str = "signed_in";
    /// No trace of a sign-in.
    pub const SIGNED_OUT: &str = "signed_out";
    /// The CLI leaves no trace that can be read without asking its provider.
    pub const UNOBSERVABLE: &str = "unobservable";
    /// The runtime needs no sign-in.
    pub const NOT_REQUIRED: &str = "not_required";

    /// The known values of the `SignIn` vocabulary ([`crate::vocabulary`]).
    pub const ALL: &[&str] = &[SIGNED_IN, SIGNED_OUT, UNOBSERVABLE, NOT_REQUIRED];
}

/// How a user signs in (`RuntimeInfo.login`).
pub mod login_form {
    /// An interactive sign-in in the terminal (`login` opens it).
    pub const IN_TERMINAL: &str = "in_terminal";
    /// Signing in happens outside the terminal.
    pub const OUTSIDE_TERMINAL: &str = "outside_terminal";
    /// The runtime needs no sign-in.
    pub const NOT_REQUIRED: &str = "not_required";

    /// The known values of the `LoginForm` vocabulary ([`crate::vocabulary`]).
    pub const ALL: &[&str] = &[IN_TERMINAL, OUTSIDE_TERMINAL, NOT_REQUIRED];
}

/// Where an adapter's flags come from (`RuntimeInfo.evidence`).
pub mod evidence {
    /// The CLI's help, captured and kept with the adapter.
    pub const CAPTURED_HELP: &str = "captured_help";
    /// The CLI's documentation.
    pub const DOCUMENTATION: &str = "documentation";
    /// This repository (the host's own shell runtime).
    pub const THIS_REPOSITORY: &str = "this_repository";
    /// The operator's configuration file.
    pub const OPERATOR: &str = "operator";

    /// The known values of the `Evidence` vocabulary ([`crate::vocabulary`]).
    pub const ALL: &[&str] = &[CAPTURED_HELP, DOCUMENTATION, THIS_REPOSITORY, OPERATOR];
}

/// How a runtime's version stands against its adapter's floor
/// (`RuntimeInfo.floor_status`).
pub mod floor_status {
    /// At or above the floor.
    pub const AT_OR_ABOVE: &str = "at_or_above";
    /// Below the floor.
    pub const BELOW: &str = "below";
    /// The version could not be read or compared.
    pub const INDETERMINATE: &str = "indeterminate";

    /// The known values of the `FloorStatus` vocabulary
    /// ([`crate::vocabulary`]).
    pub const ALL: &[&str] = &[AT_OR_ABOVE, BELOW, INDETERMINATE];
}

/// The ways a runtime resumes an earlier session natively
/// (`RuntimeInfo.resume_modes`).
pub mod resume_mode {
    /// An exact recorded session reference.
    pub const REFERENCE: &str = "REFERENCE";
    /// The CLI picks ("continue the latest").
    pub const PROVIDER_SELECTION: &str = "PROVIDER_SELECTION";
    /// The CLI opens an interactive picker.
    pub const INTERACTIVE_PICKER: &str = "INTERACTIVE_PICKER";

    /// The known values of the `ResumeMode` vocabulary ([`crate::vocabulary`]).
    pub const ALL: &[&str] = &[REFERENCE, PROVIDER_SELECTION, INTERACTIVE_PICKER];
}

/// The permission profiles (`StartParams.permission_profile`,
/// `RuntimeInfo.permission_profiles`).
pub mod permission_profile {
    /// Read files only.
    pub const READ_ONLY: &str = "read_only";
    /// Write inside the working directory.
    pub const WORKSPACE_WRITE: &str = "workspace_write";
    /// No boundary.
    pub const FULL_ACCESS: &str = "full_access";

    /// The known values of the `PermissionProfile` vocabulary
    /// ([`crate::vocabulary`]).
    pub const ALL: &[&str] = &[READ_ONLY, WORKSPACE_WRITE, FULL_ACCESS];
}

/// What the host knows about one runtime it can start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RuntimeInfo {
    /// The runtime id used in `start`, such as `shell` or `claude`.
    pub id: String,
    /// A name for people.
    pub display_name: String,
    /// Whether policy allows starting it.
    pub supported: bool,
    /// Whether it is installed and its executable identified.
    pub available: bool,
    /// The resolved executable, when found.
    #[serde(default)]
    pub path: Option<String>,
    /// The version the executable reported, when probed.
    #[serde(default)]
    pub version: Option<String>,
    /// Why it cannot be started now, when it cannot.
    #[serde(default)]
    pub unavailable_reason: Option<String>,
    /// Native-resume modes, such as `REFERENCE` or `PROVIDER_SELECTION`.
    #[schemars(with = "Vec<crate::vocabulary::ResumeModeSchema>")]
    pub resume_modes: Vec<String>,
    /// Declared limitation codes (see [`crate::limitation`]).
    #[schemars(with = "Vec<crate::vocabulary::LimitationCodeSchema>")]
    pub limitations: Vec<String>,
    /// SHA-256 of the executable, when identified.
    #[serde(default)]
    pub sha256: Option<String>,
    /// The oldest version the adapter's flags are known to hold for.
    #[serde(default)]
    pub version_floor: Option<String>,
    /// `at_or_above`, `below` or `indeterminate`; absent until detected.
    #[serde(default)]
    #[schemars(with = "Option<crate::vocabulary::FloorStatusSchema>")]
    pub floor_status: Option<String>,
    /// `ready`, `not_ready` or `reduced` (its version could not be read:
    /// it can be started, with the capabilities that need a known version
    /// withheld).
    #[serde(default)]
    #[schemars(with = "crate::vocabulary::ReadinessSchema")]
    pub readiness: String,
    /// The first gate that stops it (`supported`, `installed`, `version`,
    /// `sign_in`, `receipt`), or for `reduced` the gate that reduces it.
    #[serde(default)]
    #[schemars(with = "Option<crate::vocabulary::ReadinessGateSchema>")]
    pub readiness_gate: Option<String>,
    /// Why that gate stops or reduces it.
    #[serde(default)]
    pub readiness_reason: Option<String>,
    /// `signed_in`, `signed_out`, `unobservable` (the CLI leaves no trace
    /// that can be read without asking its provider) or `not_required`.
    #[serde(default)]
    #[schemars(with = "crate::vocabulary::SignInSchema")]
    pub sign_in: String,
    /// What the sign-in reading rests on (a credentials file, a variable
    /// being set; never a secret).
    #[serde(default)]
    pub sign_in_detail: Option<String>,
    /// The last completion receipt taken for this runtime, if any; it
    /// counts only while `receipt_valid`.
    #[serde(default)]
    pub receipt: Option<Receipt>,
    /// Whether that receipt counts now: it passed, was taken from the
    /// executable now installed, and is under 24 hours old.
    #[serde(default)]
    pub receipt_valid: bool,
    /// How the end of a turn is observed for a pane started now: `hook`,
    /// `notify_program`, `terminal_notification`, `screen_heuristic`,
    /// `unobserved` or `shell_integration` ([`crate::turn::completion`]);
    /// what its panes report.
    #[serde(default)]
    #[schemars(with = "crate::vocabulary::CompletionSourceSchema")]
    pub completion: String,
    /// How a user signs in: `in_terminal`, `outside_terminal` or
    /// `not_required`.
    #[serde(default)]
    #[schemars(with = "crate::vocabulary::LoginFormSchema")]
    pub login: String,
    /// Where the adapter's flags come from: `captured_help`,
    /// `documentation`, `this_repository` or `operator`.
    #[serde(default)]
    #[schemars(with = "crate::vocabulary::EvidenceSchema")]
    pub evidence: String,
    /// The permission profiles the runtime enforces (`read_only`,
    /// `workspace_write`, `full_access`); a start asking for another is
    /// refused unless it accepts a weaker boundary.
    #[serde(default)]
    #[schemars(with = "Vec<crate::vocabulary::PermissionProfileSchema>")]
    pub permission_profiles: Vec<String>,
    /// The permission profile a start that names none gets on this runtime
    /// (revision 7): the host's default, `workspace_write`, when the
    /// runtime enforces it; absent when it does not, and such a start runs
    /// with the CLI's own defaults.
    #[serde(default)]
    pub default_permission_profile: Option<String>,
    /// Set when the installed version is one the runtime's adapter refuses
    /// (revision 7): readiness is then `not_ready` at the `version` gate,
    /// and a start is refused with `OPERATION_UNSUPPORTED` naming
    /// `VERSION_REFUSED` unless it sets `allow_refused_version`.
    #[serde(default)]
    pub version_refused: Option<VersionRefusal>,
    /// What the executable runs from, when it was found (revision 7): the
    /// installed package under the launcher, such as `pypi kimi-cli 1.50.0`
    /// or `npm @qwen-code/qwen-code 0.24.4`.
    #[serde(default)]
    pub package: Option<String>,
    /// The fingerprint a completion receipt is bound to (revision 7):
    /// SHA-256 over the executable's SHA-256, its version as probed, and
    /// its installed package's files (a PyPI distribution's `RECORD`, an
    /// npm package's `package.json`). An upgrade in place changes it even
    /// when the launcher on `PATH` stays byte-identical.
    #[serde(default)]
    pub fingerprint: Option<String>,
}

/// A range of versions an adapter refuses, and why (revision 7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct VersionRefusal {
    /// The first version refused, as dotted numbers.
    pub from: String,
    /// The first version no longer refused; absent when every later
    /// version is refused too.
    #[serde(default)]
    pub before: Option<String>,
    /// Why, for people.
    pub reason: String,
}

/// How long the host lets a receipt probe's one-shot run take before it
/// ends it and records the receipt as failed.
pub const RECEIPT_TIMEOUT_MS: u64 = 180_000;

/// A completion receipt: the runtime's one-shot mode was asked for one JSON
/// object carrying a fresh random value, inside the read-only boundary, and
/// this is what came back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Receipt {
    /// The runtime id.
    pub runtime: String,
    /// Whether the answer was exactly the object asked for.
    pub passed: bool,
    /// What was seen: the mismatch, the exit status, or a timeout.
    pub detail: String,
    /// The executable that answered.
    pub path: String,
    /// Its version, as its version probe printed it.
    #[serde(default)]
    pub version: Option<String>,
    /// Its SHA-256; a different executable voids the receipt.
    pub sha256: String,
    /// The fingerprint of what ran (revision 7; see
    /// [`RuntimeInfo::fingerprint`]); a different one voids the receipt,
    /// and so does its absence (a receipt stored by an older host).
    #[serde(default)]
    pub fingerprint: Option<String>,
    /// When it was taken, in milliseconds since the Unix epoch.
    pub taken_at_ms: u64,
    /// How long the one-shot run took.
    pub elapsed_ms: u64,
    /// Whether the read-only boundary was enforced (false only when the
    /// runtime cannot enforce it and the probe accepted a weaker one).
    pub read_only_enforced: bool,
}
