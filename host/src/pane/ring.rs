//! The output ring: the newest bytes of a pane's output, by absolute offset.

use std::collections::VecDeque;

/// A bounded window onto a byte stream whose offsets count from the pane's
/// creation and never reset. Memory grows as output arrives, up to the
/// capacity; after that the oldest bytes make room for new ones.
#[derive(Debug)]
pub(super) struct OutputRing {
    bytes: VecDeque<u8>,
    capacity: usize,
    /// Offset one past the newest byte: the total output so far.
    end: u64,
}

/// What a reader finds at its cursor.
#[derive(Debug, PartialEq, Eq)]
pub enum RingRead {
    /// Bytes starting exactly at the cursor.
    Bytes(Vec<u8>),
    /// The cursor is at the end; nothing new.
    UpToDate,
    /// The cursor is older than the oldest byte held.
    Behind {
        /// The oldest offset still held.
        start: u64,
    },
    /// The cursor lies beyond the end.
    Ahead,
}

impl OutputRing {
    /// An empty ring that will hold at most `capacity` bytes (at least 1).
    pub(super) fn new(capacity: usize) -> Self {
        OutputRing { bytes: VecDeque::new(), capacity: capacity.max(1), end: 0 }
    }

    /// Makes an empty ring continue from `offset` (a pane taken back after
    /// a host restart).
    pub(super) fn skip_to(&mut self, offset: u64) {
        self.bytes.clear();
        self.end = offset;
    }

    /// Offset of the oldest byte held.
    pub(super) fn start(&self) -> u64 {
        self.end - self.bytes.len() as u64
    }

    /// Offset one past the newest byte.
    pub(super) fn end(&self) -> u64 {
        self.end
    }

    /// The most bytes the ring holds.
    pub(super) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Appends output, dropping the oldest bytes beyond capacity.
    pub(super) fn append(&mut self, data: &[u8]) {
        self.end += data.len() as u64;
        let data = if data.len() > self.capacity { &data[data.len() - self.capacity..] } else { data };
        let overflow = (self.bytes.len() + data.len()).saturating_sub(self.capacity);
        self.bytes.drain(..overflow);
        self.bytes.extend(data);
    }

    /// Up to `max` bytes starting at `cursor`.
    pub(super) fn read_from(&self, cursor: u64, max: usize) -> RingRead {
        if cursor > self.end {
            return RingRead::Ahead;
        }
        if cursor == self.end {
            return RingRead::UpToDate;
        }
        let start = self.start();
        if cursor < start {
            return RingRead::Behind { start };
        }
        let from = (cursor - start) as usize;
        let to = (from + max).min(self.bytes.len());
        RingRead::Bytes(self.bytes.range(from..to).copied().collect())
    }

    /// A copy of the bytes from `from` to `to`, when the ring holds them all.
    pub(super) fn held_between(&self, from: u64, to: u64) -> Option<Vec<u8>> {
        if from > to || from < self.start() || to > self.end {
            return None;
        }
        let start = (from - self.start()) as usize;
        Some(self.bytes.range(start..start + (to - from) as usize).copied().collect())
    }

    /// True when appending `len` bytes would drop the byte at `offset` (or
    /// any after it) from the ring.
    pub(super) fn would_drop(&self, offset: u64, len: usize) -> bool {
        let overflow = (self.bytes.len() + len).saturating_sub(self.capacity) as u64;
        overflow > 0 && self.start() + overflow > offset
    }

    /// True when `offset` can be replayed from (held, or the end).
    pub(super) fn holds(&self, offset: u64) -> bool {
        offset >= self.start() && offset <= self.end
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_absolute_and_old_bytes_fall_out() {
        let mut ring = OutputRing::new(8);
        ring.append(b"hello");
        assert_eq!(ring.read_from(0, 100), RingRead::Bytes(b"hello".to_vec()));
        ring.append(b"world!");
        assert_eq!((ring.start(), ring.end()), (3, 11));
        assert_eq!(ring.read_from(2, 100), RingRead::Behind { start: 3 });
        assert_eq!(ring.read_from(3, 4), RingRead::Bytes(b"lowo".to_vec()));
        assert_eq!(ring.read_from(11, 4), RingRead::UpToDate);
        assert_eq!(ring.read_from(12, 4), RingRead::Ahead);
    }

    #[test]
    fn an_append_larger_than_the_ring_keeps_its_tail() {
        let mut ring = OutputRing::new(4);
        ring.append(b"abcdefgh");
        assert_eq!((ring.start(), ring.end()), (4, 8));
        assert_eq!(ring.read_from(4, 10), RingRead::Bytes(b"efgh".to_vec()));
    }

    #[test]
    fn a_range_is_copied_only_when_all_of_it_is_held() {
        let mut ring = OutputRing::new(8);
        ring.append(b"abcdefghij");
        assert_eq!(ring.held_between(2, 5), Some(b"cde".to_vec()));
        assert_eq!(ring.held_between(10, 10), Some(Vec::new()));
        assert_eq!(ring.held_between(1, 5), None, "byte 1 is gone");
        assert_eq!(ring.held_between(4, 11), None, "byte 10 is not there yet");
    }

    #[test]
    fn an_append_says_which_offsets_it_would_drop() {
        let mut ring = OutputRing::new(8);
        ring.append(b"abcdef");
        assert!(!ring.would_drop(0, 2), "room for two more");
        assert!(ring.would_drop(0, 3), "the first byte would go");
        assert!(!ring.would_drop(1, 3), "only the first byte would go");
        assert!(ring.would_drop(5, 100));
    }

    #[test]
    fn memory_grows_only_as_output_arrives() {
        let ring = OutputRing::new(64 * 1024 * 1024);
        assert_eq!(ring.bytes.capacity(), 0);
    }
}
