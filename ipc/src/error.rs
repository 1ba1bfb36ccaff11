//! The error vocabulary.
//!
//! Error codes travel as strings (`SCREAMING_SNAKE_CASE`), so a new code is
//! never a breaking change; a client that does not know a code treats it
//! as a generic failure and shows the message.

use serde::{Deserialize, Serialize};

/// A structured failure of one request (or of the connection, when no
/// request id applies).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct ErrorBody {
    /// A stable code from [`ErrorCode`].
    #[schemars(with = "crate::vocabulary::ErrorCodeSchema")]
    pub code: String,
    /// A sentence for people; not for matching.
    pub message: String,
    /// The limitation code that explains an `OPERATION_UNSUPPORTED`, if any.
    #[serde(default)]
    #[schemars(with = "Option<crate::vocabulary::LimitationCodeSchema>")]
    pub limitation: Option<String>,
}

impl ErrorBody {
    /// An error with a code and a message.
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        ErrorBody { code: code.as_str().to_owned(), message: message.into(), limitation: None }
    }

    /// An `OPERATION_UNSUPPORTED` error naming the limitation that causes it.
    pub fn unsupported(limitation: &str, message: impl Into<String>) -> Self {
        ErrorBody {
            code: ErrorCode::OperationUnsupported.as_str().to_owned(),
            message: message.into(),
            limitation: Some(limitation.to_owned()),
        }
    }
}

impl std::fmt::Display for ErrorBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code, self.message)?;
        if let Some(limitation) = &self.limitation {
            write!(f, " ({limitation})")?;
        }
        Ok(())
    }
}

impl std::error::Error for ErrorBody {}

macro_rules! error_codes {
    ($($(#[$doc:meta])* $variant:ident = $text:literal,)*) => {
        /// The error codes the host sends. On the wire each is its string.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum ErrorCode {
            $($(#[$doc])* $variant,)*
        }

        impl ErrorCode {
            /// Every code, in declaration order.
            pub const ALL: &'static [ErrorCode] = &[$(ErrorCode::$variant,)*];

            /// Every code as it travels on the wire, in declaration order:
            /// the known values of the `ErrorCode` vocabulary
            /// ([`crate::vocabulary`]).
            pub const NAMES: &'static [&'static str] = &[$($text,)*];

            /// The code as it travels on the wire.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(ErrorCode::$variant => $text,)*
                }
            }

            /// The code for a wire string, if this crate knows it.
            pub fn parse(text: &str) -> Option<ErrorCode> {
                match text {
                    $($text => Some(ErrorCode::$variant),)*
                    _ => None,
                }
            }
        }
    };
}

error_codes! {
    /// The handshake named a protocol version the host does not speak.
    ProtocolMismatch = "PROTOCOL_MISMATCH",
    /// The first frame was not a valid `Hello`.
    HandshakeRequired = "HANDSHAKE_REQUIRED",
    /// A frame could not be decoded as a request.
    MalformedRequest = "MALFORMED_REQUEST",
    /// A frame's length prefix exceeded the maximum frame size.
    FrameTooLarge = "FRAME_TOO_LARGE",
    /// The connecting process belongs to another user.
    PeerRefused = "PEER_REFUSED",
    /// No pane has that id.
    UnknownPane = "UNKNOWN_PANE",
    /// No runtime has that id.
    UnknownRuntime = "UNKNOWN_RUNTIME",
    /// The runtime is known but not installed or its identity is unknown.
    RuntimeNotAvailable = "RUNTIME_NOT_AVAILABLE",
    /// The runtime is known but not supported by policy.
    RuntimeNotSupported = "RUNTIME_NOT_SUPPORTED",
    /// The runtime's executable changed since it was detected.
    BinaryChanged = "BINARY_CHANGED",
    /// The start required a ready runtime and a readiness gate stops it;
    /// the message names the gate and why.
    RuntimeNotReady = "RUNTIME_NOT_READY",
    /// A request field is out of range or inconsistent.
    InvalidArgument = "INVALID_ARGUMENT",
    /// The pane's process has exited; it takes no input.
    PaneExited = "PANE_EXITED",
    /// The requested offset lies beyond the pane's output.
    OffsetOutOfRange = "OFFSET_OUT_OF_RANGE",
    /// No subscription has that id on this connection.
    UnknownSubscription = "UNKNOWN_SUBSCRIPTION",
    /// The runtime cannot do this; `limitation` says why.
    OperationUnsupported = "OPERATION_UNSUPPORTED",
    /// The runtime needs no sign-in, so there is no login to run.
    LoginNotRequired = "LOGIN_NOT_REQUIRED",
    /// A turn did not end within its timeout; the message says what was
    /// observed.
    TurnTimeout = "TURN_TIMEOUT",
    /// `ask` on a pane whose turn has not ended yet.
    TurnInProgress = "TURN_IN_PROGRESS",
    /// `wait_for` did not see its pattern within its timeout; the message
    /// says what was looked at.
    WaitTimeout = "WAIT_TIMEOUT",
    /// A notify request named the wrong pane token.
    NotifyRefused = "NOTIFY_REFUSED",
    /// The process could not be started.
    SpawnFailed = "SPAWN_FAILED",
    /// The host holds as many panes, or the connection as many
    /// subscriptions, as it may; the message names the limit.
    LimitReached = "LIMIT_REACHED",
    /// `attach_terminal` came without a terminal's descriptor, or what it
    /// passed is not a terminal.
    NoTerminal = "NO_TERMINAL",
    /// The answer would not fit in a frame; the connection stays open.
    AnswerTooLarge = "ANSWER_TOO_LARGE",
    /// The host's memory for large answers being built or written stayed
    /// spent while the request waited its turn; ask again later.
    Busy = "BUSY",
    /// An operating-system call failed inside the host.
    Internal = "INTERNAL",
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}
