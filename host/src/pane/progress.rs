//! What a pane has done so far, and how its tasks wait for it to change.
//!
//! The progress lives in a watch channel, whose lock is held while a value
//! is read or written. Code run under that lock that takes another of the
//! pane's locks (its turns, say) deadlocks the pane against a writer that
//! holds that lock and updates the progress. So the channel is reachable
//! only through the two types here, and neither runs any code of its caller
//! under the lock:
//!
//! - [`ProgressCell`], the pane's own side, changes the progress with
//!   setters (no caller closure runs under the write lock);
//! - [`ProgressWatch`], a task's side, hands out copies: a predicate given
//!   to [`ProgressWatch::until`] runs on a copy, with no lock held, and may
//!   take any lock.
//!
//! The watch's lock is therefore a leaf: nothing is ever locked while it is
//! held, and no order with the pane's other locks has to be kept by hand.

use panehost_ipc::{ExitStatus, Size};
use tokio::sync::watch;

/// What a pane has done so far; watchers wake on every change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Progress {
    /// Offset one past the newest output byte.
    pub end: u64,
    /// The terminal size.
    pub size: Size,
    /// Set once the process has exited and its output has drained.
    pub exit: Option<ExitStatus>,
    /// Set when the pane has been closed and forgotten.
    pub closed: bool,
    /// Set when a close (a `close` request, the wall-time limit, the host's
    /// shutdown) has begun: the exit that follows is the close's.
    pub closing: bool,
    /// How many turn signals have been recorded (the next one's sequence
    /// number).
    pub signals: u64,
    /// Whether the program is ready to read a submission, as far as its
    /// completion signal tells (a shell with prompt marks: once it drew
    /// its first prompt).
    pub ready_for_input: bool,
    /// How many prompts a shell with prompt marks has drawn (its `D`
    /// marks), so that a wait can see the next one.
    pub prompts: u64,
    /// How many commands a shell with prompt marks has started (its `C`
    /// marks), counted once the pane's turns know of them.
    pub commands_started: u64,
    /// A shell with prompt marks has drawn its prompt (its `B` mark) since
    /// its last command started or ended: its line editor reads, and has
    /// taken over its signals (a Ctrl-C before that is acted on only when
    /// it reads, and takes a byte of the next input with it).
    pub line_editor_reading: bool,
}

impl Progress {
    /// A pane that has shown nothing yet, from offset `end`, ready to
    /// read a submission or not.
    pub fn new(end: u64, size: Size, ready_for_input: bool) -> Progress {
        Progress {
            end,
            size,
            exit: None,
            closed: false,
            closing: false,
            signals: 0,
            ready_for_input,
            prompts: 0,
            commands_started: 0,
            line_editor_reading: false,
        }
    }

    /// The process has exited or the pane is closed: nothing more happens.
    pub fn over(&self) -> bool {
        self.closed || self.exit.is_some()
    }
}

/// The pane is gone: its progress will not change again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PaneGone;

/// The pane's side of its progress: read, changed by setters, watched.
#[derive(Debug)]
pub(super) struct ProgressCell {
    sender: watch::Sender<Progress>,
}

impl ProgressCell {
    /// A cell holding `initial`.
    pub(super) fn new(initial: Progress) -> ProgressCell {
        ProgressCell { sender: watch::Sender::new(initial) }
    }

    /// A copy of the progress now.
    pub(super) fn get(&self) -> Progress {
        self.sender.borrow().clone()
    }

    /// The output's end now.
    pub(super) fn end(&self) -> u64 {
        self.sender.borrow().end
    }

    /// Whether the pane is closed.
    pub(super) fn closed(&self) -> bool {
        self.sender.borrow().closed
    }

    /// A watch that wakes on every change from now on.
    pub(super) fn watch(&self) -> ProgressWatch {
        ProgressWatch { receiver: self.sender.subscribe() }
    }

    /// The output now ends at `end`.
    pub(super) fn set_end(&self, end: u64) {
        self.sender.send_modify(|progress| progress.end = end);
    }

    /// The terminal is now `size`.
    pub(super) fn set_size(&self, size: Size) {
        self.sender.send_modify(|progress| progress.size = size);
    }

    /// The process exited with `status` (its output has drained).
    pub(super) fn set_exit(&self, status: ExitStatus) {
        self.sender.send_modify(|progress| progress.exit = Some(status));
    }

    /// `count` turn signals have been recorded.
    pub(super) fn set_signals(&self, count: u64) {
        self.sender.send_modify(|progress| progress.signals = count);
    }

    /// The program is ready to read a submission; watchers wake only the
    /// first time.
    pub(super) fn mark_ready_for_input(&self) {
        self.sender.send_if_modified(|progress| !std::mem::replace(&mut progress.ready_for_input, true));
    }

    /// A shell drew `count` more prompts.
    pub(super) fn add_prompts(&self, count: u64) {
        self.sender.send_modify(|progress| progress.prompts += count);
    }

    /// Whether a shell's line editor reads (see
    /// [`Progress::line_editor_reading`]); watchers wake on a change only.
    pub(super) fn set_line_editor_reading(&self, reading: bool) {
        self.sender
            .send_if_modified(|progress| std::mem::replace(&mut progress.line_editor_reading, reading) != reading);
    }

    /// A shell started `count` more commands.
    pub(super) fn add_commands_started(&self, count: u64) {
        self.sender.send_modify(|progress| progress.commands_started += count);
    }

    /// A close has begun; watchers wake only the first time.
    pub(super) fn mark_closing(&self) {
        self.sender.send_if_modified(|progress| !std::mem::replace(&mut progress.closing, true));
    }

    /// The pane is closed and forgotten.
    pub(super) fn mark_closed(&self) {
        self.sender.send_modify(|progress| progress.closed = true);
    }

    /// Wakes every watcher without a change (something they wait for
    /// besides the progress happened).
    pub(super) fn wake(&self) {
        self.sender.send_modify(|_| {});
    }
}

/// A task's view of a pane's progress: copies, and waits for changes.
#[derive(Debug, Clone)]
pub struct ProgressWatch {
    receiver: watch::Receiver<Progress>,
}

impl ProgressWatch {
    /// A copy of the progress now, leaving it unseen: [`Self::changed`]
    /// still wakes at once if it changed since the last [`Self::latest`].
    pub fn peek(&self) -> Progress {
        self.receiver.borrow().clone()
    }

    /// A copy of the progress now, marked seen: [`Self::changed`] waits for
    /// the next change.
    pub fn latest(&mut self) -> Progress {
        self.receiver.borrow_and_update().clone()
    }

    /// Marks the progress now as seen: [`Self::changed`] waits for the
    /// next change.
    pub fn mark_seen(&mut self) {
        self.receiver.borrow_and_update();
    }

    /// Waits for a change not yet seen (it is marked seen by the next
    /// [`Self::latest`]).
    ///
    /// # Errors
    /// [`PaneGone`] once the pane is gone.
    pub async fn changed(&mut self) -> Result<(), PaneGone> {
        self.receiver.changed().await.map_err(|_| PaneGone)
    }

    /// Waits until `done` holds for the progress (now or after a change)
    /// and returns that progress. `done` runs on a copy, with no lock held.
    ///
    /// # Errors
    /// [`PaneGone`] once the pane is gone without `done` holding.
    pub async fn until(&mut self, mut done: impl FnMut(&Progress) -> bool) -> Result<Progress, PaneGone> {
        loop {
            let progress = self.latest();
            if done(&progress) {
                return Ok(progress);
            }
            self.changed().await?;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{PaneGone, Progress, ProgressCell};
    use panehost_ipc::Size;
    use std::sync::{Arc, Mutex};
    use std::time::Duration;

    fn cell() -> ProgressCell {
        ProgressCell::new(Progress::new(0, Size { cols: 80, rows: 24 }, true))
    }

    /// A predicate may take a lock that a writer holds while it updates the
    /// progress: the predicate runs on a copy, so neither waits for the
    /// other. (With the channel's own `wait_for`, whose predicate runs under
    /// the channel's lock, this test hung in one run of three.)
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_predicate_may_take_a_lock_that_a_writer_holds() {
        let cell = Arc::new(cell());
        let turns = Arc::new(Mutex::new(0u64));
        let mut watch = cell.watch();
        let waiter = {
            let turns = Arc::clone(&turns);
            tokio::spawn(
                async move { watch.until(|progress| *turns.lock().unwrap() >= 1000 && progress.end >= 1000).await },
            )
        };
        let writer = {
            let (cell, turns) = (Arc::clone(&cell), Arc::clone(&turns));
            tokio::task::spawn_blocking(move || {
                for end in 1..=1000 {
                    let mut held = turns.lock().unwrap();
                    *held = end;
                    cell.set_end(end);
                }
            })
        };
        writer.await.unwrap();
        let reached = tokio::time::timeout(Duration::from_secs(20), waiter).await.expect("no deadlock").unwrap();
        assert_eq!(reached.map(|progress| progress.end), Ok(1000));
    }

    #[tokio::test]
    async fn changes_are_seen_once_and_a_gone_pane_ends_the_wait() {
        let cell = cell();
        let mut watch = cell.watch();
        cell.set_size(Size { cols: 100, rows: 30 });
        assert_eq!(watch.peek().size.cols, 100);
        // peek leaves it unseen; latest marks it.
        watch.changed().await.unwrap();
        assert_eq!(watch.latest().size.cols, 100);
        cell.mark_closing();
        watch.changed().await.unwrap();
        assert!(watch.latest().closing);
        // A second mark changes nothing and wakes no one.
        cell.mark_closing();
        assert!(tokio::time::timeout(Duration::from_millis(50), watch.changed()).await.is_err());
        drop(cell);
        assert_eq!(watch.changed().await, Err(PaneGone));
        assert_eq!(watch.until(|progress| progress.closed).await, Err(PaneGone));
    }
}
