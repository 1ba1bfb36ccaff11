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
}
