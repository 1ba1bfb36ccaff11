//! A plain, blocking protocol client: one Unix socket, frames written and
//! read in the calling thread, no tasks and no channels. The echo benchmark
//! uses it beside `panehost-client` to tell the host's share of the latency
//! from the client library's.

use crate::BenchResult;
use panehost_ipc::{decode, encode, Encoding, HandshakeReply, Hello, Request, RequestFrame, Response, ServerMessage};
use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;

/// A handshaken bincode connection.
#[derive(Debug)]
pub struct PlainClient {
    stream: UnixStream,
    next_id: u64,
}

impl PlainClient {
    /// Connects and completes the handshake.
    pub fn connect(socket: &Path) -> BenchResult<PlainClient> {
        let mut stream = UnixStream::connect(socket)?;
        let hello = Hello::new(Encoding::Bincode, "panehost-bench plain");
        write_frame(&mut stream, &serde_json::to_vec(&hello)?)?;
        let reply: HandshakeReply = serde_json::from_slice(&read_frame(&mut stream)?)?;
        if !matches!(reply, HandshakeReply::Welcome(_)) {
            return Err(format!("the host refused the handshake: {reply:?}").into());
        }
        Ok(PlainClient { stream, next_id: 1 })
    }

    /// Sends a request without waiting for its answer.
    pub fn send(&mut self, request: Request) -> BenchResult<()> {
        let frame = encode(Encoding::Bincode, &RequestFrame { id: self.next_id, request })?;
        self.next_id += 1;
        write_frame(&mut self.stream, &frame)
    }

    /// Sends a request and reads messages until its answer (events that
    /// arrive first are dropped).
    pub fn request(&mut self, request: Request) -> BenchResult<Response> {
        let id = self.next_id;
        self.send(request)?;
        loop {
            match self.read()? {
                ServerMessage::Response { id: answered, body } if answered == id => return Ok(body),
                ServerMessage::Error { id: Some(answered), error } if answered == id => {
                    return Err(format!("{:?}: {}", error.code, error.message).into())
                }
                _ => {}
            }
        }
    }

    /// Reads the next message.
    pub fn read(&mut self) -> BenchResult<ServerMessage> {
        Ok(decode(Encoding::Bincode, &read_frame(&mut self.stream)?)?)
    }
}

fn write_frame(stream: &mut UnixStream, payload: &[u8]) -> BenchResult<()> {
    let mut frame = Vec::with_capacity(4 + payload.len());
    frame.extend_from_slice(&(payload.len() as u32).to_be_bytes());
    frame.extend_from_slice(payload);
    stream.write_all(&frame)?;
    Ok(())
}

fn read_frame(stream: &mut UnixStream) -> BenchResult<Vec<u8>> {
    let mut header = [0u8; 4];
    stream.read_exact(&mut header)?;
    let len = u32::from_be_bytes(header) as usize;
    if len > panehost_ipc::MAX_SERVER_FRAME_LEN {
        return Err(format!("the host sent a {len}-byte frame").into());
    }
    let mut payload = vec![0u8; len];
    stream.read_exact(&mut payload)?;
    Ok(payload)
}
