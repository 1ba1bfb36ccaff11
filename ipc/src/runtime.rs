//! Runtimes as `runtimes` lists them.

use serde::{Deserialize, Serialize};

/// What the host knows about one runtime it can start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
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
    /// Whether it can be started now.
    #[serde(default)]
    pub ready: bool,
    /// The first gate that stops it, when it is not ready.
    #[serde(default)]
    pub not_ready_reason: Option<String>,
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
