//! How much output one step of the terminal model is offered.
//!
//! A step stops once its time is up (see `screen.rs`, `feed`), so what
//! costs more per byte is parsed in several steps. The bytes offered
//! follow what the steps before parsed in their time: a step cut short
//! offers the next about what it parsed, a full and fast one lets the next
//! grow (up to [`PARSE_CHUNK`]). Offering much more than a step parses
//! would cost each step a copy and a scan of the whole offer.

use crate::limits::{PARSE_CHUNK, PARSE_CHUNK_LEAST, PARSE_STEP_TIME};
use std::time::Duration;

/// The size of the next parse step's offer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct ParseBudget {
    bytes: usize,
}

impl ParseBudget {
    pub(super) fn new() -> Self {
        ParseBudget { bytes: PARSE_CHUNK }
    }

    /// How many bytes the next step is offered.
    pub(super) fn bytes(&self) -> usize {
        self.bytes
    }

    /// A step parsed `parsed` of the `offered` bytes in `took`; `cut`: it
    /// stopped because its time was up.
    pub(super) fn took(&mut self, parsed: usize, offered: usize, took: Duration, cut: bool) {
        if cut {
            self.bytes = parsed.clamp(PARSE_CHUNK_LEAST, PARSE_CHUNK);
        } else if offered >= self.bytes && took * 2 <= PARSE_STEP_TIME {
            self.bytes = (self.bytes * 2).min(PARSE_CHUNK);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::ParseBudget;
    use crate::limits::{PARSE_CHUNK, PARSE_CHUNK_LEAST, PARSE_STEP_TIME};
    use std::time::Duration;

    #[test]
    fn a_step_cut_short_offers_the_next_what_it_parsed_and_fast_ones_grow_it_back() {
        let mut budget = ParseBudget::new();
        assert_eq!(budget.bytes(), PARSE_CHUNK);
        budget.took(3000, PARSE_CHUNK, PARSE_STEP_TIME, true);
        assert_eq!(budget.bytes(), 3000);
        budget.took(1, 3000, PARSE_STEP_TIME * 10, true);
        assert_eq!(budget.bytes(), PARSE_CHUNK_LEAST, "at least a few sequences");
        // A full step that fits, but not by half, keeps the offer.
        budget.took(PARSE_CHUNK_LEAST, PARSE_CHUNK_LEAST, PARSE_STEP_TIME * 3 / 4, false);
        assert_eq!(budget.bytes(), PARSE_CHUNK_LEAST);
        for _ in 0..16 {
            let offered = budget.bytes();
            budget.took(offered, offered, Duration::from_micros(5), false);
        }
        assert_eq!(budget.bytes(), PARSE_CHUNK);
        // A short read (all there was) is no reason to change it.
        budget.took(100, 100, Duration::from_micros(1), false);
        assert_eq!(budget.bytes(), PARSE_CHUNK);
    }
}
