//! [`SubscribedEvents`]: what [`EventStream`](crate::EventStream) and
//! [`WatchStream`](crate::WatchStream) share: one subscription's events as
//! they arrive, its end, and its unsubscription.

use crate::connection::{response_kind, Client};
use crate::error::ClientError;
use panehost_ipc::{Event, Request, Response};
use std::task::{Context, Poll};
use tokio::sync::mpsc;

/// The events of one subscription on one connection. It ends after
/// [`Event::Ended`] (or when the connection is lost); dropped before that,
/// it unsubscribes.
#[derive(Debug)]
pub(crate) struct SubscribedEvents {
    client: Client,
    subscription: u64,
    events: mpsc::Receiver<Event>,
    ended: bool,
}

impl SubscribedEvents {
    pub(crate) fn new(client: Client, subscription: u64, events: mpsc::Receiver<Event>) -> Self {
        SubscribedEvents { client, subscription, events, ended: false }
    }

    pub(crate) fn client(&self) -> &Client {
        &self.client
    }

    pub(crate) fn is_ended(&self) -> bool {
        self.ended
    }

    /// The next event; `None` after [`Event::Ended`] or when the connection
    /// is lost. Cancel safe: an event is either returned or stays queued.
    pub(crate) async fn next(&mut self) -> Option<Event> {
        if self.ended {
            return None;
        }
        let event = self.events.recv().await?;
        self.note(&event);
        Some(event)
    }

    /// [`Self::next`] as a poll.
    pub(crate) fn poll_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        if self.ended {
            return Poll::Ready(None);
        }
        let polled = self.events.poll_recv(cx);
        if let Poll::Ready(Some(event)) = &polled {
            self.note(event);
        }
        polled
    }

    fn note(&mut self, event: &Event) {
        if matches!(event, Event::Ended { .. }) {
            self.ended = true;
            self.events.close();
        }
    }

    /// Ends the subscription and waits for the host to confirm.
    pub(crate) async fn unsubscribe(mut self) -> Result<(), ClientError> {
        self.ended = true;
        match self.client.request(Request::Unsubscribe { subscription: self.subscription }).await? {
            Response::Unsubscribed { .. } => Ok(()),
            other => Err(ClientError::UnexpectedResponse { expected: "unsubscribed", got: response_kind(&other) }),
        }
    }
}

impl Drop for SubscribedEvents {
    fn drop(&mut self) {
        if !self.ended {
            self.client.unsubscribe_soon(self.subscription);
        }
    }
}
