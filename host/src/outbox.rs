//! A connection's outgoing queue: encoded frames for its writer.

use bytes::Bytes;
use panehost_ipc::{encode, Encoding, ErrorBody, Event, Response, ServerMessage};
use tokio::sync::mpsc;

/// Encodes server messages in the connection's encoding and queues them
/// for its writer. Cheap to clone; bounded, so a connection that does not
/// read makes its senders wait rather than grow memory.
#[derive(Debug, Clone)]
pub struct Outbox {
    encoding: Encoding,
    frames: mpsc::Sender<Bytes>,
}

impl Outbox {
    /// An outbox feeding `frames`.
    pub fn new(encoding: Encoding, frames: mpsc::Sender<Bytes>) -> Self {
        Outbox { encoding, frames }
    }

    /// Queues a response; false when the connection is gone.
    pub async fn response(&self, id: u64, body: Response) -> bool {
        self.send(&ServerMessage::Response { id, body }).await
    }

    /// Queues an error; false when the connection is gone.
    pub async fn error(&self, id: Option<u64>, error: ErrorBody) -> bool {
        self.send(&ServerMessage::Error { id, error }).await
    }

    /// Queues an event; false when the connection is gone.
    pub async fn event(&self, subscription: u64, event: Event) -> bool {
        self.send(&ServerMessage::Event { subscription, event }).await
    }

    async fn send(&self, message: &ServerMessage) -> bool {
        match encode(self.encoding, message) {
            Ok(frame) => self.frames.send(Bytes::from(frame)).await.is_ok(),
            Err(err) => {
                tracing::error!(%err, "cannot encode a server message");
                false
            }
        }
    }
}
