//! A `watch` subscription: one connection's view of every pane arriving,
//! changing activity, exiting and leaving.
//!
//! The task reads the host-wide feed at its own pace. The feed keeps
//! [`NEWS_BACKLOG`](crate::limits::NEWS_BACKLOG) events for it; when it
//! falls further behind, it sends the list of every pane instead of what
//! it missed, and goes on from there.

use crate::server::outbox::Outbox;
use panehost_ipc::event::end_reason;
use panehost_ipc::{Event, PaneSummary};
use tokio::sync::broadcast::{self, error::RecvError};

/// Lists every pane of the host, as `list` describes them.
pub(crate) type PaneLister = Box<dyn Fn() -> Vec<PaneSummary> + Send + Sync>;

/// A `watch` subscription ready to run.
pub(crate) struct WatchTask {
    /// The id its events carry.
    pub id: u64,
    /// The feed, from the moment the subscription was made.
    pub news: broadcast::Receiver<Event>,
    /// Every pane now, for the list sent after a fall behind.
    pub list_panes: PaneLister,
    /// Where its frames go.
    pub outbox: Outbox,
}

impl std::fmt::Debug for WatchTask {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WatchTask").field("id", &self.id).finish_non_exhaustive()
    }
}

impl WatchTask {
    /// Delivers events until the connection or the feed goes away.
    pub(crate) async fn run(mut self) {
        loop {
            let event = match self.news.recv().await {
                Ok(event) => event,
                Err(RecvError::Lagged(missed)) => {
                    // Skip what is left of the backlog: events older than
                    // the list would state older states after it.
                    self.news = self.news.resubscribe();
                    Event::PaneList { panes: (self.list_panes)(), missed }
                }
                Err(RecvError::Closed) => Event::Ended { reason: end_reason::CLOSED.to_owned() },
            };
            let last = matches!(event, Event::Ended { .. });
            if !self.outbox.event(self.id, event).await || last {
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::WatchTask;
    use crate::server::outbox::Outbox;
    use futures_util::StreamExt;
    use panehost_ipc::{decode, Encoding, Event, FrameCodecs, PaneId, ServerMessage, MAX_SERVER_FRAME_LEN};
    use tokio::sync::broadcast;
    use tokio_util::codec::{FramedRead, FramedWrite};

    fn activity(pane: &str, activity: &str) -> Event {
        Event::PaneActivity { pane: PaneId(pane.into()), activity: activity.into() }
    }

    /// A watcher that fell behind gets the list in place of what it
    /// missed, then only what happened after the list, then the end.
    #[tokio::test]
    async fn a_watcher_behind_gets_the_list_then_only_newer_news() {
        let (feed, news) = broadcast::channel(4);
        let (ours, theirs) = tokio::io::duplex(64 * 1024);
        let outbox =
            Outbox::new(Encoding::Json, Box::pin(FramedWrite::new(ours, FrameCodecs::with_max(MAX_SERVER_FRAME_LEN))));
        // Ten changes before the watcher reads anything: six fall out of
        // a backlog of four.
        for n in 0..10 {
            feed.send(activity(&format!("p{n}"), "busy")).unwrap();
        }
        let task = WatchTask { id: 7, news, list_panes: Box::new(Vec::new), outbox };
        let running = tokio::spawn(task.run());
        let mut frames = FramedRead::new(theirs, FrameCodecs::with_max(MAX_SERVER_FRAME_LEN));
        let mut next = async || -> Event {
            let frame = frames.next().await.expect("a frame").expect("readable");
            match decode::<ServerMessage>(Encoding::Json, &frame).unwrap() {
                ServerMessage::Event { subscription: 7, event } => event,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(next().await, Event::PaneList { panes: Vec::new(), missed: 6 });
        // The four still held are older than the list: not sent.
        feed.send(activity("p10", "idle")).unwrap();
        assert_eq!(next().await, activity("p10", "idle"));
        drop(feed);
        assert_eq!(next().await, Event::Ended { reason: "closed".into() });
        running.await.unwrap();
    }
}
