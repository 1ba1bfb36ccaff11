//! The first exchange on every connection.
//!
//! The client's first frame is a [`Hello`] and the host answers with one
//! [`HandshakeReply`]. Both are always JSON, whatever encoding the client
//! chooses, so that any client can read a refusal. After a `Welcome`, every
//! frame in both directions uses the chosen [`Encoding`].

use crate::encoding::Encoding;
use serde::{Deserialize, Serialize};

/// The protocol version this crate speaks. It grows whenever a frame's
/// layout changes in a way an older peer could not decode.
pub const PROTOCOL_VERSION: u32 = 1;

/// The client's first frame.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hello {
    /// The protocol version the client speaks.
    pub protocol: u32,
    /// The encoding of every later frame, in both directions.
    pub encoding: Encoding,
    /// A free-form name of the client, for the host's log.
    #[serde(default)]
    pub client: String,
}

/// The host's answer to a [`Hello`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum HandshakeReply {
    /// The connection is open; requests may follow.
    Welcome(Welcome),
    /// The connection is refused and will be closed.
    Refused {
        /// A stable error code, such as `PROTOCOL_MISMATCH`.
        code: String,
        /// A sentence for people.
        message: String,
        /// The protocol version the host speaks.
        protocol: u32,
    },
}

/// Details of an accepted connection.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Welcome {
    /// The protocol version the host speaks (equal to the client's).
    pub protocol: u32,
    /// The host's name and version, for example `panehost 0.1.0`.
    pub host: String,
    /// The encoding now in force.
    pub encoding: Encoding,
}
