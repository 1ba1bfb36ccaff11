//! A subscription: one connection's cursor into one pane's output.
//!
//! The task reads the ring at its own pace and writes encoded frames to the
//! connection itself. When the connection is slow the task waits, the
//! ring moves on without it, and the next read finds the cursor behind:
//! the subscriber gets a `resync` with a snapshot instead of the lost
//! bytes. The pane's reader never waits for any of this.

use crate::handlers::terminal_attach::TerminalView;
use crate::limits::OUTPUT_EVENT_BYTES;
use crate::pane::Pane;
use crate::pane::RingRead;
use crate::server::outbox::Outbox;
use panehost_ipc::event::end_reason;
use panehost_ipc::{ByteBuf, Event, Size};
use std::sync::Arc;

/// Where a subscription's events go.
#[derive(Debug)]
pub(crate) enum EventSink {
    /// The subscribing connection, as frames.
    Connection(Outbox),
    /// A terminal the host drives (`attach_terminal`).
    Terminal(Arc<TerminalView>),
}

impl EventSink {
    /// Delivers one event; false when nobody can take more.
    async fn deliver(&self, subscription: u64, event: Event) -> bool {
        match self {
            EventSink::Connection(outbox) => outbox.event(subscription, event).await,
            EventSink::Terminal(view) => view.show(event).await,
        }
    }

    /// How far a terminal has been given the output, when an output tap
    /// may have written ahead of the subscription (see
    /// [`TerminalView`]).
    fn delivered(&self) -> Option<u64> {
        match self {
            EventSink::Connection(_) => None,
            EventSink::Terminal(view) => view.delivered(),
        }
    }
}

/// A subscription ready to run.
#[derive(Debug)]
pub(crate) struct SubscriptionTask {
    /// The id its events carry.
    pub id: u64,
    /// The pane it follows.
    pub pane: Arc<Pane>,
    /// The offset of the next byte to deliver.
    pub cursor: u64,
    /// The terminal size the subscriber knows of (as of its subscription);
    /// any other size is announced with a `resized` event.
    pub size: Size,
    /// The sequence number of the next turn signal to deliver. Signals are
    /// delivered once the output up to their offset has been.
    pub next_signal: u64,
    /// Where its events go.
    pub sink: EventSink,
}

impl SubscriptionTask {
    /// Delivers events until the pane exits or is closed, or the
    /// connection goes away.
    pub(crate) async fn run(mut self) {
        let mut progress = self.pane.progress();
        let mut size: Size = self.size;
        loop {
            if let Some(delivered) = self.sink.delivered() {
                self.cursor = self.cursor.max(delivered);
            }
            if progress.peek().signals > self.next_signal && !self.deliver_signals().await {
                return;
            }
            let event = match self.pane.read_output(self.cursor, OUTPUT_EVENT_BYTES) {
                RingRead::Bytes(data) => {
                    let offset = self.cursor;
                    self.cursor += data.len() as u64;
                    Event::Output { offset, data: ByteBuf(data) }
                }
                RingRead::Behind { .. } => {
                    // Behind this host's first offset (a hole a killed host
                    // left): the screen where this host's output begins,
                    // so the gap is only what is gone. Else the screen now.
                    let snapshot = self.pane.start_snapshot_before(self.cursor).unwrap_or_else(|| self.pane.snapshot());
                    let skipped_from = self.cursor;
                    self.cursor = snapshot.offset;
                    Event::Resync { skipped_from, snapshot }
                }
                RingRead::Ahead => {
                    tracing::error!(pane = %self.pane.info().id, cursor = self.cursor, "subscription cursor beyond the output");
                    return;
                }
                RingRead::UpToDate => {
                    let current = progress.latest();
                    if current.end > self.cursor || current.signals > self.next_signal {
                        continue;
                    }
                    if current.size != size {
                        size = current.size;
                        Event::Resized { size }
                    } else if let Some(status) = current.exit {
                        let reason =
                            if current.closed || current.closing { end_reason::CLOSED } else { end_reason::EXITED };
                        if self.emit(Event::Exited { status, offset: self.cursor }).await {
                            self.emit(Event::Ended { reason: reason.to_owned() }).await;
                        }
                        return;
                    } else if current.closed {
                        self.emit(Event::Ended { reason: end_reason::CLOSED.to_owned() }).await;
                        return;
                    } else {
                        if progress.changed().await.is_err() {
                            self.emit(Event::Ended { reason: end_reason::CLOSED.to_owned() }).await;
                            return;
                        }
                        continue;
                    }
                }
            };
            if !self.emit(event).await {
                return;
            }
        }
    }

    /// Delivers the turn signals whose offset the output has reached; false
    /// when the connection is gone.
    async fn deliver_signals(&mut self) -> bool {
        for signal in self.pane.signals_from(self.next_signal) {
            if signal.offset > self.cursor {
                break;
            }
            self.next_signal = signal.seq + 1;
            if !self.emit(signal.event).await {
                return false;
            }
        }
        true
    }

    /// Sends one event; false when the connection is gone.
    async fn emit(&self, event: Event) -> bool {
        self.sink.deliver(self.id, event).await
    }
}
