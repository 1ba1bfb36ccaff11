//! A connection's way out: encodes server messages and writes their frames
//! to the socket, from whichever task produced them.
//!
//! There is no writer task: the task that has a frame (the connection's
//! request loop with an answer, a subscription with an event) writes it
//! itself, under a lock that keeps frames whole and in one order. A frame
//! therefore reaches the socket without waking another task, which is most
//! of a keystroke's echo time. A connection that does not read makes the
//! writers wait on the full socket (and on the lock), so nothing queues up
//! in the host's memory beyond the frame each waiting task holds.

use bytes::Bytes;
use futures_util::{Sink, SinkExt};
use panehost_ipc::{encode, Encoding, ErrorBody, Event, Response, ServerMessage};
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use tokio::sync::Mutex;

/// Where a connection's frames are written.
pub(crate) type FrameSink = Pin<Box<dyn Sink<Bytes, Error = io::Error> + Send>>;

/// Encodes server messages in the connection's encoding and writes them.
/// Cheap to clone; every clone writes to the same socket.
#[derive(Clone)]
pub(crate) struct Outbox {
    encoding: Encoding,
    sink: Arc<Mutex<FrameSink>>,
}

impl std::fmt::Debug for Outbox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Outbox").field("encoding", &self.encoding).finish_non_exhaustive()
    }
}

impl Outbox {
    /// An outbox writing to `sink`.
    pub(crate) fn new(encoding: Encoding, sink: FrameSink) -> Self {
        Outbox { encoding, sink: Arc::new(Mutex::new(sink)) }
    }

    /// Writes a response; false when the connection is gone.
    pub(crate) async fn response(&self, id: u64, body: Response) -> bool {
        self.send(&ServerMessage::Response { id, body }).await
    }

    /// Writes an error; false when the connection is gone.
    pub(crate) async fn error(&self, id: Option<u64>, error: ErrorBody) -> bool {
        self.send(&ServerMessage::Error { id, error }).await
    }

    /// Writes an event; false when the connection is gone.
    pub(crate) async fn event(&self, subscription: u64, event: Event) -> bool {
        self.send(&ServerMessage::Event { subscription, event }).await
    }

    /// Flushes and closes the socket's writing side, waiting at most
    /// `limit` for a client that does not read.
    pub(crate) async fn close(&self, limit: std::time::Duration) {
        let _ = tokio::time::timeout(limit, async { self.sink.lock().await.close().await }).await;
    }

    async fn send(&self, message: &ServerMessage) -> bool {
        let frame = match encode(self.encoding, message) {
            Ok(frame) => Bytes::from(frame),
            Err(err) => {
                tracing::error!(%err, "cannot encode a server message");
                return false;
            }
        };
        // `send` writes the frame and flushes it to the socket.
        self.sink.lock().await.send(frame).await.is_ok()
    }
}
