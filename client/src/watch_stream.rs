//! [`WatchStream`]: the news of every pane of the host (`watch`).

use crate::connection::{response_kind, Client};
use crate::error::ClientError;
use futures_util::Stream;
use panehost_ipc::{Event, Request, Response};
use std::pin::Pin;
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// Every pane's news, in the order the host sent it: `pane_started`,
/// `pane_activity`, `pane_exited`, `pane_ended`, and, after the host found
/// the stream too far behind, `pane_list` with every pane (events follow
/// on from it). It ends (yields `None`) after [`Event::Ended`], or earlier
/// when the connection is lost; [`WatchStream::is_ended`] tells the two
/// apart.
///
/// Dropping the stream before it ended unsubscribes.
#[derive(Debug)]
pub struct WatchStream {
    client: Client,
    subscription: u64,
    events: mpsc::Receiver<Event>,
    ended: bool,
}

impl WatchStream {
    pub(crate) fn new(client: Client, subscription: u64, events: mpsc::Receiver<Event>) -> Self {
        WatchStream { client, subscription, events, ended: false }
    }

    /// The subscription id that tags this stream's events.
    pub fn id(&self) -> u64 {
        self.subscription
    }

    /// True once [`Event::Ended`] has been yielded.
    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// The next event; `None` after [`Event::Ended`] or when the connection
    /// is lost.
    ///
    /// # Cancel safety
    /// Cancel safe: an event is either returned or stays queued.
    pub async fn next(&mut self) -> Option<Event> {
        if self.ended {
            return None;
        }
        let event = self.events.recv().await?;
        self.note(&event);
        Some(event)
    }

    fn note(&mut self, event: &Event) {
        if matches!(event, Event::Ended { .. }) {
            self.ended = true;
            self.events.close();
        }
    }

    /// Ends the subscription and waits for the host to confirm.
    ///
    /// # Errors
    /// As [`Client::request`].
    pub async fn unsubscribe(mut self) -> Result<(), ClientError> {
        self.ended = true;
        match self.client.request(Request::Unsubscribe { subscription: self.subscription }).await? {
            Response::Unsubscribed { .. } => Ok(()),
            other => Err(ClientError::UnexpectedResponse { expected: "unsubscribed", got: response_kind(&other) }),
        }
    }
}

impl Stream for WatchStream {
    type Item = Event;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        let this = self.get_mut();
        if this.ended {
            return Poll::Ready(None);
        }
        let polled = this.events.poll_recv(cx);
        if let Poll::Ready(Some(event)) = &polled {
            this.note(event);
        }
        polled
    }
}

impl Drop for WatchStream {
    fn drop(&mut self) {
        if !self.ended {
            self.client.unsubscribe_soon(self.subscription);
        }
    }
}
