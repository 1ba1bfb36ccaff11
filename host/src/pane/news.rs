//! What a pane tells the host-wide feed that `watch` subscriptions follow:
//! its arrival, its activity changing, its process exiting, and its
//! departure.
//!
//! The feed is a broadcast channel: telling it never waits, and a watcher
//! that falls behind learns how much it missed. Everything one pane tells
//! goes through one lock, so a watcher sees that pane's news in the order
//! it happened: `pane_started` first, `pane_ended` last. That lock is
//! taken before the pane's others (the turns, the screen), never while
//! one of them is held.

use panehost_ipc::{Event, ExitStatus, PaneId, PaneSummary};
use std::sync::Mutex;
use tokio::sync::broadcast;

/// A pane's outlet to the feed: silent until the pane joins the registry,
/// and again once it has left.
#[derive(Debug, Default)]
pub(super) struct NewsOutlet {
    state: Mutex<Outlet>,
}

#[derive(Debug, Default)]
struct Outlet {
    feed: Option<broadcast::Sender<Event>>,
    /// The activity last told, so that only changes are told.
    told_activity: String,
}

impl NewsOutlet {
    fn lock(&self) -> std::sync::MutexGuard<'_, Outlet> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Tells the feed that the pane arrived (as `describe` describes it,
    /// under the outlet's lock), and from now on its news.
    pub(super) fn connect(&self, feed: broadcast::Sender<Event>, describe: impl FnOnce() -> PaneSummary) {
        let mut outlet = self.lock();
        let pane = describe();
        outlet.told_activity = pane.activity.clone();
        let _ = feed.send(Event::PaneStarted { pane });
        outlet.feed = Some(feed);
    }

    /// Tells the pane's activity (as `current` reads it, under the
    /// outlet's lock, so the last told is the latest) when it is not what
    /// was told last.
    pub(super) fn activity(&self, pane: &PaneId, current: impl FnOnce() -> &'static str) {
        let mut outlet = self.lock();
        let Some(feed) = outlet.feed.clone() else { return };
        let activity = current();
        if outlet.told_activity != activity {
            outlet.told_activity = activity.to_owned();
            let _ = feed.send(Event::PaneActivity { pane: pane.clone(), activity: activity.to_owned() });
        }
    }

    /// Tells that the pane's process exited.
    pub(super) fn exited(&self, pane: &PaneId, status: ExitStatus) {
        if let Some(feed) = &self.lock().feed {
            let _ = feed.send(Event::PaneExited { pane: pane.clone(), status });
        }
    }

    /// Tells that the pane left the host (`reason`), and nothing after.
    pub(super) fn disconnect(&self, pane: &PaneId, reason: String) {
        if let Some(feed) = self.lock().feed.take() {
            let _ = feed.send(Event::PaneEnded { pane: pane.clone(), reason });
        }
    }
}
