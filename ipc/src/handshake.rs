//! The first exchange on every connection.
//!
//! The client's first frame is a [`Hello`] and the host answers with one
//! [`HandshakeReply`]. Both are always JSON, whatever encoding the client
//! chooses, so that any client can read a refusal. After a `Welcome`, every
//! frame in both directions uses the chosen [`Encoding`].

use crate::encoding::Encoding;
use serde::{Deserialize, Serialize};

/// The protocol version this crate speaks (its major number). It grows
/// only when a change would break JSON clients too: a removed or retyped
/// field, a changed meaning.
pub const PROTOCOL_VERSION: u32 = 1;

/// The revision of [`PROTOCOL_VERSION`] this crate speaks. It grows with
/// every additive change: an optional field, a request, a response or an
/// event appended. A JSON client of any revision keeps working with a host
/// of a later one (it ignores fields it does not know, and the host
/// defaults the ones it does not send); a bincode client, whose frames lay
/// fields out by position, must speak the host's revision exactly.
///
/// Revision 1: the protocol as first published. Revision 2: `StartParams`
/// gains `rerun_after_host_loss`. Revision 3: pane labels (`StartParams`,
/// `PaneSummary`, `list`'s filter), a client's environment for `shell`
/// panes (`StartParams.env`), and `watch` with its `pane_*` events.
/// Revision 4: `attach_terminal` (the host drives a terminal the client
/// passes), answered by `terminal_released`, and `NO_TERMINAL`.
/// Revision 5: `ScreenSnapshot.trimmed` (snapshots are kept within bounds
/// whatever a program draws).
/// Revision 6: `sweep` in the answers of `close` and of `interrupt` with
/// `terminate` (what of the processes a pane started was ended, and what
/// survived).
/// Revision 7: `StartParams.allow_refused_version` (versions an adapter
/// refuses, `VERSION_REFUSED`), `RuntimeInfo.default_permission_profile`
/// (a start without a profile gets `workspace_write` where the runtime
/// enforces it), `RuntimeInfo.version_refused`, `.package` and
/// `.fingerprint`, and `Receipt.fingerprint` (a receipt is bound to the
/// installed package, not only the launcher).
/// Revision 8: the `pane_changed` event on a `watch` (a pane's size or
/// window title changed).
pub const PROTOCOL_REVISION: u32 = 8;

/// The revision a `Hello` or `Welcome` without one speaks.
fn first_revision() -> u32 {
    1
}

/// The client's first frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Hello {
    /// The protocol version the client speaks.
    pub protocol: u32,
    /// The revision of that version the client speaks; 1 when absent (a
    /// client from before revisions).
    #[serde(default = "first_revision")]
    pub revision: u32,
    /// The encoding of every later frame, in both directions.
    pub encoding: Encoding,
    /// A free-form name of the client, for the host's log.
    #[serde(default)]
    pub client: String,
}

/// The host's answer to a [`Hello`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum HandshakeReply {
    /// The connection is open; requests may follow.
    Welcome(Welcome),
    /// The connection is refused and will be closed.
    Refused {
        /// A stable error code, such as `PROTOCOL_MISMATCH`.
        #[schemars(with = "crate::vocabulary::ErrorCodeSchema")]
        code: String,
        /// A sentence for people.
        message: String,
        /// The protocol version the host speaks.
        protocol: u32,
    },
}

/// Details of an accepted connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Welcome {
    /// The protocol version the host speaks (equal to the client's).
    pub protocol: u32,
    /// The revision the host speaks: with bincode, equal to the client's;
    /// with JSON, possibly newer or older than the client's (1 when absent:
    /// a host from before revisions).
    #[serde(default = "first_revision")]
    pub revision: u32,
    /// The host's name and version, for example `panehost 0.1.0`.
    pub host: String,
    /// The encoding now in force.
    pub encoding: Encoding,
}

impl Hello {
    /// A hello of this crate's version and revision.
    pub fn new(encoding: Encoding, client: impl Into<String>) -> Hello {
        Hello { protocol: PROTOCOL_VERSION, revision: PROTOCOL_REVISION, encoding, client: client.into() }
    }
}
