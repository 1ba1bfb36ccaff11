//! [`WatchStream`]: the news of every pane of the host (`watch`).

use crate::connection::Client;
use crate::error::ClientError;
use crate::subscribed_events::SubscribedEvents;
use futures_util::Stream;
use panehost_ipc::Event;
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// Every pane's news, in the order the host sent it: `pane_started`,
/// `pane_activity`, `pane_changed`, `pane_exited`, `pane_ended`, and, after the host found
/// the stream too far behind, `pane_list` with every pane (events follow
/// on from it). It ends (yields `None`) after [`Event::Ended`], or earlier
/// when the connection is lost; [`WatchStream::is_ended`] tells the two
/// apart.
///
/// Dropping the stream before it ended unsubscribes.
#[derive(Debug)]
pub struct WatchStream {
    subscription: u64,
    events: SubscribedEvents,
}

impl WatchStream {
    pub(crate) fn new(client: Client, subscription: u64, events: mpsc::Receiver<Event>) -> Self {
        WatchStream { subscription, events: SubscribedEvents::new(client, subscription, events) }
    }

    /// The subscription id that tags this stream's events.
    pub fn id(&self) -> u64 {
        self.subscription
    }

    /// True once [`Event::Ended`] has been yielded.
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
    /// As [`Client::request`].
    pub async fn unsubscribe(self) -> Result<(), ClientError> {
        self.events.unsubscribe().await
    }
}

impl Stream for WatchStream {
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.get_mut().events.poll_next(cx)
    }
}
