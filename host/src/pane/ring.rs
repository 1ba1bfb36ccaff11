//! The output ring: the newest bytes of a pane's output, by absolute offset,
//! kept where the host's end does not take them (`ring_file.rs`).

use super::ring_file::RingMapping;
use std::io;
use std::path::Path;

/// A bounded window onto a byte stream whose offsets count from the pane's
/// creation and never reset. After `capacity` bytes the oldest make room
/// for new ones. Its bytes live in a file mapping that outlives the host
/// (see `ring_file.rs`); memory and disk are taken only as output arrives.
#[derive(Debug)]
pub(super) struct OutputRing {
    map: RingMapping,
    capacity: usize,
    /// The first offset the ring took (where it began).
    first: u64,
    /// Offset one past the newest byte: the total output so far.
    end: u64,
    /// Offsets at which no bytes are held, `(from, to)`: a host killed
    /// while it read lost that read with its memory.
    hole: Option<(u64, u64)>,
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
    /// An empty ring that will hold at most `capacity` bytes (at least 1),
    /// whose offsets begin at `at`, kept in a file at `path` (replacing any
    /// there) or, without one, in memory.
    ///
    /// # Errors
    /// Fails only when no memory can be mapped for it.
    pub(super) fn create(path: Option<&Path>, capacity: usize, at: u64) -> io::Result<Self> {
        let capacity = capacity.max(1);
        let map = RingMapping::create(path, capacity, at)?;
        Ok(OutputRing { map, capacity, first: at, end: at, hole: None })
    }

    /// The ring a killed host left at `path`, with every byte it had read
    /// at its offset, when the file holds one whose capacity is at most
    /// `max_capacity` and whose end is at most `max_end` (the pane's
    /// reservation: no host read past it). When that host was killed with
    /// a read in hand, those bytes are gone: the ring goes on after a hole
    /// as large as that read could be (up to `max_end`), and a reader that
    /// reaches the hole is told it is behind.
    pub(super) fn reopen(path: &Path, max_capacity: usize, max_end: u64) -> Option<Self> {
        let map = RingMapping::reopen(path, max_capacity.max(1), max_end)?;
        let (capacity, first, end, hole) = (map.capacity(), map.first(), map.end(), map.hole());
        let mut ring = OutputRing { map, capacity, first, end, hole };
        let in_hand = ring.map.reading();
        if in_hand > 0 {
            let to = end.saturating_add(in_hand).min(max_end);
            if let Some((_, older)) = ring.hole {
                // One hole at a time: what came before an older one goes.
                ring.first = ring.first.max(older);
            }
            ring.hole = (end < to).then_some((end, to));
            ring.end = to;
            ring.first = ring.first.min(to);
            ring.map.set_bounds(ring.first, ring.end, ring.hole);
            ring.map.set_reading(0);
        }
        Some(ring)
    }

    /// Notes that the reader is taking at most `bytes` from the PTY, not in
    /// the ring yet (0: it has none in hand).
    pub(super) fn set_reading(&mut self, bytes: usize) {
        self.map.set_reading(bytes as u64);
    }

    /// Whether the reader has bytes in hand from the PTY that are not in
    /// the ring yet.
    pub(super) fn read_in_flight(&self) -> bool {
        self.map.reading() > 0
    }

    /// How many bytes it holds.
    fn len(&self) -> usize {
        (self.end - self.first).min(self.capacity as u64) as usize
    }

    /// Offset of the oldest byte held (or of the hole, when it begins
    /// there).
    pub(super) fn start(&self) -> u64 {
        self.end - self.len() as u64
    }

    /// Where the newest run of bytes with no hole in it starts: the oldest
    /// byte held, or the end of the hole when it lies after that.
    pub(super) fn unbroken_start(&self) -> u64 {
        let start = self.start();
        match self.hole {
            Some((_, to)) if to > start => to,
            _ => start,
        }
    }

    /// Whether `offset` lies in the hole.
    fn in_hole(&self, offset: u64) -> bool {
        self.hole.is_some_and(|(from, to)| from <= offset && offset < to)
    }

    /// Offset one past the newest byte.
    pub(super) fn end(&self) -> u64 {
        self.end
    }

    /// The most bytes the ring holds.
    pub(super) fn capacity(&self) -> usize {
        self.capacity
    }

    /// Appends output, dropping the oldest bytes beyond capacity. The
    /// bytes are in place before the end that covers them is written.
    pub(super) fn append(&mut self, data: &[u8]) {
        let new_end = self.end + data.len() as u64;
        let kept = if data.len() > self.capacity { &data[data.len() - self.capacity..] } else { data };
        let at = new_end - kept.len() as u64;
        let position = (at % self.capacity as u64) as usize;
        let first_part = kept.len().min(self.capacity - position);
        let area = self.map.data_mut();
        area[position..position + first_part].copy_from_slice(&kept[..first_part]);
        area[..kept.len() - first_part].copy_from_slice(&kept[first_part..]);
        self.end = new_end;
        self.map.set_end(new_end);
        if self.hole.is_some_and(|(_, to)| self.start() >= to) {
            // The ring has moved past the hole.
            self.hole = None;
            self.map.set_bounds(self.first, self.end, None);
        }
    }

    /// Copies the bytes from `from` to `to`, which the ring holds.
    fn copy(&self, from: u64, to: u64) -> Vec<u8> {
        let len = (to - from) as usize;
        let position = (from % self.capacity as u64) as usize;
        let first_part = len.min(self.capacity - position);
        let area = self.map.data();
        let mut bytes = Vec::with_capacity(len);
        bytes.extend_from_slice(&area[position..position + first_part]);
        bytes.extend_from_slice(&area[..len - first_part]);
        bytes
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
            let start = match self.hole {
                Some((from, to)) if from <= start => to,
                _ => start,
            };
            return RingRead::Behind { start };
        }
        if let Some((from, to)) = self.hole {
            if self.in_hole(cursor) {
                return RingRead::Behind { start: to };
            }
            if cursor < from {
                return RingRead::Bytes(self.copy(cursor, (cursor + max as u64).min(from)));
            }
        }
        let to = (cursor + max as u64).min(self.end);
        RingRead::Bytes(self.copy(cursor, to))
    }

    /// A copy of the bytes from `from` to `to`, when the ring holds them all.
    pub(super) fn held_between(&self, from: u64, to: u64) -> Option<Vec<u8>> {
        if from > to || from < self.start() || to > self.end {
            return None;
        }
        if self.hole.is_some_and(|(hole_from, hole_to)| hole_from < to.max(from + 1) && from < hole_to) {
            return None;
        }
        Some(self.copy(from, to))
    }

    /// True when appending `len` bytes would drop the byte at `offset` (or
    /// any after it) from the ring.
    pub(super) fn would_drop(&self, offset: u64, len: usize) -> bool {
        let overflow = (self.len() + len).saturating_sub(self.capacity) as u64;
        overflow > 0 && self.start() + overflow > offset
    }

    /// True when `offset` can be replayed from (held, or the end).
    pub(super) fn holds(&self, offset: u64) -> bool {
        offset >= self.start() && offset <= self.end && !self.in_hole(offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(capacity: usize) -> OutputRing {
        OutputRing::create(None, capacity, 0).unwrap()
    }

    #[test]
    fn offsets_are_absolute_and_old_bytes_fall_out() {
        let mut ring = ring(8);
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
        let mut ring = ring(4);
        ring.append(b"abcdefgh");
        assert_eq!((ring.start(), ring.end()), (4, 8));
        assert_eq!(ring.read_from(4, 10), RingRead::Bytes(b"efgh".to_vec()));
    }

    #[test]
    fn a_range_is_copied_only_when_all_of_it_is_held() {
        let mut ring = ring(8);
        ring.append(b"abcdefghij");
        assert_eq!(ring.held_between(2, 5), Some(b"cde".to_vec()));
        assert_eq!(ring.held_between(10, 10), Some(Vec::new()));
        assert_eq!(ring.held_between(1, 5), None, "byte 1 is gone");
        assert_eq!(ring.held_between(4, 11), None, "byte 10 is not there yet");
    }

    #[test]
    fn an_append_says_which_offsets_it_would_drop() {
        let mut ring = ring(8);
        ring.append(b"abcdef");
        assert!(!ring.would_drop(0, 2), "room for two more");
        assert!(ring.would_drop(0, 3), "the first byte would go");
        assert!(!ring.would_drop(1, 3), "only the first byte would go");
        assert!(ring.would_drop(5, 100));
    }

    #[test]
    fn a_killed_hosts_ring_is_found_whole_by_the_next() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p00000001.ring");
        let mut ring = OutputRing::create(Some(&path), 8, 100).unwrap();
        ring.append(b"hello");
        ring.append(b"world!");
        // The first is never dropped here: a killed process's mapping
        // leaves its pages to the file just the same.
        let again = OutputRing::reopen(&path, 8, 1 << 20).expect("the ring is there");
        assert_eq!((again.start(), again.end()), (103, 111));
        assert_eq!(again.read_from(103, 100), RingRead::Bytes(b"loworld!".to_vec()));
        assert!(OutputRing::reopen(&path, 8, 110).is_none(), "an end past the reservation is not trusted");
        drop(ring);
    }

    #[test]
    fn a_read_a_killed_host_had_in_hand_leaves_a_hole_that_readers_are_told_of() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p00000002.ring");
        let mut ring = OutputRing::create(Some(&path), 16, 0).unwrap();
        ring.append(b"abcdef");
        ring.set_reading(4);
        // Killed here, with up to 4 bytes read from the PTY; offsets up to
        // 8 were reserved.
        let mut again = OutputRing::reopen(&path, 16, 8).unwrap();
        assert_eq!((again.start(), again.end()), (0, 8), "it goes on after the hole, within the reservation");
        assert_eq!(again.read_from(2, 100), RingRead::Bytes(b"cdef".to_vec()), "up to the hole");
        assert_eq!(again.read_from(6, 100), RingRead::Behind { start: 8 });
        assert!(again.holds(3) && !again.holds(6) && !again.holds(7) && again.holds(8));
        assert_eq!(again.held_between(0, 6), Some(b"abcdef".to_vec()));
        assert_eq!(again.held_between(5, 8), None);
        again.append(b"XYZ");
        assert_eq!(again.read_from(8, 100), RingRead::Bytes(b"XYZ".to_vec()));
        // The next host finds the hole too, and no read in flight.
        drop(again);
        let third = OutputRing::reopen(&path, 16, 100).unwrap();
        assert_eq!(third.end(), 11);
        assert_eq!(third.read_from(7, 1), RingRead::Behind { start: 8 });
        assert_eq!(third.held_between(0, 6), Some(b"abcdef".to_vec()));
        // Once the ring has moved past it, the hole is forgotten.
        let mut third = third;
        third.append(&[b'.'; 16]);
        assert!(third.hole.is_none());
        assert!(third.holds(third.start()));
        drop(ring);
    }

    #[test]
    fn appends_across_the_wrap_read_back_at_every_cursor() {
        let mut ring = ring(7);
        let mut all = Vec::new();
        for round in 0..40u8 {
            let chunk: Vec<u8> = (0..(round % 11)).map(|index| round.wrapping_mul(31).wrapping_add(index)).collect();
            ring.append(&chunk);
            all.extend_from_slice(&chunk);
            let end = all.len() as u64;
            assert_eq!(ring.end(), end);
            for cursor in ring.start()..end {
                let expected = all[cursor as usize..].to_vec();
                assert_eq!(ring.read_from(cursor, 100), RingRead::Bytes(expected), "cursor {cursor}");
            }
        }
    }
}
