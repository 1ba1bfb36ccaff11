//! panehost's wire contract.
//!
//! Everything that crosses the host's local socket is defined here and nowhere
//! else: the frame layout, the handshake, the two encodings, the requests a
//! client sends, the responses and events the host sends back, and the string
//! vocabularies (error codes, limitation codes, runtime ids) that let the
//! contract grow without breaking clients.
//!
//! A connection looks like this:
//!
//! ```text
//! client                                   host
//!   | -- frame: Hello (always JSON) ------->  |
//!   | <------ frame: HandshakeReply (JSON) -- |
//!   | -- frame: RequestFrame {id, request} -> |   in the chosen encoding
//!   | <- frame: ServerMessage::Response {id} |   (bincode or JSON)
//!   | <- frame: ServerMessage::Event {subscription}
//! ```
//!
//! Every frame is a 4-byte big-endian length followed by that many bytes
//! ([`frame`]). This crate depends on no other panehost crate, and on no PTY
//! or async runtime code, so any Rust program can speak the protocol.
//!
//! Every message goes through one pair of functions, [`encode`] and
//! [`decode`]; a request in both encodings:
//!
//! ```
//! use panehost_ipc::{decode, encode, Encoding, Request, RequestFrame};
//!
//! let frame = RequestFrame { id: 1, request: Request::List { labels: Default::default() } };
//! let json = encode(Encoding::Json, &frame)?;
//! assert_eq!(json, br#"{"id":1,"request":{"list":{"labels":{}}}}"#);
//! // bincode: the id, the variant's number (8, `list`), an empty map.
//! let bincode = encode(Encoding::Bincode, &frame)?;
//! assert_eq!(bincode, [0x01, 0x08, 0x00]);
//! assert_eq!(decode::<RequestFrame>(Encoding::Bincode, &bincode)?, frame);
//! assert_eq!(decode::<RequestFrame>(Encoding::Json, br#"{"id":1,"request":{"list":{}}}"#)?, frame);
//! # Ok::<(), panehost_ipc::WireError>(())
//! ```

#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

pub mod byte_buf;
pub mod client_env;
pub mod encoding;
pub mod error;
pub mod event;
pub mod frame;
pub mod handshake;
pub mod host_claim;
pub mod labels;
pub mod limitation;
pub mod pane;
pub mod request;
pub mod response;
pub mod runtime;
pub mod schema;
pub mod screen;
pub mod socket_path;
pub mod terminal;
pub mod turn;
pub mod vocabulary;
pub mod wait;

pub use byte_buf::ByteBuf;
pub use client_env::{check_client_env, ClientEnv, ClientEnvError};
pub use encoding::{decode, decode_request, encode, Encoding, RequestDecodeError, WireError};
pub use error::{ErrorBody, ErrorCode};
pub use event::{Event, StreamStart};
pub use frame::{FrameCodecs, MAX_CLIENT_FRAME_LEN, MAX_HANDSHAKE_FRAME_LEN, MAX_SERVER_FRAME_LEN};
pub use handshake::{HandshakeReply, Hello, Welcome, PROTOCOL_REVISION, PROTOCOL_VERSION};
pub use host_claim::HostClaim;
pub use labels::{check_labels, labels_match, Labels, LabelsError};
pub use pane::{ExitStatus, PaneId, PaneState, PaneSummary, Size, SizeOutOfRange};
pub use request::{Request, RequestFrame, ResumeRequest, SendParams, StartParams};
pub use response::{
    InterruptReport, InterruptStep, PaneDetail, PaneHistory, PaneSweep, Response, ServerMessage, Subscription,
    MAX_SWEEP_SURVIVORS,
};
pub use runtime::{Receipt, RuntimeInfo, VersionRefusal, RECEIPT_TIMEOUT_MS};
pub use screen::{
    Cursor, InputModes, ScreenSnapshot, CLEAR_TERMINAL, MAX_SNAPSHOT_FORMATTED_LEN, MAX_SNAPSHOT_TEXT_LEN,
};
pub use terminal::TerminalRelease;
pub use turn::{TurnReport, Usage};
pub use wait::{WaitForParams, WaitMatch, WaitTarget};
