//! The host-wide budget of memory for large answers.
//!
//! An answer that may be large (a screen from `inspect`, lines re-parsed by
//! `history`) takes its estimated cost from one budget the whole host
//! shares before it is built, and gives it back once its frame has been
//! written to the socket. A connection that sends many such requests and
//! reads nothing holds the budget, not the machine's memory: while the
//! budget is spent, a request waits its turn for at most
//! [`ANSWER_BUDGET_WAIT`], then is answered `BUSY`. Small answers take
//! nothing from it.

use crate::limits::{ANSWER_BUDGET_UNIT, ANSWER_BUDGET_WAIT, SCREEN_CELL_BYTES};
use crate::memory_trim;
use crate::pane::history;
use panehost_ipc::{ErrorBody, ErrorCode, Size, MAX_SNAPSHOT_FORMATTED_LEN, MAX_SNAPSHOT_TEXT_LEN};
use std::sync::Arc;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// The budget (see the module's documentation).
#[derive(Debug)]
pub(crate) struct AnswerBudget {
    units: Arc<Semaphore>,
    /// How many units it holds in all.
    total: u32,
}

/// A part of the budget, held while an answer is built and written.
#[derive(Debug)]
pub(crate) struct AnswerPermit {
    _units: OwnedSemaphorePermit,
}

impl Drop for AnswerPermit {
    fn drop(&mut self) {
        // A large answer's memory is free now: have it handed back to the
        // system (one trim for many answers).
        memory_trim::request();
    }
}

impl AnswerBudget {
    /// A budget of `bytes` (at least one unit).
    pub(crate) fn new(bytes: usize) -> AnswerBudget {
        let total = u32::try_from(bytes.div_ceil(ANSWER_BUDGET_UNIT)).unwrap_or(u32::MAX).clamp(1, MAX_UNITS);
        AnswerBudget { units: Arc::new(Semaphore::new(total as usize)), total }
    }

    /// Takes `bytes` from the budget (all of it, for an answer larger than
    /// the budget), waiting for at most [`ANSWER_BUDGET_WAIT`].
    ///
    /// # Errors
    /// `BUSY` when the budget stayed spent for that long.
    pub(crate) async fn take(&self, bytes: usize) -> Result<AnswerPermit, ErrorBody> {
        let units = u32::try_from(bytes.div_ceil(ANSWER_BUDGET_UNIT)).unwrap_or(u32::MAX).clamp(1, self.total);
        match tokio::time::timeout(ANSWER_BUDGET_WAIT, Arc::clone(&self.units).acquire_many_owned(units)).await {
            Ok(Ok(units)) => Ok(AnswerPermit { _units: units }),
            _ => Err(busy(bytes, self.total)),
        }
    }
}

/// The most units a budget holds (a semaphore's limit is far above it).
const MAX_UNITS: u32 = 1 << 24;

fn busy(bytes: usize, total: u32) -> ErrorBody {
    let budget_mib = u64::from(total) * ANSWER_BUDGET_UNIT as u64 / (1024 * 1024);
    ErrorBody::new(
        ErrorCode::Busy,
        format!(
            "the host's {budget_mib} MiB for answers being built or written has been spent for {} s by other \
             requests (this answer needs about {} KiB); read the answers already asked for, or ask again later",
            ANSWER_BUDGET_WAIT.as_secs(),
            bytes / 1024
        ),
    )
}

/// What an `inspect` of a pane of `size` may cost: its snapshot (held to
/// the snapshot bounds) and the frame it is encoded into.
pub(crate) fn inspect_cost(size: Size) -> usize {
    let cells = usize::from(size.cols) * usize::from(size.rows);
    let snapshot = (cells * 16).min(MAX_SNAPSHOT_FORMATTED_LEN) + (cells * 4).min(MAX_SNAPSHOT_TEXT_LEN);
    // The frame: base64 of the formatted bytes, the text escaped.
    2 * snapshot + 64 * 1024
}

/// What a `history` of `lines` lines of a pane of `size` whose ring holds
/// `held` bytes may cost: the copy of the output, the scratch model that
/// re-parses it, and the text with its frame.
pub(crate) fn history_cost(size: Size, held: usize, lines: usize) -> usize {
    let cols = usize::from(size.cols);
    let kept = history::line_limit(size, lines) + usize::from(size.rows);
    let model = kept * cols * SCREEN_CELL_BYTES;
    let text = kept * cols * 4;
    held + model + 2 * text + 64 * 1024
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_spent_budget_makes_a_request_wait_then_busy() {
        let budget = AnswerBudget::new(4 * ANSWER_BUDGET_UNIT);
        let held = budget.take(3 * ANSWER_BUDGET_UNIT).await.unwrap();
        let small = budget.take(1).await.unwrap();
        // Nothing left: the next waits, then is told BUSY.
        let refused = budget.take(ANSWER_BUDGET_UNIT).await.unwrap_err();
        assert_eq!(refused.code, ErrorCode::Busy.as_str());
        // Given back when the answers are written: the next is served.
        drop(held);
        drop(small);
        assert!(budget.take(4 * ANSWER_BUDGET_UNIT).await.is_ok());
    }

    #[tokio::test(start_paused = true)]
    async fn an_answer_larger_than_the_budget_takes_all_of_it_and_one_waits_for_the_other() {
        let budget = Arc::new(AnswerBudget::new(2 * ANSWER_BUDGET_UNIT));
        let whole = budget.take(usize::MAX).await.unwrap();
        let waiting = tokio::spawn({
            let budget = Arc::clone(&budget);
            async move { budget.take(ANSWER_BUDGET_UNIT).await.is_ok() }
        });
        tokio::task::yield_now().await;
        drop(whole);
        assert!(waiting.await.unwrap(), "served once the other was written");
    }

    #[test]
    fn the_smallest_and_the_largest_budgets_hold_at_least_one_unit() {
        assert_eq!(AnswerBudget::new(0).total, 1);
        assert_eq!(AnswerBudget::new(1).total, 1);
        assert_eq!(AnswerBudget::new(usize::MAX).total, MAX_UNITS);
    }

    #[test]
    fn costs_grow_with_the_pane_and_stay_bounded() {
        let small = Size { cols: 80, rows: 24 };
        let big = Size { cols: 1000, rows: 250 };
        assert!(inspect_cost(small) < inspect_cost(big));
        assert!(inspect_cost(big) <= 2 * (MAX_SNAPSHOT_FORMATTED_LEN + MAX_SNAPSHOT_TEXT_LEN) + 64 * 1024);
        assert!(history_cost(small, 0, 10) < history_cost(big, 4 << 20, 1_000_000));
        assert!(history_cost(big, 4 << 20, usize::MAX) < 64 << 20, "{}", history_cost(big, 4 << 20, usize::MAX));
    }
}
