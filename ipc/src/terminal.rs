//! The end of a terminal attachment (`attach_terminal`): why the host
//! stopped using the client's terminal.

use crate::pane::{ExitStatus, PaneId};
use serde::{Deserialize, Serialize};

/// Why an attachment ended, as [`TerminalRelease::reason`] says it.
pub mod release_reason {
    /// The detach key was read from the terminal.
    pub const DETACHED: &str = "detached";
    /// The pane's process exited (its status is in `exit`).
    pub const EXITED: &str = "exited";
    /// The pane was closed.
    pub const CLOSED: &str = "closed";
    /// The client ended its requests: it closed its sending side or the
    /// connection.
    pub const CLIENT_ENDED: &str = "client_ended";
    /// Reading or writing the terminal failed (it hung up).
    pub const TERMINAL_LOST: &str = "terminal_lost";

    /// Every reason: the known values of the `ReleaseReason` vocabulary
    /// ([`crate::vocabulary`]).
    pub const ALL: &[&str] = &[DETACHED, EXITED, CLOSED, CLIENT_ENDED, TERMINAL_LOST];
}

/// Answers `attach_terminal`: the host no longer reads or writes the
/// terminal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TerminalRelease {
    /// The pane.
    pub pane: PaneId,
    /// Why: one of `detached`, `exited`, `closed`, `client_ended`,
    /// `terminal_lost` ([`release_reason`]).
    #[schemars(with = "crate::vocabulary::ReleaseReasonSchema")]
    pub reason: String,
    /// The process's exit status, when it exited.
    #[serde(default)]
    pub exit: Option<ExitStatus>,
}
