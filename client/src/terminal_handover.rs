//! [`TerminalHandover`]: giving the local terminal to the host
//! (`attach_terminal`), so that the host reads its keys and writes the
//! pane's output to it itself, as `tmux attach` does. Nothing is relayed
//! through this process; it only waits for the host to give the terminal
//! back.
//!
//! ```text
//! client                                          host
//!   | -- hello, welcome (JSON) ------------------------ |
//!   | -- attach_terminal + terminal (SCM_RIGHTS) -----> |  draws, relays
//!   |                                                   |  keys and output
//!   | <-- terminal_released {reason, exit} ------------ |  until the end
//! ```
//!
//! Only for a host on this machine (descriptors do not cross ssh), and
//! only as the connection's first request.

use crate::error::ClientError;
use crate::options::ClientOptions;
use crate::transport::{self, FramedStream};
use futures_util::StreamExt;
use interprocess::local_socket::tokio::Stream as LocalStream;
use panehost_ipc::{
    decode, encode, Encoding, PaneId, Request, RequestFrame, Response, ServerMessage, TerminalRelease, Welcome,
};
use std::io::{self, IoSlice};
use std::mem::MaybeUninit;
use std::os::fd::{BorrowedFd, OwnedFd};
use std::path::Path;
use tokio::io::{AsyncWriteExt, Interest};
use tokio::net::UnixStream;

/// The first protocol revision whose hosts take `attach_terminal`.
pub const ATTACH_TERMINAL_REVISION: u32 = 4;

/// The id of the one request a handover connection sends.
const ATTACH_REQUEST_ID: u64 = 1;

/// A connection opened to hand the terminal over, before the handover.
#[derive(Debug)]
pub struct TerminalHandover {
    framed: FramedStream<UnixStream>,
    welcome: Welcome,
}

impl TerminalHandover {
    /// Connects to the host at `path` (checked as [`crate::Client::connect`]
    /// checks it) and performs the handshake, in JSON whatever `options`
    /// say.
    ///
    /// # Errors
    /// As [`crate::Client::connect`].
    pub async fn connect(path: &Path, options: &ClientOptions) -> Result<Self, ClientError> {
        let LocalStream::UdSocket(stream) = transport::connect_socket(path, options.handshake_timeout).await?;
        let stream = UnixStream::from_std(std::os::unix::net::UnixStream::from(OwnedFd::try_from(stream)?))?;
        let options = ClientOptions { encoding: Encoding::Json, ..options.clone() };
        let (framed, welcome) = transport::open(stream, &options).await?;
        Ok(TerminalHandover { framed, welcome })
    }

    /// True when the host takes `attach_terminal` (an older one is
    /// driven through a relay instead).
    pub fn host_takes_terminals(&self) -> bool {
        self.welcome.revision >= ATTACH_TERMINAL_REVISION
    }

    /// Passes the terminal (`input` to read keys from, `output` to write
    /// to; the same terminal twice is fine) and asks the host to attach it
    /// to `pane`, detaching on `detach_key`. Set the terminal's modes
    /// first: the host reads and writes it as it is.
    ///
    /// # Errors
    /// I/O errors of the socket.
    pub async fn attach(
        self,
        pane: &PaneId,
        detach_key: u8,
        input: BorrowedFd<'_>,
        output: BorrowedFd<'_>,
    ) -> Result<TerminalAttachment, ClientError> {
        let request = Request::AttachTerminal { pane: pane.clone(), detach_key };
        let payload = encode(Encoding::Json, &RequestFrame { id: ATTACH_REQUEST_ID, request })?;
        let mut frame = Vec::with_capacity(4 + payload.len());
        frame.extend_from_slice(&u32::try_from(payload.len()).unwrap_or(u32::MAX).to_be_bytes());
        frame.extend_from_slice(&payload);
        let mut framed = self.framed;
        let stream = framed.get_mut();
        let sent = send_with_descriptors(stream, &frame, &[input, output]).await?;
        // The descriptors went with the first bytes; the rest follows.
        stream.write_all(&frame[sent..]).await?;
        Ok(TerminalAttachment { framed })
    }
}

/// Sends the first bytes of `bytes` with `descriptors` attached; says how
/// many bytes went.
async fn send_with_descriptors(stream: &UnixStream, bytes: &[u8], descriptors: &[BorrowedFd<'_>]) -> io::Result<usize> {
    loop {
        stream.writable().await?;
        let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(2))];
        let mut control = rustix::net::SendAncillaryBuffer::new(&mut space);
        if !control.push(rustix::net::SendAncillaryMessage::ScmRights(descriptors)) {
            return Err(io::Error::new(io::ErrorKind::InvalidInput, "at most two descriptors go with a request"));
        }
        let sent = stream.try_io(Interest::WRITABLE, || {
            rustix::net::sendmsg(stream, &[IoSlice::new(bytes)], &mut control, rustix::net::SendFlags::NOSIGNAL)
                .map_err(io::Error::from)
        });
        match sent {
            Ok(sent) => return Ok(sent),
            Err(err) if err.kind() == io::ErrorKind::WouldBlock || err.kind() == io::ErrorKind::Interrupted => {}
            Err(err) => return Err(err),
        }
    }
}

/// The terminal in the host's hands, until [`released`](Self::released)
/// says it is back.
#[derive(Debug)]
pub struct TerminalAttachment {
    framed: FramedStream<UnixStream>,
}

impl TerminalAttachment {
    /// Waits until the host stops using the terminal: the detach key, the
    /// pane's end, the terminal's end, or [`end`](Self::end).
    ///
    /// # Errors
    /// [`ClientError::Host`] when the host refused the attachment
    /// (`UNKNOWN_PANE`, `NO_TERMINAL`); a lost connection (the host
    /// stopped: it no longer holds the terminal either).
    pub async fn released(&mut self) -> Result<TerminalRelease, ClientError> {
        loop {
            let frame = match self.framed.next().await {
                Some(frame) => frame?,
                None => return Err(ClientError::ConnectionClosed),
            };
            match decode::<ServerMessage>(Encoding::Json, &frame)? {
                ServerMessage::Response { id: ATTACH_REQUEST_ID, body: Response::TerminalReleased(release) } => {
                    return Ok(release)
                }
                ServerMessage::Error { error, .. } => return Err(ClientError::Host(error)),
                ServerMessage::Response { body, .. } => {
                    return Err(ClientError::UnexpectedResponse {
                        expected: "terminal_released",
                        got: crate::connection::response_kind(&body),
                    })
                }
                ServerMessage::Event { .. } => {}
            }
        }
    }

    /// Asks the host to give the terminal back now (the client's requests
    /// end: its sending side closes); [`released`](Self::released) then
    /// says `client_ended`.
    ///
    /// # Errors
    /// The socket's `shutdown` error.
    pub fn end(&self) -> io::Result<()> {
        rustix::net::shutdown(self.framed.get_ref(), rustix::net::Shutdown::Write).map_err(io::Error::from)
    }
}
