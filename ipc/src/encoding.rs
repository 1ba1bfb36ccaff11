//! The two encodings and the one pair of functions every frame goes through.
//!
//! `bincode` (version 2, standard configuration, through serde) suits Rust
//! clients; `json` suits everyone else. Both are complete: every message in
//! this crate round-trips through either.
//!
//! Decoding never allocates more than a frame may hold: bincode writes
//! lengths inside a payload (a string, a byte string, a list), and its
//! standard configuration would allocate whatever such a length claims
//! before finding the bytes missing. Every bincode decode here runs with a
//! limit ([`MAX_SERVER_FRAME_LEN`] for what the host sends,
//! [`MAX_CLIENT_FRAME_LEN`] for requests), and a length that claims more
//! than that is a malformed frame. serde_json allocates only as it reads.

use crate::frame::{MAX_CLIENT_FRAME_LEN, MAX_SERVER_FRAME_LEN};
use crate::request::RequestFrame;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

/// How frames after the handshake are encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Encoding {
    /// bincode 2, standard configuration (varint integers, little endian).
    Bincode,
    /// UTF-8 JSON, one value per frame.
    Json,
}

impl Encoding {
    /// The name used on the wire and on the command line.
    pub fn as_str(self) -> &'static str {
        match self {
            Encoding::Bincode => "bincode",
            Encoding::Json => "json",
        }
    }
}

/// A frame that could not be encoded or decoded.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The payload is not valid JSON for the expected message.
    #[error("invalid JSON: {0}")]
    Json(#[from] serde_json::Error),
    /// The payload is not valid bincode for the expected message.
    #[error("invalid bincode: {0}")]
    BincodeDecode(#[from] bincode::error::DecodeError),
    /// The message could not be encoded in bincode.
    #[error("cannot encode bincode: {0}")]
    BincodeEncode(#[from] bincode::error::EncodeError),
    /// Bytes were left over after a complete message.
    #[error("{0} trailing bytes after the message")]
    TrailingBytes(usize),
}

/// Encodes one message.
///
/// # Errors
/// Fails only if a value cannot be represented, which no message of this
/// crate does.
pub fn encode<T: Serialize>(encoding: Encoding, message: &T) -> Result<Vec<u8>, WireError> {
    match encoding {
        Encoding::Json => Ok(serde_json::to_vec(message)?),
        Encoding::Bincode => Ok(bincode::serde::encode_to_vec(message, bincode::config::standard())?),
    }
}

/// Decodes one message that fills the whole payload. No length inside the
/// payload makes it allocate more than [`MAX_SERVER_FRAME_LEN`] bytes.
///
/// # Errors
/// Returns a [`WireError`] when the payload is not a well-formed message of
/// type `T`, has bytes left over, or (bincode) claims a length over the
/// limit.
pub fn decode<T: DeserializeOwned>(encoding: Encoding, payload: &[u8]) -> Result<T, WireError> {
    match encoding {
        Encoding::Json => Ok(serde_json::from_slice(payload)?),
        Encoding::Bincode => {
            let config = bincode::config::standard().with_limit::<MAX_SERVER_FRAME_LEN>();
            whole(payload, bincode::serde::decode_from_slice(payload, config)?)
        }
    }
}

/// Decodes a message a client sent: as [`decode`], with the bincode limit
/// of a client's frame, [`MAX_CLIENT_FRAME_LEN`].
fn decode_from_client<T: DeserializeOwned>(encoding: Encoding, payload: &[u8]) -> Result<T, WireError> {
    match encoding {
        Encoding::Json => Ok(serde_json::from_slice(payload)?),
        Encoding::Bincode => {
            let config = bincode::config::standard().with_limit::<MAX_CLIENT_FRAME_LEN>();
            whole(payload, bincode::serde::decode_from_slice(payload, config)?)
        }
    }
}

/// A bincode message that must have used every byte of its payload.
fn whole<T>(payload: &[u8], (message, used): (T, usize)) -> Result<T, WireError> {
    if used != payload.len() {
        return Err(WireError::TrailingBytes(payload.len() - used));
    }
    Ok(message)
}

/// A request frame that could not be decoded, with its id when the id
/// itself was readable (so the error response can echo it).
#[derive(Debug, thiserror::Error)]
#[error("{error}")]
pub struct RequestDecodeError {
    /// The request id, if the frame carried a readable one.
    pub id: Option<u64>,
    /// What was wrong.
    pub error: WireError,
}

/// Decodes a request frame. When the frame is malformed but its `id` can be
/// read (an unknown operation, a missing field), the id is kept so the host
/// can answer that request with a structured error. No length inside the
/// payload makes it allocate more than [`MAX_CLIENT_FRAME_LEN`] bytes.
///
/// # Errors
/// Returns a [`RequestDecodeError`] for any malformed frame.
pub fn decode_request(encoding: Encoding, payload: &[u8]) -> Result<RequestFrame, RequestDecodeError> {
    decode_from_client::<RequestFrame>(encoding, payload)
        .map_err(|error| RequestDecodeError { id: peek_request_id(encoding, payload), error })
}

fn peek_request_id(encoding: Encoding, payload: &[u8]) -> Option<u64> {
    match encoding {
        Encoding::Json => {
            #[derive(Deserialize)]
            struct IdOnly {
                id: u64,
            }
            serde_json::from_slice::<IdOnly>(payload).ok().map(|frame| frame.id)
        }
        // The id is the first field of a request frame.
        Encoding::Bincode => {
            bincode::serde::decode_from_slice::<u64, _>(payload, bincode::config::standard()).ok().map(|(id, _)| id)
        }
    }
}
