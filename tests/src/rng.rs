//! A small seeded random number generator (SplitMix64), so that a run of
//! the soak or the schedule explorer is described by its seed, the same
//! seed gives the same run, and every task draws from a stream of its own.

/// A SplitMix64 generator.
#[derive(Debug, Clone)]
pub struct Rng {
    state: u64,
}

impl Rng {
    /// A generator for `seed`, mixed with `stream` so that tasks sharing a
    /// seed draw different numbers.
    pub fn new(seed: u64, stream: u64) -> Rng {
        let mut rng = Rng { state: seed ^ stream.wrapping_mul(0xA076_1D64_78BD_642F) };
        // Discard the first output: nearby seeds give nearby first values.
        rng.next_u64();
        rng
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `low..=high`.
    pub fn range(&mut self, low: u64, high: u64) -> u64 {
        let span = high.saturating_sub(low);
        if span == u64::MAX {
            return self.next_u64();
        }
        low + self.next_u64() % (span + 1)
    }

    /// True with probability `percent` / 100.
    pub fn percent(&mut self, percent: u64) -> bool {
        self.range(0, 99) < percent
    }

    /// An index into a slice of `len` elements (0 when `len` is 0).
    pub fn index(&mut self, len: usize) -> usize {
        self.range(0, (len as u64).saturating_sub(1)) as usize
    }

    /// Picks an index by weight: index `i` with probability
    /// `weights[i]` / sum.
    pub fn weighted(&mut self, weights: &[u32]) -> usize {
        let total: u64 = weights.iter().map(|w| u64::from(*w)).sum();
        let mut pick = self.range(0, total.saturating_sub(1));
        for (index, weight) in weights.iter().enumerate() {
            if pick < u64::from(*weight) {
                return index;
            }
            pick -= u64::from(*weight);
        }
        weights.len() - 1
    }

    /// `len` random bytes.
    pub fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len).map(|_| self.next_u64() as u8).collect()
    }

    /// A word of `len` lowercase letters drawn from `alphabet`.
    pub fn word(&mut self, alphabet: &[u8], len: usize) -> String {
        (0..len).map(|_| alphabet[self.index(alphabet.len())] as char).collect()
    }
}
