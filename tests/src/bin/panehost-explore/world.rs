//! What the tasks of one schedule share: the host's life, what the
//! explorer believes about each pane (its slot, its life, the commands
//! typed into it and what each should have printed), the failures, the
//! counts, and the stop signal.

use crate::command::CommandSpec;
use crate::follow::SharedRecord;
use crate::life::HostLife;
use panehost_ipc::PaneId;
use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard};
use tokio::sync::watch;

/// A pane's life as the explorer knows it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Life {
    /// Started (its start was answered) and not closed.
    Alive,
    /// A close was sent; it may be answered or lost.
    Closing,
    /// Its close was answered.
    Closed,
    /// A restarted host did not bring it back, or said it ended.
    Gone,
}

/// How many times a command's markers must appear in the pane's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Exactly once (its begin marker, and its end marker after it).
    Once,
    /// Once or not at all (an interrupt or a kill came between).
    AtMostOnce,
    /// Never (the host refused to type it).
    Never,
}

/// A command typed into a pane.
#[derive(Debug, Clone)]
pub struct Typed {
    /// The command.
    pub spec: CommandSpec,
    /// What its markers must do.
    pub expect: Expect,
    /// `ask` or `send`.
    pub how: &'static str,
    /// Known to have run to its end (its `ask` was answered with it).
    pub done: bool,
    /// Host kills before it was typed.
    pub epoch: u64,
    /// An earlier command may have been reading a line when this was
    /// typed, and may have taken this line as its answer.
    pub may_be_read: bool,
}

/// One pane the explorer started.
#[derive(Debug)]
pub struct PaneEntry {
    /// The slot it was started in.
    pub slot: usize,
    /// Its process id when started.
    pub pid: u32,
    /// Its generation as last seen.
    pub generation: u64,
    /// Its life.
    pub life: Life,
    /// Its keeper was killed, or may have been (one killed while its
    /// start ran).
    pub keeper_lost: bool,
    /// A restarted host brought it back as a new process.
    pub replaced: bool,
    /// A turn may be open (a command typed with `send`, an ask lost or
    /// answered wrongly, an interrupt): `TURN_IN_PROGRESS` is documented.
    pub turn_maybe_open: bool,
    /// The commands typed into it, in order.
    pub commands: Vec<Typed>,
    /// Its follower's record.
    pub record: SharedRecord,
}

impl PaneEntry {
    /// True when the pane may have gone without the explorer closing it:
    /// its keeper was killed (its process may be gone), or a close was sent.
    pub fn may_be_gone(&self) -> bool {
        self.keeper_lost || self.life != Life::Alive
    }

    /// Whether a command typed now may be read as a line by an earlier
    /// command that reads one: the last such command has not been seen to
    /// end (its end marker, or any marker of a command typed after it, in
    /// the follower's output).
    pub fn may_be_reading(&self) -> bool {
        let Some(last) =
            self.commands.iter().rposition(|typed| typed.spec.reads_ms > 0 && typed.expect != Expect::Never)
        else {
            return false;
        };
        let seen = crate::command::markers(&crate::world::lock(&self.record).all_bytes());
        let reader = self.commands[last].spec.id;
        let later: Vec<u64> = self.commands[last + 1..].iter().map(|typed| typed.spec.id).collect();
        !seen.iter().any(|(id, mark)| (*id == reader && *mark == crate::command::Mark::End) || later.contains(id))
    }

    /// Every command typed so far may not have run to its end.
    pub fn weaken_commands(&mut self) {
        for typed in &mut self.commands {
            if typed.expect == Expect::Once && !typed.done {
                typed.expect = Expect::AtMostOnce;
            }
        }
    }
}

/// What the explorer believes about its panes.
#[derive(Debug, Default)]
pub struct Book {
    /// The pane in each slot now.
    pub slots: Vec<Option<PaneId>>,
    /// Every pane started, by id.
    pub panes: BTreeMap<PaneId, PaneEntry>,
    /// Starts whose answer was lost to a kill: the pane may exist.
    pub lost_starts: u64,
    /// Panes a host listed that the explorer did not start (from lost
    /// starts): closed at the end.
    pub strays: Vec<PaneId>,
}

/// One failed check.
#[derive(Debug, Clone)]
pub struct Failure {
    /// What kind of check.
    pub check: String,
    /// What was seen.
    pub detail: String,
}

/// Shared by every task of a schedule.
#[derive(Debug)]
pub struct World {
    /// The host's life.
    pub life: HostLife,
    book: Mutex<Book>,
    failures: Mutex<Vec<Failure>>,
    counts: Mutex<BTreeMap<String, u64>>,
    /// What `events` operations received: `(pane, offset, bytes)`.
    pub observed: Mutex<Vec<(PaneId, u64, Vec<u8>)>>,
    stop: watch::Sender<bool>,
    /// The followers' tasks.
    pub followers: Mutex<Vec<tokio::task::JoinHandle<()>>>,
    /// Starts sent and not answered yet, and starts sent in all.
    pub starts: Mutex<(u64, u64)>,
    /// Keepers killed so far: a start answered after a keeper was killed
    /// while it ran may have been given that keeper.
    pub keeper_kills: std::sync::atomic::AtomicU64,
    /// When the schedule began.
    pub began: std::time::Instant,
    /// Print each operation and its answer as it happens.
    pub verbose: bool,
}

impl World {
    /// A world for `panes` slots on the host at `life`.
    pub fn new(life: HostLife, panes: usize, verbose: bool) -> World {
        World {
            life,
            book: Mutex::new(Book { slots: vec![None; panes], ..Book::default() }),
            failures: Mutex::new(Vec::new()),
            counts: Mutex::new(BTreeMap::new()),
            observed: Mutex::new(Vec::new()),
            stop: watch::Sender::new(false),
            followers: Mutex::new(Vec::new()),
            starts: Mutex::new((0, 0)),
            keeper_kills: std::sync::atomic::AtomicU64::new(0),
            began: std::time::Instant::now(),
            verbose,
        }
    }

    /// The book, locked.
    pub fn book(&self) -> MutexGuard<'_, Book> {
        lock(&self.book)
    }

    /// Records a failed check (and prints it).
    pub fn fail(&self, check: &str, detail: impl Into<String>) {
        let detail = detail.into();
        eprintln!("[explore]   {:>6} ms FAILED {check}: {detail}", self.began.elapsed().as_millis());
        lock(&self.failures).push(Failure { check: check.to_owned(), detail });
    }

    /// The failures so far.
    pub fn failures(&self) -> Vec<Failure> {
        lock(&self.failures).clone()
    }

    /// Adds `n` to a count.
    pub fn count(&self, what: &str, n: u64) {
        *lock(&self.counts).entry(what.to_owned()).or_default() += n;
    }

    /// Every count.
    pub fn counts(&self) -> BTreeMap<String, u64> {
        lock(&self.counts).clone()
    }

    /// Tells the followers and the watcher to stop.
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// True once told to stop.
    pub fn stopping(&self) -> bool {
        *self.stop.borrow()
    }

    /// Resolves once told to stop.
    pub async fn stopped(&self) {
        let mut stop = self.stop.subscribe();
        let _ = stop.wait_for(|stop| *stop).await;
    }
}

/// Locks a mutex, whatever a panicked holder left.
pub fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}
