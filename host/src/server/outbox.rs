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
use panehost_ipc::{encode, Encoding, ErrorBody, ErrorCode, Event, Response, ServerMessage, MAX_SERVER_FRAME_LEN};
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
            Ok(frame) if frame.len() > MAX_SERVER_FRAME_LEN => match too_large(message, frame.len()) {
                // An answer that cannot be sent is answered with an error;
                // the connection goes on.
                Some(error) => match encode(self.encoding, &error) {
                    Ok(frame) => Bytes::from(frame),
                    Err(_) => return false,
                },
                None => return true,
            },
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

/// What is sent in place of `message`, whose frame of `len` bytes is over
/// the frame limit: for an answer, `ANSWER_TOO_LARGE` with its id; for an
/// event, nothing (no event the host makes comes near the limit: output
/// events are at most 32 KiB and snapshots are bounded), logged as the
/// defect it would be.
fn too_large(message: &ServerMessage, len: usize) -> Option<ServerMessage> {
    let id = match message {
        ServerMessage::Response { id, .. } => Some(*id),
        ServerMessage::Error { id, .. } => *id,
        ServerMessage::Event { subscription, .. } => {
            tracing::error!(subscription, len, "an event over the frame limit is not sent");
            return None;
        }
    };
    tracing::error!(?id, len, "an answer over the frame limit is answered ANSWER_TOO_LARGE");
    let message = format!("the answer is {len} bytes, over the frame limit of {MAX_SERVER_FRAME_LEN} bytes");
    Some(ServerMessage::Error { id, error: ErrorBody::new(ErrorCode::AnswerTooLarge, message) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use panehost_ipc::{decode, PaneHistory, PaneId};

    /// An outbox whose frames land in a list.
    fn outbox(encoding: Encoding) -> (Outbox, Arc<std::sync::Mutex<Vec<Bytes>>>) {
        let frames = Arc::new(std::sync::Mutex::new(Vec::new()));
        let sink = futures_util::sink::unfold(Arc::clone(&frames), |frames, frame: Bytes| async move {
            frames.lock().unwrap().push(frame);
            Ok::<_, io::Error>(frames)
        });
        (Outbox::new(encoding, Box::pin(sink)), frames)
    }

    #[tokio::test]
    async fn an_answer_over_the_frame_limit_is_answered_with_an_error_and_the_connection_goes_on() {
        for encoding in [Encoding::Json, Encoding::Bincode] {
            let (outbox, frames) = outbox(encoding);
            let history = PaneHistory {
                pane: PaneId::from("p00000001"),
                from: 0,
                to: 1,
                text: "x".repeat(MAX_SERVER_FRAME_LEN),
                truncated: false,
            };
            assert!(outbox.response(7, Response::History(history)).await, "the connection goes on");
            assert!(outbox.response(8, Response::Notified {}).await);
            let frames = frames.lock().unwrap();
            let first: ServerMessage = decode(encoding, &frames[0]).unwrap();
            assert!(
                matches!(&first, ServerMessage::Error { id: Some(7), error } if error.code == ErrorCode::AnswerTooLarge.as_str()),
                "{first:?}"
            );
            assert!(matches!(decode(encoding, &frames[1]).unwrap(), ServerMessage::Response { id: 8, .. }));
        }
    }
}
