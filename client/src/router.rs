//! The two background tasks of a connection and the state they share.
//!
//! The reader task owns the read half: it decodes every host frame and
//! routes it. Answers (`response`, `error` with an id) complete the waiting
//! request; `event` frames go to their subscription's bounded channel,
//! awaiting room when the subscriber is slow; an `error` without an id (the
//! host could not read which request it answers) fails every waiting
//! request. Writing is the [`FrameWriter`]'s.
//!
//! A subscription's channel is created by the reader when it routes the
//! `subscribed` answer, before it reads the next frame, so no event of a new
//! subscription can arrive before its channel exists.

use crate::error::ClientError;
use crate::writer::FrameWriter;
use futures_util::{Stream, StreamExt};
use panehost_ipc::{decode, encode, Encoding, ErrorBody, Event, Request, RequestFrame, Response, ServerMessage};
use std::collections::HashMap;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::{mpsc, oneshot};
use tokio_util::bytes::{Bytes, BytesMut};

/// A successful answer, with the event channel when it opened a subscription.
#[derive(Debug)]
pub(crate) struct Reply {
    pub(crate) body: Response,
    pub(crate) events: Option<mpsc::Receiver<Event>>,
}

type Waiter = oneshot::Sender<Result<Reply, ClientError>>;

/// Why a connection ended.
#[derive(Debug, Clone)]
pub(crate) enum CloseReason {
    /// The host closed the socket, or a read or write failed.
    Closed,
    /// The host closed the connection after an error without a request id.
    HostError(ErrorBody),
}

impl CloseReason {
    fn to_error(&self) -> ClientError {
        match self {
            CloseReason::Closed => ClientError::ConnectionClosed,
            CloseReason::HostError(body) => ClientError::ConnectionError(body.clone()),
        }
    }
}

#[derive(Debug, Default)]
struct State {
    pending: HashMap<u64, Waiter>,
    closed: Option<CloseReason>,
}

/// State shared by the client handles and both tasks.
#[derive(Debug)]
pub(crate) struct Shared {
    encoding: Encoding,
    next_id: AtomicU64,
    state: Mutex<State>,
}

impl Shared {
    pub(crate) fn new(encoding: Encoding) -> Self {
        Shared { encoding, next_id: AtomicU64::new(1), state: Mutex::new(State::default()) }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // Nothing panics while holding the lock; recover the data regardless.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    pub(crate) fn encoding(&self) -> Encoding {
        self.encoding
    }

    /// A fresh request id; ids grow from 1.
    pub(crate) fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Encodes a request frame.
    pub(crate) fn encode_request(&self, id: u64, request: Request) -> Result<Bytes, ClientError> {
        let payload = encode(self.encoding, &RequestFrame { id, request })?;
        if payload.len() > panehost_ipc::MAX_CLIENT_FRAME_LEN {
            return Err(ClientError::FrameTooLarge { len: payload.len(), max: panehost_ipc::MAX_CLIENT_FRAME_LEN });
        }
        Ok(Bytes::from(payload))
    }

    /// Registers a waiter for the answer to request `id`.
    pub(crate) fn register(&self, id: u64, waiter: Waiter) -> Result<(), ClientError> {
        let mut state = self.lock();
        if let Some(reason) = &state.closed {
            return Err(reason.to_error());
        }
        state.pending.insert(id, waiter);
        Ok(())
    }

    /// Forgets the waiter of request `id`, if it is still registered.
    pub(crate) fn forget(&self, id: u64) {
        self.lock().pending.remove(&id);
    }

    fn take(&self, id: u64) -> Option<Waiter> {
        self.lock().pending.remove(&id)
    }

    pub(crate) fn is_closed(&self) -> bool {
        self.lock().closed.is_some()
    }

    /// Fails every request waiting now with the host's error, leaving the
    /// connection open.
    fn fail_pending(&self, error: &ErrorBody) {
        let pending = std::mem::take(&mut self.lock().pending);
        for (_, waiter) in pending {
            let _ = waiter.send(Err(ClientError::ConnectionError(error.clone())));
        }
    }

    /// Marks the connection closed and fails every waiting request. The
    /// first reason wins.
    pub(crate) fn close(&self, reason: CloseReason) {
        let (pending, reason) = {
            let mut state = self.lock();
            let reason = state.closed.get_or_insert(reason).clone();
            (std::mem::take(&mut state.pending), reason)
        };
        for (_, waiter) in pending {
            let _ = waiter.send(Err(reason.to_error()));
        }
    }
}

/// Removes a request's waiter when the request future is dropped early.
#[derive(Debug)]
pub(crate) struct PendingGuard<'a> {
    pub(crate) shared: &'a Shared,
    pub(crate) id: u64,
}

impl Drop for PendingGuard<'_> {
    fn drop(&mut self) {
        self.shared.forget(self.id);
    }
}

/// Reads and routes host frames until the connection ends, then fails
/// whatever still waits and ends every subscription.
pub(crate) async fn read_frames<R>(mut frames: R, shared: Arc<Shared>, writer: Arc<FrameWriter>, event_buffer: usize)
where
    R: Stream<Item = io::Result<BytesMut>> + Unpin,
{
    let mut subscriptions: HashMap<u64, mpsc::Sender<Event>> = HashMap::new();
    let mut last_error: Option<ErrorBody> = None;
    loop {
        let frame = match frames.next().await {
            Some(Ok(frame)) => frame,
            Some(Err(error)) => {
                tracing::warn!(%error, "reading from the host failed");
                break;
            }
            None => {
                tracing::debug!("the host closed the connection");
                break;
            }
        };
        let message = match decode::<ServerMessage>(shared.encoding(), &frame) {
            Ok(message) => message,
            Err(error) => {
                tracing::warn!(%error, len = frame.len(), "undecodable frame from the host; closing");
                break;
            }
        };
        last_error = None;
        match message {
            ServerMessage::Response { id, body } => {
                let opened = match &body {
                    Response::Subscribed(subscription) => Some(subscription.subscription),
                    Response::Watching { subscription, .. } => Some(*subscription),
                    _ => None,
                };
                let events = opened.map(|subscription| {
                    let (sender, receiver) = mpsc::channel(event_buffer.max(1));
                    subscriptions.insert(subscription, sender);
                    (subscription, receiver)
                });
                let subscription = events.as_ref().map(|(subscription, _)| *subscription);
                let reply = Reply { body, events: events.map(|(_, receiver)| receiver) };
                if !deliver(&shared, id, Ok(reply)) {
                    if let Some(subscription) = subscription {
                        // Nobody will read this subscription: end it.
                        subscriptions.remove(&subscription);
                        unsubscribe(&shared, &writer, subscription);
                    }
                }
            }
            ServerMessage::Error { id: Some(id), error } => {
                tracing::debug!(id, code = %error.code, "request failed");
                deliver(&shared, id, Err(ClientError::Host(error)));
            }
            ServerMessage::Error { id: None, error } => {
                // The host could not read some request's id, so it cannot
                // say which request failed: fail every waiting one. The
                // connection stays open unless the host closes it.
                tracing::error!(code = %error.code, message = %error.message, "the host reported an error without a request id");
                shared.fail_pending(&error);
                last_error = Some(error);
            }
            ServerMessage::Event { subscription, event } => {
                let ended = matches!(event, Event::Ended { .. });
                match subscriptions.get(&subscription) {
                    Some(sender) => {
                        // Awaiting room here is the backpressure: the socket
                        // is not read while a subscriber is behind.
                        if sender.send(event).await.is_err() {
                            tracing::debug!(subscription, "subscriber gone; dropping its events");
                            subscriptions.remove(&subscription);
                        }
                    }
                    None => tracing::debug!(subscription, "event for an unknown subscription"),
                }
                if ended {
                    subscriptions.remove(&subscription);
                }
            }
        }
    }
    // An error without a request id as the last frame is why it ended.
    shared.close(last_error.map_or(CloseReason::Closed, CloseReason::HostError));
}

/// Hands an answer to its waiter. False when nobody waits for it any more.
fn deliver(shared: &Shared, id: u64, answer: Result<Reply, ClientError>) -> bool {
    match shared.take(id) {
        Some(waiter) => waiter.send(answer).is_ok(),
        None => {
            tracing::debug!(id, "answer to a request nobody waits for");
            false
        }
    }
}

/// Queues an `unsubscribe` without waiting for its answer.
pub(crate) fn unsubscribe(shared: &Shared, writer: &FrameWriter, subscription: u64) {
    let id = shared.next_id();
    match shared.encode_request(id, Request::Unsubscribe { subscription }) {
        Ok(frame) => {
            if !writer.write_or_queue(frame) {
                tracing::debug!(subscription, "could not queue unsubscribe; the connection is closing or busy");
            }
        }
        Err(error) => tracing::warn!(%error, "cannot encode unsubscribe"),
    }
}
