//! One WebSocket, one pane: the pane's stream out to the page, the page's
//! keystrokes, resizes and interrupts in to the host.
//!
//! The stream is a [`PaneFollower`] on a host connection of its own: its
//! [`FollowCursor`] notes the end offset of the output handed to the page,
//! and a lost host connection is reopened with `reconnect` from exactly
//! there; the page sees one more `start` (a replay, normally) and nothing
//! repeats. What the page asks for first
//! decides the first request:
//!
//! - no offset: `events` without `from` (a snapshot of the current screen);
//! - `offset` alone: `events` from it;
//! - `generation` and `offset`: `reconnect` with both, which is what a page
//!   that reloads or lost its socket sends, with the end offset of the
//!   output it rendered.
//!
//! Input and resizes go over the server's shared request connection, in the
//! order the page sent them; the page holds the pane's size while its
//! socket is open, and the size is given back after the last one closed
//! ([`super::resize_leases`]); an interrupt, which takes seconds to confirm,
//! gets a connection of its own and reports back with an `interrupted`
//! message.

use super::resize_leases;
use super::server::AppState;
use super::wire::{self, PageMessage};
use crate::{ClientError, FollowCursor, FollowItem, PaneFollower, ReconnectPolicy};
use axum::extract::ws::{close_code, CloseFrame, Message, WebSocket};
use futures_util::stream::SplitSink;
use futures_util::{SinkExt, StreamExt};
use panehost_ipc::{Event, PaneId, Size};
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
    let cursor = match request.resume {
        Resume::Screen => FollowCursor::new(None),
        Resume::From(offset) => FollowCursor::new(Some(offset)),
        Resume::Exact { generation, offset } => FollowCursor::at(generation, offset),
    };
    let connector = state.host.connector().clone();
    let mut follow = match PaneFollower::from_cursor(connector, ReconnectPolicy::default(), pane.clone(), cursor).await
    {
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
                        let generation = follow.generation().unwrap_or_default();
                        if send(&mut sink, &wire::start(&pane, generation, &start)).await.is_err() {
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

    let interrupting = Arc::new(std::sync::atomic::AtomicBool::new(false));
    // This page holds the pane's size while it is open (resize_leases).
    let viewer = state.resize_leases.join(&pane);
    let mut resized = false;
    let listen = async {
        while let Some(message) = incoming.next().await {
            let text = match message {
                Ok(Message::Text(text)) => text,
                Ok(Message::Close(_)) | Err(_) => break,
                Ok(Message::Binary(_)) => {
                    let body = wire::own_error(wire::code::BAD_MESSAGE, "messages are JSON text");
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
                    if !resized {
                        state.resize_leases.before_resize(&state.host, &viewer).await;
                        resized = true;
                    }
                    if let Err(error) = resize(&state, &pane, size).await {
                        let _ = outbox.send(wire::error(wire::error_body(&error), false)).await;
                    }
                }
                Ok(PageMessage::Interrupt) => {
                    // One interrupt in flight per page: each runs for
                    // seconds while it confirms, and a page that sends
                    // them in a loop must not pile them up.
                    if interrupting.swap(true, std::sync::atomic::Ordering::SeqCst) {
                        let body = wire::own_error(
                            wire::code::INTERRUPT_IN_PROGRESS,
                            "an interrupt of this pane is still being confirmed",
                        );
                        let _ = outbox.send(wire::error(body, false)).await;
                    } else {
                        let state = Arc::clone(&state);
                        let (pane, outbox, interrupting) = (pane.clone(), outbox.clone(), Arc::clone(&interrupting));
                        tokio::spawn(async move {
                            interrupt(&state, pane, outbox).await;
                            interrupting.store(false, std::sync::atomic::Ordering::SeqCst);
                        });
                    }
                }
                Err(problem) => {
                    let body = wire::own_error(wire::code::BAD_MESSAGE, problem);
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
    resize_leases::leave(Arc::clone(&state), viewer);
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

/// Interrupts on the shared connection (the host runs it beside the
/// connection's other requests) and reports what happened. Not retried on
/// a lost connection: its keys may have been pressed already, and a second
/// Ctrl-C ends many CLIs.
async fn interrupt(state: &AppState, pane: PaneId, outbox: mpsc::Sender<Value>) {
    let result = async { state.host.client().await?.interrupt(&pane).await }.await;
    let message = match result {
        Ok(report) => wire::interrupted(report),
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
