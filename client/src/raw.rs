//! [`RawConnection`]: a handshaken connection that passes frames through
//! untouched, for bridges that forward frames they did not build.

use crate::error::ClientError;
use crate::options::ClientOptions;
use crate::transport::{self, FramedStream};
use interprocess::local_socket::tokio::Stream as LocalStream;
use panehost_ipc::Welcome;
use std::path::Path;
use tokio::io::{AsyncRead, AsyncWrite};

/// A connection after the handshake, exposed as frames.
///
/// Nothing is decoded or routed: the caller writes and reads whole frame
/// payloads in the encoding it chose (usually JSON), through the framed
/// stream from [`RawConnection::into_framed`], which is a
/// `Sink<Bytes>` and a `Stream<Item = io::Result<BytesMut>>`.
#[derive(Debug)]
pub struct RawConnection<S = LocalStream> {
    framed: FramedStream<S>,
    welcome: Welcome,
}

impl RawConnection<LocalStream> {
    /// Connects to the host at `path` and performs the handshake.
    ///
    /// # Errors
    /// As [`crate::Client::connect`].
    pub async fn connect(path: &Path, options: &ClientOptions) -> Result<Self, ClientError> {
        let stream = transport::connect_socket(path, options.handshake_timeout).await?;
        RawConnection::connect_with_stream(stream, options).await
    }
}

impl<S: AsyncRead + AsyncWrite + Unpin> RawConnection<S> {
    /// Performs the handshake on a connected byte stream.
    ///
    /// # Errors
    /// As [`crate::Client::connect_with_stream`].
    pub async fn connect_with_stream(stream: S, options: &ClientOptions) -> Result<Self, ClientError> {
        let (framed, welcome) = transport::open(stream, options).await?;
        Ok(RawConnection { framed, welcome })
    }

    /// What the host said when it accepted the connection.
    pub fn welcome(&self) -> &Welcome {
        &self.welcome
    }

    /// The framed stream: send payloads, receive payloads. Its codec refuses
    /// incoming frames over [`panehost_ipc::MAX_SERVER_FRAME_LEN`]; outgoing
    /// frames should stay under [`panehost_ipc::MAX_CLIENT_FRAME_LEN`],
    /// which the host enforces.
    pub fn into_framed(self) -> tokio_util::codec::Framed<S, tokio_util::codec::LengthDelimitedCodec> {
        self.framed
    }
}
