//! The pane's output: the ring of its newest bytes, the resizes the
//! terminal model has yet to apply at their offsets, whether the reader has
//! finished, and the offset a sleeping terminal model is rebuilt from.
//!
//! Its lock is a leaf: no method calls out of this type while holding it,
//! so it may be taken under any other lock of the pane.

use super::lock;
use super::ring::{OutputRing, RingRead};
use panehost_ipc::Size;
use std::collections::VecDeque;
use std::sync::Mutex;

/// `asleep_from` while the terminal model is awake.
const MODEL_AWAKE: u64 = u64::MAX;

/// What the lock guards.
#[derive(Debug)]
struct OutputState {
    ring: OutputRing,
    /// Resizes to apply when the model reaches their offset.
    pending_resizes: VecDeque<(u64, Size)>,
    reader_done: bool,
    /// While the terminal model sleeps, the offset from which the ring
    /// must keep the output to rebuild it; [`MODEL_AWAKE`] otherwise.
    asleep_from: u64,
}

/// The output of one pane (see the module's documentation).
#[derive(Debug)]
pub(super) struct PaneOutput {
    state: Mutex<OutputState>,
    /// The ring's capacity (fixed when the pane is made).
    capacity: usize,
}

/// Whether the terminal model may sleep, as the output sees it.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum SleepCheck {
    /// It sleeps from now on: the ring keeps what rebuilds it.
    Asleep,
    /// Not now: it has not parsed all the output, or a resize waits.
    NotSettled,
    /// Never from that origin: the ring has moved past it for good.
    OriginGone,
}

impl PaneOutput {
    /// The output `ring` holds (empty, or what a killed host left).
    pub(super) fn new(ring: OutputRing) -> Self {
        PaneOutput {
            capacity: ring.capacity(),
            state: Mutex::new(OutputState {
                ring,
                pending_resizes: VecDeque::new(),
                reader_done: false,
                asleep_from: MODEL_AWAKE,
            }),
        }
    }

    /// The most bytes the ring holds.
    pub(super) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Up to `max` bytes from `cursor`.
    pub(super) fn read_from(&self, cursor: u64, max: usize) -> RingRead {
        lock(&self.state).ring.read_from(cursor, max)
    }

    /// True when the ring can replay from `offset`.
    pub(super) fn holds(&self, offset: u64) -> bool {
        lock(&self.state).ring.holds(offset)
    }

    /// The ring's bytes from `from` to `to`, when it holds them.
    pub(super) fn held_between(&self, from: u64, to: u64) -> Option<Vec<u8>> {
        lock(&self.state).ring.held_between(from, to)
    }

    /// Everything the ring holds after its hole (if it has one), and the
    /// offset it starts at.
    pub(super) fn held(&self) -> (u64, Vec<u8>) {
        let state = lock(&self.state);
        let start = state.ring.unbroken_start();
        (start, state.ring.held_between(start, state.ring.end()).unwrap_or_default())
    }

    /// Notes a resize at the current end, for the terminal model to apply
    /// when it gets there.
    pub(super) fn push_resize(&self, size: Size) {
        let mut state = lock(&self.state);
        let at = state.ring.end();
        state.pending_resizes.push_back((at, size));
    }

    /// What the terminal model, having parsed up to `parsed`, takes next:
    /// the last resize due at or before `parsed` (taken off the queue), and
    /// up to `max` bytes that stop short of the next resize.
    pub(super) fn next_for_model(&self, parsed: u64, max: usize) -> (Option<Size>, RingRead) {
        let mut state = lock(&self.state);
        let mut resize = None;
        while let Some(&(at, size)) = state.pending_resizes.front() {
            if at > parsed {
                break;
            }
            resize = Some(size);
            state.pending_resizes.pop_front();
        }
        let limit = match state.pending_resizes.front() {
            Some(&(at, _)) => ((at - parsed) as usize).min(max),
            None => max,
        };
        (resize, state.ring.read_from(parsed, limit))
    }

    /// Appends `data` and gives the new end; `None`, appending nothing,
    /// when that would push out of the ring output a sleeping terminal
    /// model is rebuilt from (wake it first, then append).
    pub(super) fn append(&self, data: &[u8]) -> Option<u64> {
        let mut state = lock(&self.state);
        if state.asleep_from != MODEL_AWAKE && state.ring.would_drop(state.asleep_from, data.len()) {
            return None;
        }
        state.ring.append(data);
        Some(state.ring.end())
    }

    /// The reader takes at most `bytes` from the PTY that are not in the
    /// ring yet (0: it has none in hand). A host killed in between lost
    /// them; the ring tells the next host how many there could be.
    pub(super) fn set_reading(&self, bytes: usize) {
        lock(&self.state).ring.set_reading(bytes);
    }

    /// Whether the reader has bytes in hand that are not in the ring yet.
    pub(super) fn read_in_flight(&self) -> bool {
        lock(&self.state).ring.read_in_flight()
    }

    /// The reader has taken the last of the output.
    pub(super) fn finish_reading(&self) {
        lock(&self.state).reader_done = true;
    }

    /// True once the reader has taken the last of the output.
    pub(super) fn reader_done(&self) -> bool {
        lock(&self.state).reader_done
    }

    /// Decides, under the lock (so the reader sees it before its next
    /// append), whether a terminal model that has parsed up to `parsed`
    /// may sleep, to be rebuilt from `origin`; marks it asleep if so.
    pub(super) fn model_may_sleep(&self, origin: u64, parsed: u64) -> SleepCheck {
        let mut state = lock(&self.state);
        if !state.ring.holds(origin) {
            return SleepCheck::OriginGone;
        }
        if parsed != state.ring.end() || !state.pending_resizes.is_empty() {
            return SleepCheck::NotSettled;
        }
        state.asleep_from = origin;
        SleepCheck::Asleep
    }

    /// The terminal model is awake: the ring may drop what rebuilt it.
    pub(super) fn model_awake(&self) {
        lock(&self.state).asleep_from = MODEL_AWAKE;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sleeping_models_origin_is_kept_until_it_wakes() {
        let output = PaneOutput::new(OutputRing::create(None, 8, 100).unwrap());
        assert_eq!(output.append(b"abcd"), Some(104));
        assert_eq!(output.model_may_sleep(100, 103), SleepCheck::NotSettled, "not all parsed");
        assert_eq!(output.model_may_sleep(100, 104), SleepCheck::Asleep);
        assert_eq!(output.append(b"efgh"), Some(108), "the ring still holds offset 100");
        assert_eq!(output.append(b"i"), None, "this would drop offset 100");
        output.model_awake();
        assert_eq!(output.append(b"i"), Some(109));
        assert_eq!(output.model_may_sleep(100, 109), SleepCheck::OriginGone);
    }

    #[test]
    fn the_model_stops_short_of_a_resize_and_takes_it_when_it_gets_there() {
        let output = PaneOutput::new(OutputRing::create(None, 64, 0).unwrap());
        output.append(b"0123");
        output.push_resize(Size { cols: 10, rows: 2 });
        output.append(b"4567");
        assert_eq!(output.next_for_model(0, 100), (None, RingRead::Bytes(b"0123".to_vec())));
        assert_eq!(output.model_may_sleep(0, 8), SleepCheck::NotSettled, "a resize waits");
        assert_eq!(output.next_for_model(4, 2), (Some(Size { cols: 10, rows: 2 }), RingRead::Bytes(b"45".to_vec())));
        assert_eq!(output.next_for_model(8, 100), (None, RingRead::UpToDate));
        assert_eq!(output.held(), (0, b"01234567".to_vec()));
    }
}
