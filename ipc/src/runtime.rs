//! Runtimes as `runtimes` lists them.

use serde::{Deserialize, Serialize};

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
    pub resume_modes: Vec<String>,
    /// Declared limitation codes (see [`crate::limitation`]).
    pub limitations: Vec<String>,
    /// SHA-256 of the executable, when identified.
    #[serde(default)]
    pub sha256: Option<String>,
    /// The oldest version the adapter's flags are known to hold for.
    #[serde(default)]
    pub version_floor: Option<String>,
    /// `at_or_above`, `below` or `indeterminate`; absent until detected.
    #[serde(default)]
    pub floor_status: Option<String>,
    /// `ready`, `not_ready` or `reduced` (its version could not be read:
    /// it can be started, with the capabilities that need a known version
    /// withheld).
    #[serde(default)]
    pub readiness: String,
    /// The first gate that stops it (`supported`, `installed`, `version`,
    /// `sign_in`, `receipt`), or for `reduced` the gate that reduces it.
    #[serde(default)]
    pub readiness_gate: Option<String>,
    /// Why that gate stops or reduces it.
    #[serde(default)]
    pub readiness_reason: Option<String>,
    /// `signed_in`, `signed_out`, `unobservable` (the CLI leaves no trace
    /// that can be read without asking its provider) or `not_required`.
    #[serde(default)]
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
    /// How the end of a turn is observed: `hook`, `notify_program`,
    /// `terminal_notification`, `screen_heuristic` or `unobserved`.
    #[serde(default)]
    pub completion: String,
    /// How a user signs in: `in_terminal`, `outside_terminal` or
    /// `not_required`.
    #[serde(default)]
    pub login: String,
    /// Where the adapter's flags come from: `captured_help`,
    /// `documentation`, `this_repository` or `operator`.
    #[serde(default)]
    pub evidence: String,
    /// The permission profiles the runtime enforces (`read_only`,
    /// `workspace_write`, `full_access`); a start asking for another is
    /// refused unless it accepts a weaker boundary.
    #[serde(default)]
    pub permission_profiles: Vec<String>,
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
    /// When it was taken, in milliseconds since the Unix epoch.
    pub taken_at_ms: u64,
    /// How long the one-shot run took.
    pub elapsed_ms: u64,
    /// Whether the read-only boundary was enforced (false only when the
    /// runtime cannot enforce it and the probe accepted a weaker one).
    pub read_only_enforced: bool,
}
