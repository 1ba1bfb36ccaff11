//! [`EventStream`]: the events of one subscription.

use crate::connection::Client;
use crate::error::ClientError;
use crate::subscribed_events::SubscribedEvents;
use futures_util::Stream;
use panehost_ipc::{Event, PaneId, StreamStart, Subscription};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// The events of one subscription, in the order the host sent them.
///
/// The stream first says how it begins ([`EventStream::start`]), then yields
/// [`Event`]s. It ends (yields `None`) after [`Event::Ended`], or earlier
/// when the connection is lost; [`EventStream::is_ended`] tells the two
/// apart. Each subscription buffers a bounded number of events; a slow
/// reader makes the connection wait (see [`Client`]'s notes on deadlocks),
/// and the host, which never waits for a client, resyncs it with
/// [`Event::Resync`] if it falls out of the pane's output ring.
///
/// Dropping the stream before it ended unsubscribes.
#[derive(Debug)]
pub struct EventStream {
    subscription: Subscription,
    events: SubscribedEvents,
}

impl EventStream {
    pub(crate) fn new(client: Client, subscription: Subscription, events: mpsc::Receiver<Event>) -> Self {
        let events = SubscribedEvents::new(client, subscription.subscription, events);
        EventStream { subscription, events }
    }

    /// The subscription as the host described it.
    pub fn subscription(&self) -> &Subscription {
        &self.subscription
    }

    /// The subscription id that tags this stream's events.
    pub fn id(&self) -> u64 {
        self.subscription.subscription
    }

    /// The pane.
    pub fn pane(&self) -> &PaneId {
        &self.subscription.pane
    }

    /// The pane's generation when the subscription began.
    pub fn generation(&self) -> u64 {
        self.subscription.generation
    }

    /// How the stream begins: replayed output, or a screen snapshot.
    pub fn start(&self) -> &StreamStart {
        &self.subscription.start
    }

    /// The connection this stream arrives on.
    pub fn client(&self) -> &Client {
        self.events.client()
    }

    /// True once [`Event::Ended`] has been yielded: the host will send no
    /// more events. A stream that returned `None` without being ended lost
    /// its connection.
    pub fn is_ended(&self) -> bool {
        self.events.is_ended()
    }

    /// The next event; `None` after [`Event::Ended`] or when the connection
    /// is lost.
    ///
    /// # Cancel safety
    /// Cancel safe: an event is either returned or stays queued.
    pub async fn next(&mut self) -> Option<Event> {
        self.events.next().await
    }

    /// Ends the subscription and waits for the host to confirm.
    ///
    /// # Errors
    /// As [`Client::request`]; `UNKNOWN_SUBSCRIPTION` when it had already
    /// ended on the host's side.
    pub async fn unsubscribe(self) -> Result<(), ClientError> {
        self.events.unsubscribe().await
    }
}

impl Stream for EventStream {
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.get_mut().events.poll_next(cx)
    }
}
