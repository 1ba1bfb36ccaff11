//! The one error type of this crate.

use panehost_ipc::{ErrorBody, WireError};
use std::io;
use std::path::PathBuf;
use std::time::Duration;

/// Everything that can go wrong between a client and the host.
///
/// Callers usually match on three cases: [`ClientError::Host`] (the host
/// answered the request with a structured error, such as `UNKNOWN_PANE`),
/// [`ClientError::is_unreachable`] (no host listens at the socket path), and
/// [`ClientError::is_connection_lost`] (the connection ended; a new one may
/// succeed).
#[derive(Debug, thiserror::Error)]
pub enum ClientError {
    /// The socket could not be connected to.
    #[error("cannot connect to the host at {}: {source}", path.display())]
    Connect {
        /// The socket path.
        path: PathBuf,
        /// Why the connection failed.
        #[source]
        source: io::Error,
    },
    /// The socket is not one this user's host could have made: its
    /// directory is not private to the user, or the process listening on
    /// it runs as another user. Nothing was sent.
    #[error("refusing to talk to the host at {}: {reason}", path.display())]
    UntrustedHost {
        /// The socket path.
        path: PathBuf,
        /// What is wrong, and what to do about it.
        reason: String,
    },
    /// Reading from or writing to an open connection failed.
    #[error("connection to the host failed: {0}")]
    Io(#[from] io::Error),
    /// A frame could not be encoded or decoded.
    #[error("malformed frame: {0}")]
    Wire(#[from] WireError),
    /// The host refused the handshake, for example with `PROTOCOL_MISMATCH`.
    #[error("the host refused the connection: {code}: {message} (host protocol {protocol})")]
    Refused {
        /// The stable error code.
        code: String,
        /// The host's explanation.
        message: String,
        /// The protocol version the host speaks.
        protocol: u32,
    },
    /// The host answered the request with a structured error.
    #[error("{0}")]
    Host(ErrorBody),
    /// The host sent an error it could not tie to a request (an error
    /// frame with no request id, such as `FRAME_TOO_LARGE`): every request
    /// waiting then fails with it, and so does every later one if the host
    /// closed the connection after it.
    #[error("the host reported a connection error: {0}")]
    ConnectionError(ErrorBody),
    /// The connection closed before the answer arrived.
    #[error("the connection to the host closed")]
    ConnectionClosed,
    /// Nothing arrived within the allowed time.
    #[error("timed out after {after:?} waiting for {what}")]
    Timeout {
        /// What was being waited for.
        what: &'static str,
        /// How long was waited.
        after: Duration,
    },
    /// The host answered with a response of the wrong kind.
    #[error("unexpected answer from the host: expected `{expected}`, got `{got}`")]
    UnexpectedResponse {
        /// The response kind the request calls for.
        expected: &'static str,
        /// The response kind that arrived.
        got: &'static str,
    },
    /// A request would not fit into one frame.
    #[error("request of {len} bytes exceeds the frame limit of {max} bytes")]
    FrameTooLarge {
        /// The encoded request's length.
        len: usize,
        /// The largest frame a client may send.
        max: usize,
    },
    /// A host on another machine could not be reached through ssh: ssh is
    /// missing, could not connect or sign in, refused the host key, or the
    /// `panehost` there is missing or failed. `transient` failures (the
    /// network, a timeout) may pass; the others need someone to act.
    #[error("cannot reach the host on {destination} through ssh: {message}")]
    Remote {
        /// The ssh destination.
        destination: String,
        /// What went wrong, and what to do about it.
        message: String,
        /// Whether trying again later may succeed.
        transient: bool,
    },
    /// The host command could not be spawned, or it exited before it
    /// answered.
    #[error("cannot start the host `{}`: {message}", program.display())]
    Autostart {
        /// The program that was run.
        program: PathBuf,
        /// What went wrong.
        message: String,
    },
}

impl ClientError {
    /// True when no host listens at the socket path: the socket file does
    /// not exist, or nothing accepts connections on it (a stale socket).
    pub fn is_unreachable(&self) -> bool {
        match self {
            ClientError::Connect { source, .. } => {
                matches!(source.kind(), io::ErrorKind::NotFound | io::ErrorKind::ConnectionRefused)
            }
            _ => false,
        }
    }

    /// True when the connection was lost or could not be made: trying again
    /// on a new connection may succeed. Structured answers of the host
    /// ([`ClientError::Host`], [`ClientError::Refused`]) are not.
    pub fn is_connection_lost(&self) -> bool {
        matches!(
            self,
            ClientError::Connect { .. }
                | ClientError::Io(_)
                | ClientError::ConnectionClosed
                | ClientError::ConnectionError(_)
                | ClientError::Timeout { .. }
                | ClientError::Remote { transient: true, .. }
        )
    }

    /// The host's structured error, when the host answered with one.
    pub fn host_error(&self) -> Option<&ErrorBody> {
        match self {
            ClientError::Host(body) | ClientError::ConnectionError(body) => Some(body),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use panehost_ipc::ErrorCode;

    fn connect_error(kind: io::ErrorKind) -> ClientError {
        ClientError::Connect { path: PathBuf::from("/x"), source: io::Error::from(kind) }
    }

    #[test]
    fn missing_or_stale_socket_is_unreachable() {
        assert!(connect_error(io::ErrorKind::NotFound).is_unreachable());
        assert!(connect_error(io::ErrorKind::ConnectionRefused).is_unreachable());
        assert!(!connect_error(io::ErrorKind::PermissionDenied).is_unreachable());
        assert!(!ClientError::ConnectionClosed.is_unreachable());
    }

    #[test]
    fn host_answers_are_not_connection_losses() {
        let body = ErrorBody::new(ErrorCode::UnknownPane, "no pane p9");
        assert!(!ClientError::Host(body.clone()).is_connection_lost());
        assert!(ClientError::ConnectionClosed.is_connection_lost());
        assert_eq!(ClientError::Host(body).to_string(), "UNKNOWN_PANE: no pane p9");
    }
}
