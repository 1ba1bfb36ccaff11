//! The `/flood N` byte stream.
//!
//! The stream is the lines `flood 00000001 abcdefghijklmnopqrstuvwxyz\n`,
//! `flood 00000002 ...`, numbered from 1 and zero-padded to 8 digits (42 bytes
//! each), cut off after exactly N bytes.

/// The letters that end every flood line.
const LETTERS: &str = "abcdefghijklmnopqrstuvwxyz";
/// Roughly how many bytes one chunk carries.
const CHUNK_BYTES: usize = 16 * 1024;

/// The first `total` bytes of the flood stream, a chunk at a time.
pub struct Flood {
    remaining: u64,
    next_line: u64,
    chunk: Vec<u8>,
}

impl Flood {
    pub fn new(total: u64) -> Self {
        Flood { remaining: total, next_line: 1, chunk: Vec::with_capacity(CHUNK_BYTES + 64) }
    }

    /// The next chunk, or `None` once all `total` bytes have been given.
    pub fn next_chunk(&mut self) -> Option<&[u8]> {
        if self.remaining == 0 {
            return None;
        }
        self.chunk.clear();
        while self.chunk.len() < CHUNK_BYTES && (self.chunk.len() as u64) < self.remaining {
            let line = format!("flood {:08} {LETTERS}\n", self.next_line);
            self.chunk.extend_from_slice(line.as_bytes());
            self.next_line += 1;
        }
        let length = self.remaining.min(self.chunk.len() as u64);
        // `length` is at most `chunk.len()`, so it fits in a usize.
        self.chunk.truncate(length as usize);
        self.remaining -= length;
        Some(&self.chunk)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn collect(total: u64) -> Vec<u8> {
        let mut flood = Flood::new(total);
        let mut all = Vec::new();
        while let Some(chunk) = flood.next_chunk() {
            all.extend_from_slice(chunk);
        }
        all
    }

    #[test]
    fn the_stream_has_exactly_the_requested_length() {
        for total in [0, 1, 41, 42, 43, 16 * 1024, 100_000, 1_000_003] {
            assert_eq!(collect(total).len() as u64, total);
        }
    }

    #[test]
    fn the_stream_is_numbered_lines_cut_off_at_the_end() {
        let stream = collect(50);
        assert_eq!(stream, b"flood 00000001 abcdefghijklmnopqrstuvwxyz\nflood 00".as_slice());
        let long = collect(100_000);
        let last_full_line = 100_000 / 42;
        let expected = format!("flood {last_full_line:08} {LETTERS}\n");
        let end_of_full_lines = last_full_line * 42;
        assert_eq!(&long[end_of_full_lines - 42..end_of_full_lines], expected.as_bytes());
    }
}
