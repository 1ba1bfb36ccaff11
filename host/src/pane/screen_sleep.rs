//! A quiet pane's terminal model sleeps: it is dropped after the sleep
//! delay and rebuilt from the ring when next used (see
//! [`TerminalScreen`]). Here is the pane's side: waking it for every use,
//! deciding when it may sleep, and keeping the ring from dropping what
//! would rebuild it.

use super::{lock, OutputState, Pane};
use crate::pane::screen::TerminalScreen;
use std::sync::atomic::Ordering;
use std::sync::MutexGuard;
use std::time::Duration;

/// [`Pane::asleep_from`] while the terminal model is awake.
pub(super) const MODEL_AWAKE: u64 = u64::MAX;

impl Pane {
    /// The terminal model, rebuilt first if it was asleep.
    pub(super) fn awake_screen(&self) -> MutexGuard<'_, TerminalScreen> {
        let mut screen = lock(&self.screen);
        screen.touch();
        if screen.is_asleep() {
            let from = screen.origin_offset().unwrap_or(screen.parsed());
            let output = lock(&self.output).ring.held_between(from, screen.parsed()).unwrap_or_default();
            screen.wake(&output);
            self.asleep_from.store(MODEL_AWAKE, Ordering::SeqCst);
            tracing::debug!(pane = %self.info.id, replayed = output.len(), "terminal model woken");
        }
        screen
    }

    /// How long until the terminal model has been left alone for the sleep
    /// delay (at least a few milliseconds; the full delay while it sleeps).
    pub(super) fn until_screen_may_sleep(&self) -> Duration {
        let screen = lock(&self.screen);
        if screen.is_asleep() {
            return self.screen_sleep_after;
        }
        self.screen_sleep_after.saturating_sub(screen.idle_for()).max(Duration::from_millis(10))
    }

    /// Puts the terminal model to sleep when nothing has used it for the
    /// sleep delay, it has parsed all output, and it can be rebuilt from
    /// what the ring holds; true when it sleeps.
    pub(super) fn try_sleep_screen(&self) -> bool {
        let mut screen = lock(&self.screen);
        if screen.is_asleep() || screen.idle_for() < self.screen_sleep_after {
            return false;
        }
        let Some(origin) = screen.origin_offset() else { return false };
        let output = lock(&self.output);
        if !output.ring.holds(origin) {
            // The ring has moved past what a rebuild needs, for good.
            screen.forget_origin();
            return false;
        }
        if screen.parsed() != output.ring.end() || !output.pending_resizes.is_empty() {
            return false;
        }
        // Under the output lock: the reader sees this before its next append.
        self.asleep_from.store(origin, Ordering::SeqCst);
        drop(output);
        let asleep = screen.sleep();
        tracing::debug!(pane = %self.info.id, from = origin, "terminal model asleep");
        asleep
    }

    /// True when appending `len` bytes would push out of the ring output a
    /// sleeping model is rebuilt from; the reader then wakes it first. Call
    /// with the output lock held (the sleep decision is taken under it).
    pub(super) fn append_would_drop_sleeping_origin(&self, output: &OutputState, len: usize) -> bool {
        let asleep_from = self.asleep_from.load(Ordering::SeqCst);
        asleep_from != MODEL_AWAKE && output.ring.would_drop(asleep_from, len)
    }
}
