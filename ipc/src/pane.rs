//! What a pane is, as the protocol sees it.

use serde::{Deserialize, Serialize};
use std::fmt;

/// An opaque pane id, unique within one host's state directory.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(transparent)]
pub struct PaneId(pub String);

impl PaneId {
    /// The id as text.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for PaneId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl From<&str> for PaneId {
    fn from(id: &str) -> Self {
        PaneId(id.to_owned())
    }
}

/// A terminal size in character cells. Both fields are at least 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Size {
    /// Columns.
    pub cols: u16,
    /// Rows.
    pub rows: u16,
}

impl Size {
    /// The size a pane gets when a start request names none.
    pub const DEFAULT: Size = Size { cols: 80, rows: 24 };

    /// True when both dimensions are at least 1.
    pub fn is_valid(self) -> bool {
        self.cols >= 1 && self.rows >= 1
    }
}

impl fmt::Display for Size {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}x{}", self.cols, self.rows)
    }
}

/// How a pane's process ended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ExitStatus {
    /// The exit code; by convention 128 + n for death by signal n.
    pub code: u32,
    /// The name of the signal that ended the process, if one did.
    #[serde(default)]
    pub signal: Option<String>,
}

/// Whether a pane's process still runs.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum PaneState {
    /// The process is running.
    Running,
    /// The process has exited; the pane keeps its output and screen until
    /// it is closed.
    Exited(ExitStatus),
}

/// One pane, as `list` and `start` describe it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaneSummary {
    /// The pane's id.
    pub id: PaneId,
    /// The runtime it was started with, such as `shell`.
    pub runtime: String,
    /// Grows whenever the process behind the pane is replaced.
    pub generation: u64,
    /// Running or exited.
    pub state: PaneState,
    /// The process id of the pane's child (its process group leader).
    pub pid: u32,
    /// The terminal size.
    pub size: Size,
    /// The end offset: the total number of output bytes the pane has produced.
    pub offset: u64,
    /// The working directory the process started in.
    pub cwd: String,
    /// The window title the process set, or empty.
    pub title: String,
    /// When the pane was created, in milliseconds since the Unix epoch.
    pub created_at_ms: u64,
    /// What its agent is doing: `idle`, `busy`, `awaiting_input` or
    /// `unknown` (see [`crate::turn::activity`]).
    #[serde(default)]
    pub activity: String,
    /// How the pane came to this host: `started` (by a `start` or `login`),
    /// or, after a host restart, `keeper` (the same process, taken back
    /// from its keeper), `native_reference` or `provider_selection` (a new
    /// process that resumed the session; the generation grew), or `fresh`
    /// (a new process, starting over, where the runtime declares
    /// `HOST_LOSS_RESTARTS_FRESH`).
    #[serde(default)]
    pub restored_by: String,
    /// How the end of a turn is observed for this pane: `hook`,
    /// `notify_program`, `terminal_notification`, `screen_heuristic` or
    /// `unobserved`.
    #[serde(default)]
    pub completion: String,
}
