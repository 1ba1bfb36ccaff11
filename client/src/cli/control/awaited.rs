//! The ids of requests sent to the host and not answered yet. An id may be
//! in flight more than once (the protocol asks clients not to, but a
//! client may): each is counted, and each answer takes one.

use std::collections::HashMap;

/// Requests awaiting their answers, by id.
#[derive(Debug, Default)]
pub(super) struct Awaited {
    counts: HashMap<u64, usize>,
}

impl Awaited {
    /// A request with `id` was sent.
    pub(super) fn sent(&mut self, id: u64) {
        *self.counts.entry(id).or_default() += 1;
    }

    /// An answer to `id` came; one that nothing awaited is ignored.
    pub(super) fn answered(&mut self, id: u64) {
        if let Some(count) = self.counts.get_mut(&id) {
            *count -= 1;
            if *count == 0 {
                self.counts.remove(&id);
            }
        }
    }

    /// True when every request sent has been answered.
    pub(super) fn is_empty(&self) -> bool {
        self.counts.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_request_takes_one_answer() {
        let mut awaited = Awaited::default();
        assert!(awaited.is_empty());
        awaited.sent(1);
        awaited.sent(1);
        awaited.sent(2);
        awaited.answered(1);
        awaited.answered(2);
        assert!(!awaited.is_empty(), "the second request with id 1 is still due");
        awaited.answered(7);
        awaited.answered(1);
        assert!(awaited.is_empty());
        awaited.answered(1);
        assert!(awaited.is_empty());
    }
}
