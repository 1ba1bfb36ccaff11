//! Output taps: a keystroke's echo handed straight to an attached
//! terminal by the reader, before any task is woken.
//!
//! A subscription delivers output from its own task, which the reader
//! wakes through the pane's progress, along with the screen follower and
//! the recorder; waking several tasks wakes a second worker thread too,
//! and the echo waited for that. A tap is offered each short read (what
//! interactive output is) as soon as it is in the ring. It writes what it
//! can without waiting and leaves the rest to its subscription, which
//! goes on from wherever the tap got to. A flood's reads are not offered:
//! they go through the subscription as before, off the reader's path.

use crate::limits::FLOOD_READ;
use std::sync::{Arc, RwLock};

/// Something that may take output the moment it is read.
pub(crate) trait OutputTap: Send + Sync + std::fmt::Debug {
    /// `data` was appended to the ring at `offset`. Must not block: take
    /// what can be taken at once, or nothing.
    fn offer(&self, offset: u64, data: &[u8]);
}

/// The taps of one pane.
#[derive(Debug, Default)]
pub(super) struct OutputTaps {
    taps: RwLock<Vec<(u64, Arc<dyn OutputTap>)>>,
    next_id: std::sync::atomic::AtomicU64,
}

impl OutputTaps {
    /// Adds `tap`; gives the id that removes it.
    pub(super) fn add(&self, tap: Arc<dyn OutputTap>) -> u64 {
        let id = self.next_id.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        self.taps.write().unwrap_or_else(|poisoned| poisoned.into_inner()).push((id, tap));
        id
    }

    /// Removes the tap `id`. Once this returns, it is offered nothing more
    /// (an offer in progress finishes first).
    pub(super) fn remove(&self, id: u64) {
        self.taps.write().unwrap_or_else(|poisoned| poisoned.into_inner()).retain(|(tap_id, _)| *tap_id != id);
    }

    /// Offers a read's bytes, appended at `offset`, to every tap, when the
    /// read was short.
    pub(super) fn offer(&self, offset: u64, data: &[u8]) {
        if data.len() >= FLOOD_READ {
            return;
        }
        let taps = self.taps.read().unwrap_or_else(|poisoned| poisoned.into_inner());
        for (_, tap) in taps.iter() {
            tap.offer(offset, data);
        }
    }
}

/// A tap on a pane, removed when this is dropped.
#[derive(Debug)]
pub(crate) struct OutputTapGuard {
    pane: Arc<super::Pane>,
    id: u64,
}

impl Drop for OutputTapGuard {
    fn drop(&mut self) {
        self.pane.output_taps.remove(self.id);
    }
}

impl super::Pane {
    /// Offers this pane's short reads to `tap` until the guard is dropped.
    pub(crate) fn tap_output(self: &Arc<Self>, tap: Arc<dyn OutputTap>) -> OutputTapGuard {
        let id = self.output_taps.add(tap);
        OutputTapGuard { pane: Arc::clone(self), id }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Mutex;

    /// Keeps what it was offered.
    #[derive(Debug, Default)]
    struct Kept(Mutex<Vec<(u64, Vec<u8>)>>);

    impl OutputTap for Kept {
        fn offer(&self, offset: u64, data: &[u8]) {
            self.0.lock().unwrap().push((offset, data.to_vec()));
        }
    }

    #[test]
    fn short_reads_are_offered_until_the_tap_is_removed_and_floods_never() {
        let taps = OutputTaps::default();
        let kept = Arc::new(Kept::default());
        let id = taps.add(Arc::clone(&kept) as Arc<dyn OutputTap>);
        taps.offer(0, b"x");
        taps.offer(1, &[b'y'; FLOOD_READ - 1]);
        taps.offer(FLOOD_READ as u64, &[b'z'; FLOOD_READ]);
        taps.remove(id);
        taps.offer(2 * FLOOD_READ as u64, b"after");
        let offered: Vec<(u64, usize)> =
            kept.0.lock().unwrap().iter().map(|(offset, data)| (*offset, data.len())).collect();
        assert_eq!(offered, [(0, 1), (1, FLOOD_READ - 1)]);
    }
}
