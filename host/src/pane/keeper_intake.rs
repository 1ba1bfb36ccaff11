//! The keepers that take new panes, and which start asks which of them.
//!
//! A keeper reads one pane request at a time on its stdin and answers it
//! on its stdout, so a keeper is asked by one start at a time. A start
//! takes a [`Turn`]: a keeper that takes panes and that no other start is
//! asking (the one given back last, so that panes started one after
//! another fill one keeper before the next), or, when every such keeper
//! is being asked and fewer than the intake's lanes are open, the right to
//! start a new one. The intake's lock is held only to take a keeper or
//! give one back: a keeper is started and asked outside it, so a keeper
//! that is slow to answer holds up the start that asks it and no other,
//! as long as a lane is free. When every lane is being asked, a start
//! waits for the first turn to end; each turn is bounded by the keeper's
//! answer timeout.
//!
//! Generic over the keeper, so that its rules are tested without
//! processes.

use std::sync::{Condvar, Mutex, MutexGuard};

/// Keepers taking panes, at most `lanes` of them at once.
#[derive(Debug)]
pub(crate) struct Intake<K> {
    state: Mutex<State<K>>,
    /// Signalled when a turn ends (a keeper given back, or a lane freed).
    turn_ended: Condvar,
    lanes: usize,
}

#[derive(Debug)]
struct State<K> {
    /// Keepers that take panes and that no start is asking, the one given
    /// back last at the end.
    idle: Vec<K>,
    /// Turns taken and not ended: keepers being asked (or started).
    taken: usize,
}

/// One start's turn at a keeper: the keeper it was given, if one was
/// idle, else the right to start one. Dropping it without
/// [`Turn::give_back`] frees its lane (the keeper it asked is full, or
/// stopped answering).
#[derive(Debug)]
pub(crate) struct Turn<'a, K> {
    intake: &'a Intake<K>,
    keeper: Option<K>,
}

impl<K> Intake<K> {
    /// An intake of at most `lanes` keepers taking panes at once (at
    /// least one).
    pub(crate) fn new(lanes: usize) -> Self {
        Intake {
            state: Mutex::new(State { idle: Vec::new(), taken: 0 }),
            turn_ended: Condvar::new(),
            lanes: lanes.max(1),
        }
    }

    /// Takes a turn: an idle keeper, or a lane to start one in; waits for
    /// a turn to end when every lane is taken.
    pub(crate) fn turn(&self) -> Turn<'_, K> {
        let mut state = self.lock();
        loop {
            if let Some(keeper) = state.idle.pop() {
                state.taken += 1;
                return Turn { intake: self, keeper: Some(keeper) };
            }
            if state.taken + state.idle.len() < self.lanes {
                state.taken += 1;
                return Turn { intake: self, keeper: None };
            }
            tracing::debug!(lanes = self.lanes, "every keeper taking panes is being asked; waiting for a turn");
            state = self.turn_ended.wait(state).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// How many keepers take panes now (idle or being asked).
    #[cfg(test)]
    fn open(&self) -> usize {
        let state = self.lock();
        state.taken + state.idle.len()
    }

    fn lock(&self) -> MutexGuard<'_, State<K>> {
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl<K> Turn<'_, K> {
    /// The keeper this turn was given, if one was idle (taken out: a
    /// keeper given back goes through [`Turn::give_back`]).
    pub(crate) fn take_keeper(&mut self) -> Option<K> {
        self.keeper.take()
    }

    /// Ends the turn, leaving `keeper` to take the next start's pane.
    pub(crate) fn give_back(mut self, keeper: K) {
        self.keeper = Some(keeper);
    }
}

impl<K> Drop for Turn<'_, K> {
    fn drop(&mut self) {
        let mut state = self.intake.lock();
        state.taken -= 1;
        if let Some(keeper) = self.keeper.take() {
            state.idle.push(keeper);
        }
        drop(state);
        self.intake.turn_ended.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;
    use std::time::Duration;

    #[test]
    fn a_turn_held_leaves_the_next_start_a_lane_of_its_own() {
        let intake: Intake<&str> = Intake::new(2);
        let mut slow = intake.turn();
        assert_eq!(slow.take_keeper(), None, "no keeper yet: this start starts one");
        // While the first is being asked, the next start is not held up.
        let mut next = intake.turn();
        assert_eq!(next.take_keeper(), None);
        next.give_back("second");
        slow.give_back("first");
        assert_eq!(intake.open(), 2);
    }

    #[test]
    fn keepers_are_reused_last_given_back_first_and_a_full_one_frees_its_lane() {
        let intake: Intake<u32> = Intake::new(4);
        intake.turn().give_back(1);
        let mut turn = intake.turn();
        assert_eq!(turn.take_keeper(), Some(1), "one after another, one keeper");
        turn.give_back(1);
        let (mut a, mut b) = (intake.turn(), intake.turn());
        assert_eq!((a.take_keeper(), b.take_keeper()), (Some(1), None));
        a.give_back(1);
        b.give_back(2);
        assert_eq!(intake.turn().take_keeper(), Some(2));
        // A keeper not given back (full, or lost) is no longer open.
        assert_eq!(intake.open(), 1);
    }

    #[test]
    fn when_every_lane_is_asked_a_start_waits_for_a_turn_to_end() {
        let intake: Intake<u32> = Intake::new(1);
        let mut held = intake.turn();
        assert_eq!(held.take_keeper(), None);
        let (sent, received) = mpsc::channel();
        std::thread::scope(|scope| {
            scope.spawn(|| {
                let mut turn = intake.turn();
                sent.send(turn.take_keeper()).unwrap();
            });
            // The waiting start has no turn while the lane is held...
            assert_eq!(received.recv_timeout(Duration::from_millis(50)), Err(mpsc::RecvTimeoutError::Timeout));
            // ...and is given the keeper once it comes back.
            held.give_back(7);
            assert_eq!(received.recv_timeout(Duration::from_secs(10)), Ok(Some(7)));
        });
    }
}
