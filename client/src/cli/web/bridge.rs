//! One WebSocket, one pane: the pane's stream out to the page, the page's
//! keystrokes, resizes and interrupts in to the host.
//!
//! The stream runs on a host connection of its own and resumes like a
//! [`crate::PaneFollower`]: a [`FollowCursor`] notes the end offset of the
//! output handed to the page, and a lost host connection is reopened with
//! `reconnect` from exactly there; the page sees one more `start` (a
//! replay, normally) and nothing repeats. What the page asks for first
//! decides the first request:
//!
//! - no offset: `events` without `from` (a snapshot of the current screen);
//! - `offset` alone: `events` from it;
//! - `generation` and `offset`: `reconnect` with both, which is what a page
//!   that reloads or lost its socket sends, with the end offset of the
//!   output it rendered.
//!
//! Input and resizes go over the server's shared request connection, in the
//! order the page sent them; an interrupt, which takes seconds to confirm,
//! gets a connection of its own and reports back with an `interrupted`
//! message.

use super::server::AppState;
use super::wire::{self, PageMessage};
use crate::{Client, ClientError, Connector, EventStream, FollowCursor, FollowItem, ReconnectPolicy};
use axum::extract::ws::{close_code, CloseFrame, Message, WebSocket};
use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use panehost_ipc::{Event, PaneId, Request, Size, StreamStart};
use serde_json::Value;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// How often an idle socket is pinged, so that a vanished page is noticed
/// and its subscription ended.
const PING_EVERY: Duration = Duration::from_secs(30);

/// Messages (interrupt reports, input errors) waiting for the socket.
const OUTBOX: usize = 32;

/// Where the page wants its stream to begin.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Resume {
    /// From the current screen.
    Screen,
    /// From this output offset.
    From(u64),
    /// Exactly after what the page rendered: `reconnect`.
    Exact {
        /// The generation the page last saw.
        generation: u64,
        /// The end offset of the output it rendered.
        offset: u64,
    },
}

/// What `/ws` was asked for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct StreamRequest {
    /// The pane.
    pub(super) pane: PaneId,
    /// Where to begin.
    pub(super) resume: Resume,
}

type Sink = SplitSink<WebSocket, Message>;

/// Bridges `socket` to the pane until either side ends.
pub(super) async fn run(socket: WebSocket, state: Arc<AppState>, request: StreamRequest) {
    let (mut sink, mut incoming) = socket.split();
    let pane = request.pane.clone();
    tracing::debug!(%pane, resume = ?request.resume, "page connected");
    let mut follow = match Follow::open(state.host.connector().clone(), pane.clone(), request.resume).await {
        Ok(follow) => follow,
        Err(error) => {
            tracing::info!(%pane, %error, "cannot subscribe");
            let _ = send(&mut sink, &wire::error(wire::error_body(&error), true)).await;
            let _ = close(&mut sink, close_code::ERROR, "cannot subscribe").await;
            return;
        }
    };
    let (outbox, mut outbox_rx) = mpsc::channel::<Value>(OUTBOX);

    let pump = async {
        let mut ping = tokio::time::interval(PING_EVERY);
        ping.tick().await;
        loop {
            tokio::select! {
                item = follow.next() => match item {
                    Ok(Some(FollowItem::Start(start))) => {
                        let generation = follow.cursor.generation().unwrap_or_default();
                        if send(&mut sink, &wire::start(pane.as_str(), generation, &start)).await.is_err() {
                            return;
                        }
                    }
                    Ok(Some(FollowItem::Event(event))) => {
                        let ended = matches!(event, Event::Ended { .. });
                        if send(&mut sink, &wire::event(&event)).await.is_err() {
                            return;
                        }
                        if ended {
                            let _ = close(&mut sink, close_code::NORMAL, "the subscription ended").await;
                            return;
                        }
                    }
                    Ok(None) => {
                        let _ = close(&mut sink, close_code::NORMAL, "the subscription ended").await;
                        return;
                    }
                    Err(error) => {
                        tracing::info!(%pane, %error, "lost the pane's stream");
                        let _ = send(&mut sink, &wire::error(wire::error_body(&error), true)).await;
                        let _ = close(&mut sink, close_code::ERROR, "lost the pane's stream").await;
                        return;
                    }
                },
                Some(message) = outbox_rx.recv() => {
                    if send(&mut sink, &message).await.is_err() {
                        return;
                    }
                }
                _ = ping.tick() => {
                    if sink.send(Message::Ping(Default::default())).await.is_err() {
                        return;
                    }
                }
            }
        }
    };

    let listen = async {
        while let Some(message) = incoming.next().await {
            let text = match message {
                Ok(Message::Text(text)) => text,
                Ok(Message::Close(_)) | Err(_) => break,
                Ok(Message::Binary(_)) => {
                    let body = serde_json::json!({
                        "code": wire::code::BAD_MESSAGE, "message": "messages are JSON text",
                    });
                    let _ = outbox.send(wire::error(body, false)).await;
                    continue;
                }
                Ok(_) => continue,
            };
            match wire::parse_page_message(text.as_str()) {
                Ok(PageMessage::Input(bytes)) => {
                    let result = state
                        .host
                        .with_client(|client| {
                            let (pane, bytes) = (pane.clone(), bytes.clone());
                            async move { client.send_input(&pane, &bytes, false).await }
                        })
                        .await;
                    if let Err(error) = result {
                        let _ = outbox.send(wire::error(wire::error_body(&error), false)).await;
                    }
                }
                Ok(PageMessage::Resize(size)) => {
                    if let Err(error) = resize(&state, &pane, size).await {
                        let _ = outbox.send(wire::error(wire::error_body(&error), false)).await;
                    }
                }
                Ok(PageMessage::Interrupt) => {
                    tokio::spawn(interrupt(state.host.connector().clone(), pane.clone(), outbox.clone()));
                }
                Err(problem) => {
                    let body = serde_json::json!({"code": wire::code::BAD_MESSAGE, "message": problem});
                    let _ = outbox.send(wire::error(body, false)).await;
                }
            }
        }
    };

    tokio::select! {
        () = pump => {}
        () = listen => {}
    }
    tracing::debug!(%pane, "page disconnected");
    // Dropping the stream unsubscribes.
}

async fn resize(state: &AppState, pane: &PaneId, size: Size) -> Result<Size, ClientError> {
    state
        .host
        .with_client(|client| {
            let pane = pane.clone();
            async move { client.resize(&pane, size).await }
        })
        .await
}

/// Interrupts on a connection of its own and reports what happened.
async fn interrupt(connector: Connector, pane: PaneId, outbox: mpsc::Sender<Value>) {
    let result = async { connector.connect().await?.interrupt(&pane).await }.await;
    let message = match result {
        Ok(report) => wire::interrupted(&report),
        Err(error) => wire::error(wire::error_body(&error), false),
    };
    let _ = outbox.send(message).await;
}

async fn send(sink: &mut Sink, value: &Value) -> Result<(), axum::Error> {
    sink.send(Message::Text(value.to_string().into())).await
}

async fn close(sink: &mut Sink, code: u16, reason: &'static str) -> Result<(), axum::Error> {
    sink.send(Message::Close(Some(CloseFrame { code, reason: reason.into() }))).await
}

/// A pane's stream that survives lost host connections (see the module
/// documentation).
#[derive(Debug)]
struct Follow {
    connector: Connector,
    policy: ReconnectPolicy,
    pane: PaneId,
    cursor: FollowCursor,
    stream: Option<EventStream>,
    start_to_hand_on: Option<StreamStart>,
}

impl Follow {
    /// Subscribes as `resume` says. Lost connections are retried; the
    /// host's refusals (`UNKNOWN_PANE`, `OFFSET_OUT_OF_RANGE`) are not.
    async fn open(connector: Connector, pane: PaneId, resume: Resume) -> Result<Follow, ClientError> {
        let request = match resume {
            Resume::Screen => Request::Events { pane: pane.clone(), from: None },
            Resume::From(offset) => Request::Events { pane: pane.clone(), from: Some(offset) },
            Resume::Exact { generation, offset } => Request::Reconnect { pane: pane.clone(), generation, offset },
        };
        let from = match resume {
            Resume::Screen => None,
            Resume::From(offset) | Resume::Exact { offset, .. } => Some(offset),
        };
        let mut follow = Follow {
            connector,
            policy: ReconnectPolicy::default(),
            pane,
            cursor: FollowCursor::new(from),
            stream: None,
            start_to_hand_on: None,
        };
        let stream = follow.open_stream(request).await?;
        follow.begin(stream);
        Ok(follow)
    }

    /// A `start` first and after every resume, then the pane's events;
    /// `None` once [`Event::Ended`] was handed on.
    ///
    /// Cancel safe: an event is either returned or stays queued, and a
    /// cancelled resume starts over from the same offset.
    async fn next(&mut self) -> Result<Option<FollowItem>, ClientError> {
        loop {
            if self.cursor.is_ended() {
                return Ok(None);
            }
            if let Some(start) = self.start_to_hand_on.take() {
                return Ok(Some(FollowItem::Start(start)));
            }
            let Some(stream) = self.stream.as_mut() else {
                let request = self.cursor.resume_request(&self.pane);
                tracing::debug!(?request, "resuming the pane's stream");
                let stream = self.open_stream(request).await?;
                self.begin(stream);
                continue;
            };
            match stream.next().await {
                Some(event) => {
                    if let Some(event) = self.cursor.admit(event) {
                        if matches!(event, Event::Ended { .. }) {
                            self.stream = None;
                        }
                        return Ok(Some(FollowItem::Event(event)));
                    }
                }
                None => {
                    tracing::warn!(pane = %self.pane, offset = ?self.cursor.offset(), "lost the host connection; resuming");
                    self.stream = None;
                }
            }
        }
    }

    async fn open_stream(&self, request: Request) -> Result<EventStream, ClientError> {
        let connector = &self.connector;
        self.policy
            .retry(|| {
                let request = request.clone();
                async move { subscribe(&connector.connect().await?, request).await }
            })
            .await
    }

    fn begin(&mut self, stream: EventStream) {
        self.cursor.on_start(stream.generation(), stream.start());
        self.start_to_hand_on = Some(stream.start().clone());
        self.stream = Some(stream);
    }
}

/// Sends an `events` or `reconnect` request.
async fn subscribe(client: &Client, request: Request) -> Result<EventStream, ClientError> {
    match request {
        Request::Reconnect { pane, generation, offset } => client.reconnect(&pane, generation, offset).await,
        Request::Events { pane, from } => client.subscribe(&pane, from).await,
        other => unreachable!("not a subscribing request: {other:?}"),
    }
}
