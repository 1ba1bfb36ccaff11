//! The pane's terminal model: the screen the output draws
//! ([`TerminalScreen`]), how far it has parsed (published for the reader's
//! backpressure and for waiters), when it sleeps, and the screen where this
//! host's offsets begin for a pane taken back after a restart.
//!
//! A quiet pane's model sleeps: it is dropped after the sleep delay and
//! rebuilt from the ring when next used. Waking it reads the ring, so this
//! type's screen lock may be held while [`PaneOutput`]'s is taken, never
//! the reverse: the output knows nothing of the model. The title's lock
//! is a leaf, taken under the screen's after a parse and alone by `list`,
//! which so never waits for a parse in progress.

use super::lock;
use super::output::{PaneOutput, SleepCheck};
use super::screen::TerminalScreen;
use super::snapshot_bounds;
use panehost_ipc::{PaneId, ScreenSnapshot};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::watch;

/// The terminal model of one pane (see the module's documentation).
#[derive(Debug)]
pub(super) struct TerminalModel {
    screen: Mutex<TerminalScreen>,
    /// How long the model must be left alone before it sleeps.
    sleep_after: Duration,
    /// The offset the model has parsed up to, published once the turns
    /// know of the terminal notices in the output before it.
    parsed: watch::Sender<u64>,
    /// Set when the screen follower has stopped: the reader no longer
    /// waits for the model.
    follower_stopped: AtomicBool,
    /// For a pane taken back after a restart: the screen where this host's
    /// offsets begin, while the ring still holds that offset.
    start_snapshot: Mutex<Option<ScreenSnapshot>>,
    /// The window's title, as of the last chunk parsed and cut to
    /// [`MAX_SNAPSHOT_TITLE_LEN`](panehost_ipc::screen::MAX_SNAPSHOT_TITLE_LEN):
    /// what `list` and `pane_changed` show, read without waiting for a
    /// parse in progress (a leaf lock).
    title: Mutex<String>,
}

impl TerminalModel {
    /// A model of `screen`, which has parsed up to its own offset.
    pub(super) fn new(screen: TerminalScreen, sleep_after: Duration, start_snapshot: Option<ScreenSnapshot>) -> Self {
        TerminalModel {
            parsed: watch::Sender::new(screen.parsed()),
            title: Mutex::new(snapshot_bounds::title_within_bound(screen.title()).to_owned()),
            screen: Mutex::new(screen),
            sleep_after,
            follower_stopped: AtomicBool::new(false),
            start_snapshot: Mutex::new(start_snapshot),
        }
    }

    /// The screen, rebuilt first from `output` if it was asleep.
    ///
    /// The replay (up to a full ring of output) runs with no lock held,
    /// and tells the runtime it blocks (its worker's other tasks move on):
    /// the pane's other users wait for the screen only while the rebuilt
    /// model is put in. Should another wake it meanwhile, this replay is
    /// dropped.
    pub(super) fn awake(&self, output: &PaneOutput, pane: &PaneId) -> MutexGuard<'_, TerminalScreen> {
        loop {
            let mut screen = lock(&self.screen);
            screen.touch();
            let Some(rebuild) = screen.rebuild() else {
                if screen.is_asleep() {
                    // Nothing to rebuild it from: it starts blank when used.
                    output.model_awake();
                }
                return screen;
            };
            drop(screen);
            let replay = output.held_between(rebuild.from(), rebuild.parsed()).unwrap_or_default();
            let replayed = crate::blocking::in_place(|| rebuild.replay(&replay));
            let mut screen = lock(&self.screen);
            if screen.install(&rebuild, replayed) {
                output.model_awake();
                tracing::debug!(pane = %pane, replayed = replay.len(), "terminal model woken");
                return screen;
            }
        }
    }

    /// The window's title (asleep or not: a sleeping model keeps it).
    pub(super) fn title(&self) -> String {
        lock(&self.title).clone()
    }

    /// Notes the title of `screen` (whose lock the caller holds) after a
    /// parse, for [`title`](Self::title); true when it changed.
    pub(super) fn note_title(&self, screen: &TerminalScreen) -> bool {
        let now = snapshot_bounds::title_within_bound(screen.title());
        let mut title = lock(&self.title);
        if *title == now {
            return false;
        }
        now.clone_into(&mut title);
        true
    }

    /// How long until the model has been left alone for the sleep delay
    /// (at least a few milliseconds; the full delay while it sleeps).
    pub(super) fn until_may_sleep(&self) -> Duration {
        let screen = lock(&self.screen);
        if screen.is_asleep() {
            return self.sleep_after;
        }
        self.sleep_after.saturating_sub(screen.idle_for()).max(Duration::from_millis(10))
    }

    /// Puts the model to sleep when nothing has used it for the sleep
    /// delay, it has parsed all output, and it can be rebuilt from what
    /// `output` holds; true when it sleeps.
    pub(super) fn try_sleep(&self, output: &PaneOutput, pane: &PaneId) -> bool {
        let mut screen = lock(&self.screen);
        if screen.is_asleep() || screen.idle_for() < self.sleep_after {
            return false;
        }
        let Some(origin) = screen.origin_offset() else { return false };
        match output.model_may_sleep(origin, screen.parsed()) {
            SleepCheck::OriginGone => {
                screen.forget_origin();
                false
            }
            SleepCheck::NotSettled => false,
            SleepCheck::Asleep => {
                let asleep = screen.sleep();
                tracing::debug!(pane = %pane, from = origin, "terminal model asleep");
                asleep
            }
        }
    }

    /// The offset the model has parsed up to (asleep or not).
    pub(super) fn parsed(&self) -> u64 {
        *self.parsed.borrow()
    }

    /// A receiver of the offset the model has parsed up to.
    pub(super) fn parsed_offset(&self) -> watch::Receiver<u64> {
        self.parsed.subscribe()
    }

    /// Tells waiters the model has parsed up to `offset`, and the turns
    /// know of the notices in the output before it.
    pub(super) fn publish_parsed(&self, offset: u64) {
        self.parsed.send_replace(offset);
    }

    /// Waits until the model has parsed up to `target`, its follower has
    /// stopped, or `give_up` says the wait is over (checked whenever the
    /// parsed offset moves).
    pub(super) async fn wait_parsed(&self, target: u64, give_up: impl Fn() -> bool) {
        if self.parsed() >= target {
            return;
        }
        // `give_up` is the caller's code: it runs with no lock held (a
        // `wait_for` predicate would run under the channel's).
        let mut parsed = self.parsed.subscribe();
        loop {
            let reached = *parsed.borrow_and_update() >= target;
            if reached || give_up() || self.follower_stopped.load(Ordering::SeqCst) {
                return;
            }
            if parsed.changed().await.is_err() {
                return;
            }
        }
    }

    /// The screen follower has stopped: nothing waits for it any more.
    pub(super) fn follower_stopped(&self) {
        self.follower_stopped.store(true, Ordering::SeqCst);
        self.parsed.send_modify(|_| {});
    }

    /// The screen where a subscription behind this host's first offset
    /// starts, while `output` still holds that offset; `None` otherwise.
    pub(super) fn start_snapshot_before(&self, offset: u64, output: &PaneOutput) -> Option<ScreenSnapshot> {
        let mut start = lock(&self.start_snapshot);
        let snapshot = start.as_ref()?;
        if !output.holds(snapshot.offset) {
            // The ring moved on; the screen is of no more use.
            *start = None;
            return None;
        }
        (offset < snapshot.offset).then(|| snapshot.clone())
    }
}
