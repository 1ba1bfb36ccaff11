//! Opening the local socket and the handshake on it.
//!
//! ```text
//! client                                   host
//!   | -- Hello {protocol, revision, encoding, client} (JSON) --> |
//!   | <-- HandshakeReply: Welcome | Refused (JSON) --- |
//! ```
//!
//! Both handshake frames are JSON whatever encoding is chosen; every later
//! frame uses the chosen encoding.

use crate::error::ClientError;
use crate::options::ClientOptions;
use futures_util::{SinkExt, StreamExt};
use interprocess::local_socket::tokio::prelude::*;
use interprocess::local_socket::tokio::Stream as LocalStream;
use interprocess::local_socket::GenericFilePath;
use panehost_ipc::{decode, encode, Encoding, FrameCodecs, HandshakeReply, Hello, ServerMessage, Welcome};
use std::path::Path;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio_util::bytes::Bytes;
use tokio_util::codec::{Framed, LengthDelimitedCodec};

/// A byte stream framed with the protocol's length prefix.
pub(crate) type FramedStream<S> = Framed<S, LengthDelimitedCodec>;

/// Connects to the host's socket at `path` (a file-system path), waiting at
/// most `limit` for a host that does not accept, after checking that the
/// socket is the user's own: its directory private to the user (owned by
/// them, mode 0700, not a symbolic link) and the process listening on it
/// running as the user (its credentials, from the kernel). Nothing is sent
/// to a socket that fails either check.
pub(crate) async fn connect_socket(path: &Path, limit: Duration) -> Result<LocalStream, ClientError> {
    let uid = rustix::process::geteuid().as_raw();
    check_socket_dir(path, uid)?;
    let connect_error = |source| ClientError::Connect { path: path.to_owned(), source };
    let name = path.to_fs_name::<GenericFilePath>().map_err(connect_error)?;
    let stream = tokio::time::timeout(limit, LocalStream::connect(name))
        .await
        .map_err(|_| ClientError::Timeout { what: "the host to accept the connection", after: limit })?
        .map_err(connect_error)?;
    match stream.peer_creds().ok().and_then(|creds| creds.euid()) {
        Some(peer) if peer == uid => Ok(stream),
        peer => Err(ClientError::UntrustedHost {
            path: path.to_owned(),
            reason: match peer {
                Some(peer) => format!("the process listening on it runs as uid {peer}, not as this user (uid {uid})"),
                None => "the kernel did not say who listens on it".to_owned(),
            },
        }),
    }
}

/// The socket's directory must be private to the user. A directory that
/// does not exist means no host: the connection then fails as usual (and a
/// client that starts hosts starts one, which creates it).
pub(crate) fn check_socket_dir(path: &Path, uid: u32) -> Result<(), ClientError> {
    let Some(dir) = path.parent() else { return Ok(()) };
    match panehost_ipc::socket_path::check_private_dir(dir, uid) {
        Ok(()) => Ok(()),
        Err(panehost_ipc::socket_path::PrivateDirError::Io { source, .. })
            if source.kind() == std::io::ErrorKind::NotFound =>
        {
            Ok(())
        }
        Err(problem) => Err(ClientError::UntrustedHost {
            path: path.to_owned(),
            reason: format!(
                "{problem}; another user may be listening there. Remove it if it is yours, or choose another \
                 socket (--socket, PANEHOST_SOCKET, or XDG_RUNTIME_DIR)"
            ),
        }),
    }
}

/// Frames `stream` and performs the handshake on it.
///
/// # Errors
/// [`ClientError::Refused`] when the host refuses (for example a protocol
/// mismatch), [`ClientError::Timeout`] when it does not answer within
/// `options.handshake_timeout`, and I/O or wire errors.
pub(crate) async fn open<S>(stream: S, options: &ClientOptions) -> Result<(FramedStream<S>, Welcome), ClientError>
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut framed = Framed::new(stream, FrameCodecs::client());
    let hello = Hello::new(options.encoding, options.client_name.clone());
    let exchange = async {
        framed.send(Bytes::from(encode(Encoding::Json, &hello)?)).await?;
        match framed.next().await {
            Some(frame) => Ok(frame?),
            None => Err(ClientError::ConnectionClosed),
        }
    };
    let frame = tokio::time::timeout(options.handshake_timeout, exchange)
        .await
        .map_err(|_| ClientError::Timeout { what: "the host's handshake reply", after: options.handshake_timeout })??;
    let welcome = interpret_reply(&frame, options.encoding)?;
    tracing::debug!(host = %welcome.host, encoding = welcome.encoding.as_str(), "handshake complete");
    Ok((framed, welcome))
}

/// Reads the host's handshake frame.
fn interpret_reply(frame: &[u8], requested: Encoding) -> Result<Welcome, ClientError> {
    let reply = match decode::<HandshakeReply>(Encoding::Json, frame) {
        Ok(reply) => reply,
        Err(wire) => {
            // A host that could not read the hello may answer with a plain
            // error frame instead; report its words rather than a parse error.
            if let Ok(ServerMessage::Error { error, .. }) = decode::<ServerMessage>(Encoding::Json, frame) {
                return Err(ClientError::ConnectionError(error));
            }
            return Err(wire.into());
        }
    };
    match reply {
        HandshakeReply::Welcome(welcome) if welcome.encoding == requested => Ok(welcome),
        HandshakeReply::Welcome(welcome) => {
            Err(ClientError::UnexpectedResponse { expected: requested.as_str(), got: welcome.encoding.as_str() })
        }
        HandshakeReply::Refused { code, message, protocol } => {
            tracing::warn!(%code, %message, protocol, "host refused the handshake");
            Err(ClientError::Refused { code, message, protocol })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn refusal_becomes_a_typed_error() {
        let frame = br#"{"refused":{"code":"PROTOCOL_MISMATCH","message":"host speaks 2","protocol":2}}"#;
        match interpret_reply(frame, Encoding::Bincode) {
            Err(ClientError::Refused { code, protocol, .. }) => {
                assert_eq!(code, "PROTOCOL_MISMATCH");
                assert_eq!(protocol, 2);
            }
            other => panic!("expected a refusal, got {other:?}"),
        }
    }

    #[test]
    fn welcome_in_another_encoding_is_refused() {
        let frame = br#"{"welcome":{"protocol":1,"host":"panehost 0.1.0","encoding":"json"}}"#;
        assert!(matches!(interpret_reply(frame, Encoding::Bincode), Err(ClientError::UnexpectedResponse { .. })));
        assert_eq!(interpret_reply(frame, Encoding::Json).unwrap().host, "panehost 0.1.0");
    }

    #[test]
    fn error_frame_in_place_of_a_reply_keeps_its_words() {
        let frame = br#"{"error":{"id":null,"error":{"code":"HANDSHAKE_REQUIRED","message":"say hello"}}}"#;
        match interpret_reply(frame, Encoding::Json) {
            Err(ClientError::ConnectionError(body)) => assert_eq!(body.code, "HANDSHAKE_REQUIRED"),
            other => panic!("expected a connection error, got {other:?}"),
        }
    }
}
