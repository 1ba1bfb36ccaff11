//! The protocol without the client library: frames written and read by
//! hand, for traffic the library would never send.

use panehost_ipc::{decode, encode, Encoding, HandshakeReply, Hello, Request, RequestFrame, ServerMessage};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixStream;

/// How long a raw read may wait for the host.
pub const READ_TIMEOUT: Duration = Duration::from_secs(15);

/// What reading a frame found.
#[derive(Debug)]
pub enum Read {
    /// A whole frame's payload.
    Frame(Vec<u8>),
    /// The host closed the connection (at a frame boundary).
    Closed,
}

/// Writes bytes as they are.
pub async fn write_raw(stream: &mut UnixStream, bytes: &[u8]) -> std::io::Result<()> {
    stream.write_all(bytes).await
}

/// Writes one frame: the big-endian length, then the payload.
pub async fn write_frame(stream: &mut UnixStream, payload: &[u8]) -> std::io::Result<()> {
    let mut frame = Vec::with_capacity(4 + payload.len());
    frame.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    frame.extend_from_slice(payload);
    stream.write_all(&frame).await
}

/// Reads one frame within [`READ_TIMEOUT`].
pub async fn read_frame(stream: &mut UnixStream) -> Result<Read, String> {
    let read = async {
        let mut header = [0u8; 4];
        match stream.read_exact(&mut header).await {
            Ok(_) => {}
            Err(error) if error.kind() == std::io::ErrorKind::UnexpectedEof => return Ok(Read::Closed),
            // A reset is how a host that closed with unread input shows.
            Err(error) if error.kind() == std::io::ErrorKind::ConnectionReset => return Ok(Read::Closed),
            Err(error) => return Err(format!("reading a frame failed: {error}")),
        }
        let len = u32::from_be_bytes(header) as usize;
        if len > panehost_ipc::MAX_SERVER_FRAME_LEN {
            return Err(format!("the host sent a frame of {len} bytes, over the limit"));
        }
        let mut payload = vec![0u8; len];
        stream.read_exact(&mut payload).await.map_err(|e| format!("reading a {len}-byte frame failed: {e}"))?;
        Ok(Read::Frame(payload))
    };
    match tokio::time::timeout(READ_TIMEOUT, read).await {
        Ok(result) => result,
        Err(_) => Err(format!("the host sent nothing within {READ_TIMEOUT:?}")),
    }
}

/// Reads the handshake reply (always JSON).
pub async fn read_handshake(stream: &mut UnixStream) -> Result<Option<HandshakeReply>, String> {
    match read_frame(stream).await? {
        Read::Frame(payload) => serde_json::from_slice(&payload)
            .map(Some)
            .map_err(|e| format!("the handshake reply is not one: {e}: {:?}", String::from_utf8_lossy(&payload))),
        Read::Closed => Ok(None),
    }
}

/// Sends a `Hello` and reads a `welcome`.
pub async fn handshake(stream: &mut UnixStream, encoding: Encoding, name: &str) -> Result<(), String> {
    let hello = serde_json::to_vec(&Hello::new(encoding, name)).map_err(|e| e.to_string())?;
    write_frame(stream, &hello).await.map_err(|e| format!("writing the hello failed: {e}"))?;
    match read_handshake(stream).await? {
        Some(HandshakeReply::Welcome(_)) => Ok(()),
        Some(refused) => Err(format!("the host refused a valid hello: {refused:?}")),
        None => Err("the host closed the connection instead of answering the hello".into()),
    }
}

/// Sends a request frame with `id`.
pub async fn send_request(
    stream: &mut UnixStream,
    encoding: Encoding,
    id: u64,
    request: Request,
) -> Result<(), String> {
    let payload = encode(encoding, &RequestFrame { id, request }).map_err(|e| e.to_string())?;
    write_frame(stream, &payload).await.map_err(|e| format!("writing a request failed: {e}"))
}

/// Reads the next server message; `None` when the host closed.
pub async fn read_message(stream: &mut UnixStream, encoding: Encoding) -> Result<Option<ServerMessage>, String> {
    match read_frame(stream).await? {
        Read::Frame(payload) => {
            decode(encoding, &payload).map(Some).map_err(|e| format!("a frame from the host does not decode: {e}"))
        }
        Read::Closed => Ok(None),
    }
}
