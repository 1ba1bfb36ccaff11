//! The order of a pane's input.
//!
//! Requests that write to a pane (`send`, the text of an `ask`, the keys of
//! an `interrupt`) may wait before and while they write: for the program
//! to take its input, for the echo of a prompt to settle before its Enter.
//! Requests on one connection run concurrently, so order is kept here: a
//! request takes its place in the pane's line when the host reads it
//! ([`InputLine::join`], which does not wait), and writes once every
//! request ahead of it has finished writing ([`InputPlace::wait`]). Input
//! therefore reaches the program in the order the host read the requests,
//! from one connection or many, and never interleaved; what a request does
//! after its input (an `ask` waiting for the end of its turn) does not hold
//! up the line.

use std::sync::{Arc, Mutex};
use tokio::sync::{oneshot, OwnedMutexGuard};

/// A pane's line of writers.
#[derive(Debug, Default)]
pub(super) struct InputLine {
    /// Done once the last request in line has finished writing (or given
    /// up its place).
    last: Mutex<Option<oneshot::Receiver<()>>>,
    /// Held by the request that writes. The line alone would let a request
    /// in while the one two places ahead still writes, when the one between
    /// them gave up its place (its request was cancelled while it waited).
    writing: Arc<tokio::sync::Mutex<()>>,
}

/// A place in a pane's line, taken when the request was read.
#[derive(Debug)]
pub struct InputPlace {
    ahead: Option<oneshot::Receiver<()>>,
    done: oneshot::Sender<()>,
    writing: Arc<tokio::sync::Mutex<()>>,
}

/// The right to write to the pane, until dropped; the next request in line
/// writes after that.
#[derive(Debug)]
pub struct InputTurn {
    // Fields drop in order: the lock is released before the next in line
    // is told to go.
    _writing: OwnedMutexGuard<()>,
    _done: oneshot::Sender<()>,
}

impl InputLine {
    /// Takes the last place in line. Never waits.
    pub(super) fn join(&self) -> InputPlace {
        let (done, finished) = oneshot::channel();
        let ahead = self.last.lock().unwrap_or_else(|poisoned| poisoned.into_inner()).replace(finished);
        InputPlace { ahead, done, writing: Arc::clone(&self.writing) }
    }
}

impl InputPlace {
    /// Waits until every request ahead has finished writing.
    pub async fn wait(self) -> InputTurn {
        if let Some(ahead) = self.ahead {
            // An error is a place given up: that request is gone.
            let _ = ahead.await;
        }
        InputTurn { _writing: self.writing.lock_owned().await, _done: self.done }
    }
}

#[cfg(test)]
mod tests {
    use super::InputLine;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    #[tokio::test]
    async fn writers_go_in_the_order_they_joined_whatever_order_they_wait_in() {
        let line = InputLine::default();
        let order = Arc::new(Mutex::new(Vec::new()));
        let places: Vec<_> = (0..5).map(|_| line.join()).collect();
        let mut tasks = Vec::new();
        // Started last to first: each still writes after those ahead.
        for (index, place) in places.into_iter().enumerate().rev() {
            let order = Arc::clone(&order);
            tasks.push(tokio::spawn(async move {
                let _turn = place.wait().await;
                order.lock().unwrap().push(index);
                tokio::task::yield_now().await;
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        assert_eq!(*order.lock().unwrap(), [0, 1, 2, 3, 4]);
    }

    #[tokio::test]
    async fn a_place_given_up_lets_the_next_go_only_after_the_one_writing() {
        let line = InputLine::default();
        let first = line.join().wait().await;
        let given_up = line.join();
        let third = line.join();
        let third = tokio::spawn(async move {
            let _turn = third.wait().await;
        });
        drop(given_up);
        // The test runs on one thread: yielding lets the third run until
        // it waits. It must not get in while the first still writes.
        for _ in 0..10 {
            tokio::task::yield_now().await;
        }
        assert!(!third.is_finished(), "the third wrote beside the first");
        drop(first);
        tokio::time::timeout(Duration::from_secs(5), third).await.expect("the third never wrote").unwrap();
    }
}
