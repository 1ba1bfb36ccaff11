//! What a pane tells the host-wide feed that `watch` subscriptions follow:
//! its arrival, its activity changing, its size or title changing, its
//! process exiting, and its departure.
//!
//! The feed is a broadcast channel: telling it never waits, and a watcher
//! that falls behind learns how much it missed. Everything one pane tells
//! goes through one lock, so a watcher sees that pane's news in the order
//! it happened: `pane_started` first, `pane_ended` last. That lock is
//! taken before the pane's others (the turns, the screen), never while
//! one of them is held.

use panehost_ipc::{Event, ExitStatus, PaneId, PaneSummary, Size};
use std::sync::Mutex;
use std::time::{Duration, Instant};
use tokio::sync::broadcast;

/// A title that changes again within this long of the last one told waits
/// until it has passed, and the latest is told then: a program that
/// animates its title (a spinner) is told four times a second, not at
/// every frame. A new size is told at once.
pub(super) const TITLE_NEWS_INTERVAL: Duration = Duration::from_millis(250);

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
    /// The size and title last told, likewise.
    told_look: Option<(Size, String)>,
    /// When a title change was last told.
    title_told_at: Option<Instant>,
    /// A title change waits for [`TITLE_NEWS_INTERVAL`] to pass, and
    /// someone will look again then.
    title_due: bool,
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
        outlet.told_look = Some((pane.size, pane.title.clone()));
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

    /// Tells the pane's size and title (as `current` reads them, under the
    /// outlet's lock, so the last told is the latest) when either is not
    /// what was told last. A change of the title alone within
    /// [`TITLE_NEWS_INTERVAL`] of the last one told waits, when
    /// `may_wait`: the answer is how long, and the caller looks again
    /// then ([`look_again`](Self::look_again)); `None` otherwise (told, or
    /// nothing to tell, or a look already due).
    pub(super) fn look(
        &self,
        pane: &PaneId,
        may_wait: bool,
        current: impl FnOnce() -> (Size, String),
    ) -> Option<Duration> {
        let mut outlet = self.lock();
        let feed = outlet.feed.clone()?;
        let look = current();
        let told = outlet.told_look.as_ref();
        if told == Some(&look) {
            return None;
        }
        let title_changed = told.is_none_or(|(_, title)| *title != look.1);
        let same_size = told.is_some_and(|(size, _)| *size == look.0);
        if may_wait && title_changed && same_size {
            let since = outlet.title_told_at.map_or(TITLE_NEWS_INTERVAL, |at| at.elapsed());
            if since < TITLE_NEWS_INTERVAL {
                if outlet.title_due {
                    return None;
                }
                outlet.title_due = true;
                return Some(TITLE_NEWS_INTERVAL - since);
            }
        }
        if title_changed {
            outlet.title_told_at = Some(Instant::now());
        }
        let (size, title) = look.clone();
        outlet.told_look = Some(look);
        let _ = feed.send(Event::PaneChanged { pane: pane.clone(), size, title });
        None
    }

    /// The wait a [`look`](Self::look) asked for has passed: the next look
    /// tells what changed.
    pub(super) fn look_again(&self, pane: &PaneId, current: impl FnOnce() -> (Size, String)) {
        self.lock().title_due = false;
        let _ = self.look(pane, false, current);
    }

    /// Has `record` record the exit (it returns the activity after it),
    /// then tells that the pane's process exited and, when it changed, the
    /// activity. All under the outlet's lock: no other news of the pane
    /// can tell the activity an exit leaves before the exit itself.
    pub(super) fn exited(&self, pane: &PaneId, status: ExitStatus, record: impl FnOnce() -> &'static str) {
        let mut outlet = self.lock();
        let activity = record();
        let Some(feed) = outlet.feed.clone() else { return };
        let _ = feed.send(Event::PaneExited { pane: pane.clone(), status });
        if outlet.told_activity != activity {
            outlet.told_activity = activity.to_owned();
            let _ = feed.send(Event::PaneActivity { pane: pane.clone(), activity: activity.to_owned() });
        }
    }

    /// Tells that the pane left the host (`reason`), and nothing after.
    pub(super) fn disconnect(&self, pane: &PaneId, reason: String) {
        if let Some(feed) = self.lock().feed.take() {
            let _ = feed.send(Event::PaneEnded { pane: pane.clone(), reason });
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::pane::fake_keeper::{behaviour, exit_of, FakeKeeper, SIZE, WAIT};
    use crate::pane::PaneLimits;
    use panehost_adapters::CompletionSignal;
    use panehost_ipc::turn::activity;
    use panehost_ipc::Event;
    use tokio::sync::broadcast;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_feed_is_told_of_the_start_activity_exit_and_end_in_order() {
        let (_keeper, pane) = FakeKeeper::pane(
            &["/bin/sh", "-c", "read -r x; exit 4"],
            SIZE,
            behaviour(CompletionSignal::TerminalNotification),
            PaneLimits::default(),
        )
        .await;
        let id = pane.info().id.clone();
        let (feed, mut news) = broadcast::channel(64);
        pane.connect_news(feed);
        // A submission opens a turn: the pane is busy.
        pane.input_submitted(pane.output_end(), "");
        let turn = pane.join_input_line().wait().await;
        pane.write_input(&turn, b"\r", WAIT).await.expect("the input is written");
        drop(turn);
        exit_of(&pane).await;
        pane.disconnect_news("closed".to_owned());
        // Silent once the pane has left.
        pane.input_submitted(pane.output_end(), "");
        let mut told = Vec::new();
        while let Ok(event) = news.try_recv() {
            told.push(event);
        }
        let summary = match told.first() {
            Some(Event::PaneStarted { pane }) => pane.clone(),
            other => panic!("the first news is not the start: {other:?} of {told:?}"),
        };
        assert_eq!((summary.id.clone(), summary.activity.as_str()), (id.clone(), activity::UNKNOWN));
        let status = match told.get(2) {
            Some(Event::PaneExited { status, .. }) => status.clone(),
            _ => panic!("the third news is not the exit: {told:?}"),
        };
        assert_eq!(status.code, 4);
        assert_eq!(
            told,
            vec![
                Event::PaneStarted { pane: summary },
                Event::PaneActivity { pane: id.clone(), activity: activity::BUSY.to_owned() },
                Event::PaneExited { pane: id.clone(), status },
                Event::PaneActivity { pane: id.clone(), activity: activity::UNKNOWN.to_owned() },
                Event::PaneEnded { pane: id, reason: "closed".to_owned() },
            ]
        );
    }

    /// Other news of the pane told while its process exits (an output
    /// parsed, a quiet spell) never tells the activity the exit leaves
    /// before the exit itself. The explorer's watcher saw `idle -> unknown`
    /// with no `pane_exited` before it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_exit_is_told_before_the_activity_it_leaves() {
        for round in 0..40 {
            let (_keeper, pane) = FakeKeeper::pane(
                &["/bin/sh", "-c", "read -r x; exit 3"],
                SIZE,
                behaviour(CompletionSignal::TerminalNotification),
                PaneLimits::default(),
            )
            .await;
            let id = pane.info().id.clone();
            let (feed, mut news) = broadcast::channel(1 << 16);
            pane.connect_news(feed);
            let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
            let teller = std::thread::spawn({
                let (pane, stop) = (pane.clone(), stop.clone());
                move || {
                    while !stop.load(std::sync::atomic::Ordering::Relaxed) {
                        pane.publish(None);
                    }
                }
            });
            // A submission opens a turn: busy until the exit.
            pane.input_submitted(pane.output_end(), "");
            let turn = pane.join_input_line().wait().await;
            pane.write_input(&turn, b"\r", WAIT).await.expect("the input is written");
            drop(turn);
            exit_of(&pane).await;
            stop.store(true, std::sync::atomic::Ordering::Relaxed);
            teller.join().expect("the teller ends");
            let mut exited = false;
            while let Ok(event) = news.try_recv() {
                match event {
                    Event::PaneExited { .. } => exited = true,
                    Event::PaneActivity { pane, activity } if pane == id && activity == activity::UNKNOWN => {
                        assert!(exited, "round {round}: unknown told before the exit");
                    }
                    _ => {}
                }
            }
            assert!(exited, "round {round}: the exit was told");
        }
    }
}
