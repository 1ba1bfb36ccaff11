//! A pane: a process in a PTY, its output ring and its terminal model.
//!
//! A pane knows nothing of connections. Three tasks work for it: the
//! reader moves bytes from the PTY into the ring and never waits for a
//! client; the screen follower parses the ring into the terminal model off
//! the read path; the exit watcher learns of the child's exit from its
//! keeper (which reaps it) and records it. Anyone who wants the
//! output (a connection's subscription) watches [`Pane::progress`] and
//! reads the ring through a cursor of its own.

mod catch_up;
mod cgroups;
mod conversation;
mod create;
mod durable;
mod end_marker;
mod exit;
#[cfg(test)]
mod explore_tests;
#[cfg(test)]
mod fake_keeper;
pub mod history;
mod input_line;
pub(crate) mod keeper;
mod keeper_intake;
mod launch_files;
mod news;
pub mod osc_cap;
mod output;
mod output_tap;
mod parse_budget;
mod progress;
mod quiet_watch;
mod raw_input;
mod reader;
mod record_writer;
mod recorder;
mod reference_capture;
mod ring;
mod ring_file;
pub mod screen;
mod screen_follower;
mod screen_resize;
pub mod scroll_shortcut;
mod session_capture;
mod signals;
mod snapshot_bounds;
mod sweep;
mod terminal_io;
mod terminal_model;
mod turn;
mod turn_reports;

use crate::limits;
use crate::process_stat::{descends_from, ProcessStat};
use crate::store::records::RecordStore;
pub use cgroups::PaneCgroups;
pub use create::Behaviour;
use durable::DurableRecord;
use input_line::InputLine;
pub use input_line::{InputPlace, InputTurn};
pub use keeper::Keepers;
use news::NewsOutlet;
use output::PaneOutput;
pub(crate) use output_tap::OutputTap;
use output_tap::OutputTaps;
use panehost_adapters::descriptor::ReferenceCapture;
use panehost_adapters::reference_pattern::ReferencePattern;
use panehost_adapters::LaunchPlan;
use panehost_ipc::{ExitStatus, Labels, PaneId, PaneState, PaneSummary, PaneSweep, Size, StartParams};
use progress::ProgressCell;
pub use progress::{PaneGone, Progress, ProgressWatch};
pub use ring::RingRead;
use session_capture::SessionCapture;
use std::os::fd::OwnedFd;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use sweep::PaneIdentity;
pub(crate) use sweep::{Reach, Sweep};
use terminal_model::TerminalModel;
use tokio::io::unix::AsyncFd;
pub use turn::TurnSignal;
use turn::TurnTracker;

/// Sizes of a pane's buffers.
#[derive(Debug, Clone, Copy)]
pub struct PaneLimits {
    /// Bytes of output kept for replay.
    pub ring_bytes: usize,
    /// How long the pane must be quiet before its terminal model sleeps.
    pub screen_sleep_after: Duration,
}

impl Default for PaneLimits {
    fn default() -> Self {
        PaneLimits { ring_bytes: limits::DEFAULT_RING_BYTES, screen_sleep_after: limits::SCREEN_SLEEP_AFTER }
    }
}

/// What a pane needs of its host: where its process is started, where its
/// record is kept, and the sizes of its buffers.
#[derive(Debug, Clone, Copy)]
pub struct PaneServices<'a> {
    /// The keepers its process is started in.
    pub keepers: &'a Arc<Keepers>,
    /// Where its record is kept.
    pub records: &'a RecordStore,
    /// The sizes of its buffers.
    pub limits: PaneLimits,
}

/// What runs in a pane: the plan the launcher built, the start request it
/// came from (kept in the record), and the terminal's size.
#[derive(Debug)]
pub struct Launch {
    /// The program, its arguments, environment and files.
    pub plan: LaunchPlan,
    /// The client's request, as the record keeps it.
    pub start: StartParams,
    /// The terminal's size.
    pub size: Size,
}

/// Identity of a pane, fixed at creation.
#[derive(Debug, Clone)]
pub struct PaneInfo {
    /// The id.
    pub id: PaneId,
    /// The runtime it runs.
    pub runtime: String,
    /// Grows when the process is replaced.
    pub generation: u64,
    /// The child's pid.
    pub pid: u32,
    /// Its working directory.
    pub cwd: String,
    /// Creation time, ms since the epoch.
    pub created_at_ms: u64,
    /// The client's labels.
    pub labels: Labels,
}

/// One pane. Shared as `Arc<Pane>` by the registry and its tasks.
///
/// Its state is held by parts that each own theirs: the output
/// ([`PaneOutput`], `output.rs`: the ring, pending resizes, where a
/// sleeping model is rebuilt from), the terminal model ([`TerminalModel`],
/// `terminal_model.rs`: the screen, how far it has parsed, its sleep), the
/// turns ([`TurnTracker`], `turn.rs`), what survives the host
/// ([`DurableRecord`], `durable.rs`: the record, its end marker, its
/// release), and the lifecycle (the progress watch, `progress.rs`; the
/// news of its activity and exit, `news.rs`; the keeper's control
/// connection). `Pane`'s methods compose them, grouped by concern: making
/// it (`create.rs`), its data path (`terminal_io.rs`), its turns
/// (`turn_reports.rs`), what survives the host (`durable.rs`), and here,
/// what it is and how it ends.
///
/// # Locks
///
/// Each part's locks are private to it, so the order is the parts'
/// dependencies, which the types make explicit:
///
/// - the output's lock and the progress's are leaves: no code runs under
///   them but their own;
/// - the terminal model's screen lock may be held while the output's is
///   taken (the model reads what it parses from the ring, and tells the
///   output when it sleeps or wakes): a model method is handed the
///   [`PaneOutput`]; the output knows nothing of the model, and a reader
///   that must wake the model does so between appends. The replay that
///   rebuilds a sleeping model runs with no lock held;
/// - the news outlet's lock (`news.rs`) comes first: under it the turns'
///   lock is taken (to read the activity it tells, and to record an exit
///   before telling it), and the title's and the progress's (leaves, to
///   read the size and title it tells), never the other way round;
/// - the turns' lock is otherwise taken alone, as is the durable record's
///   record lock (a `Pane` method releases one before it takes another);
/// - the durable record's end-marker lock is held while the progress's
///   (a leaf) is read, so that the end it marks is exact, and while the
///   marker's nine bytes are written (into the page cache, no sync):
///   the one write under a lock, ordered with the reader's reads;
/// - no lock is held while the record is written (a writer task does it,
///   `record_writer.rs`; its asks' lock is a leaf) or the keeper is told of the release (its
///   connection is taken out of `keeper_control` first);
/// - no lock is held across an `.await`, and no caller's code runs under
///   a lock a watch channel holds (its `wait_for` predicates read only
///   the channel's value).
pub struct Pane {
    info: PaneInfo,
    interrupt_keys: Vec<u8>,
    interrupt_presses: u8,
    notify_token: String,
    /// The keeper's pid: the pane's orphans become its children.
    keeper_pid: u32,
    /// The pane's own control group, if it has one (`cgroups.rs`): every
    /// process it starts is in it.
    cgroup: Option<std::path::PathBuf>,
    /// When the pane's process started, if it ran when the pane was made
    /// (`sweep::start_time`): its pid, once given again, is not the pane's.
    process_started: Option<u64>,
    drops_early_input: bool,
    raw_input: raw_input::RawInput,
    reference_capture: ReferenceCapture,
    reference_pattern: Option<ReferencePattern>,
    /// Where its session reference is looked for, when the CLI's session
    /// store names it.
    session_capture: Option<SessionCapture>,
    turns: Mutex<TurnTracker>,
    output: PaneOutput,
    /// Who takes short reads the moment they are in the ring.
    output_taps: OutputTaps,
    model: TerminalModel,
    progress: ProgressCell,
    io: AsyncFd<OwnedFd>,
    input: InputLine,
    news: NewsOutlet,
    /// The keeper connection's writing side, for `release`.
    keeper_control: Mutex<Option<tokio::net::unix::OwnedWriteHalf>>,
    durable: DurableRecord,
    /// How the pane came to this host: `started`, or after a restart
    /// `keeper` (taken back from its keeper).
    restored_by: &'static str,
}

impl std::fmt::Debug for Pane {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pane").field("info", &self.info).finish_non_exhaustive()
    }
}

/// Locks a std mutex, recovering the data if a holder panicked: the pane's
/// state stays usable for everyone else.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Pane {
    /// How the pane came to this host: `started` or `keeper`.
    pub fn restored_by(&self) -> &'static str {
        self.restored_by
    }

    /// The pane's fixed identity.
    pub fn info(&self) -> &PaneInfo {
        &self.info
    }

    /// True when process `pid` is one of the pane's: in the pane's session
    /// (the pane's process leads its own session, so the session id is its
    /// pid), or a descendant of the pane's process (a CLI may start its
    /// hooks in a session of their own; a process can leave its session,
    /// but never choose its parent).
    pub fn is_own_process(&self, pid: Option<u32>) -> bool {
        let Some(pid) = pid else { return false };
        let in_session = ProcessStat::read(pid).is_some_and(|stat| stat.session == self.info.pid);
        in_session || descends_from(pid, self.info.pid)
    }

    /// The bytes that interrupt this pane's runtime.
    pub fn interrupt_keys(&self) -> &[u8] {
        &self.interrupt_keys
    }

    /// How many times the interrupt keys are pressed.
    pub fn interrupt_presses(&self) -> u8 {
        self.interrupt_presses
    }

    /// A watch that wakes on every change of the pane's progress.
    pub fn progress(&self) -> ProgressWatch {
        self.progress.watch()
    }

    /// The current progress.
    pub fn current_progress(&self) -> Progress {
        self.progress.get()
    }

    /// The pane as `list` describes it.
    pub fn summary(&self) -> PaneSummary {
        let progress = self.current_progress();
        let title = self.model.title();
        // Each lock in its own statement: a guard in a struct literal lives
        // to the end of the literal, and these mutexes are not reentrant.
        let (activity, completion) = {
            let turns = lock(&self.turns);
            (turns.activity().to_owned(), turns.completion().as_str().to_owned())
        };
        PaneSummary {
            id: self.info.id.clone(),
            runtime: self.info.runtime.clone(),
            generation: self.info.generation,
            state: match progress.exit {
                Some(status) => PaneState::Exited(status),
                None => PaneState::Running,
            },
            pid: self.info.pid,
            size: progress.size,
            offset: progress.end,
            cwd: self.info.cwd.clone(),
            title,
            created_at_ms: self.info.created_at_ms,
            activity,
            completion,
            restored_by: self.restored_by.to_owned(),
            labels: self.info.labels.clone(),
        }
    }

    /// Whether the runtime loses input typed before its prompt is drawn.
    pub fn drops_early_input(&self) -> bool {
        self.drops_early_input
    }

    /// Whether a submission waits until the terminal is in raw mode
    /// ([`Pane::terminal_in_raw_mode`]): the runtime reads raw keys, and
    /// no wait for it has run out yet.
    pub fn awaits_raw_mode(&self) -> bool {
        self.raw_input.awaits_raw_mode()
    }

    /// Whether a submission, once raw mode is on, also waits for the
    /// program's drawing of its start to settle (the first time only).
    pub fn awaits_start_settled(&self) -> bool {
        self.raw_input.awaits_start_settled()
    }

    /// The text the program's screen shows once it reads its first
    /// submission (its input box), when its runtime names one.
    pub fn ready_marker(&self) -> Option<&str> {
        self.raw_input.ready_marker()
    }

    /// The program's start has settled: later submissions wait for raw
    /// mode only.
    pub fn mark_start_settled(&self) {
        self.raw_input.mark_start_settled();
    }

    /// Sends `signal` to the terminal's foreground process group (the
    /// pane's own group when it has none); says which group.
    pub fn signal_foreground(&self, signal: rustix::process::Signal) -> String {
        signals::signal_foreground(self, signal)
    }

    /// The terminal's foreground process group (the pane's own group when
    /// it has none).
    pub fn foreground_group(&self) -> Option<rustix::process::Pid> {
        signals::foreground_group(self)
    }

    /// Sends `signal` to the process group `group`; says which.
    pub fn signal_group(&self, group: rustix::process::Pid, signal: rustix::process::Signal) -> String {
        signals::signal_group(group, signal)
    }

    /// True while any process is left in the process group `group`.
    pub fn group_exists(group: rustix::process::Pid) -> bool {
        signals::group_exists(group)
    }

    /// Tells `feed` that the pane arrived, and from now on its activity
    /// and its exit (the registry connects it when the pane joins).
    pub fn connect_news(&self, feed: tokio::sync::broadcast::Sender<panehost_ipc::Event>) {
        self.news.connect(feed, || self.summary());
    }

    /// Tells the feed the pane's size and title when either changed since
    /// it was last told (after a resize). No lock of the pane may be held.
    pub(super) fn tell_look(&self) {
        let _ = self.news.look(&self.info.id, false, || self.look());
    }

    /// Tells the feed the pane's new title, at most every
    /// [`news::TITLE_NEWS_INTERVAL`]: a change within that long of the last
    /// one told is told once it has passed (the latest title then). No
    /// lock of the pane may be held.
    pub(super) fn tell_title(self: &Arc<Self>) {
        let Some(wait) = self.news.look(&self.info.id, true, || self.look()) else { return };
        let pane = Arc::clone(self);
        tokio::spawn(async move {
            tokio::time::sleep(wait).await;
            pane.news.look_again(&pane.info.id, || pane.look());
        });
    }

    /// The size and title a `pane_changed` tells.
    fn look(&self) -> (Size, String) {
        (self.current_progress().size, self.model.title())
    }

    /// Tells the feed that the pane left (`reason`), and nothing after
    /// (the registry disconnects it when the pane leaves).
    pub fn disconnect_news(&self, reason: String) {
        self.news.disconnect(&self.info.id, reason);
    }

    /// Saves in the record whether a submission is being typed (see
    /// [`PaneRecord::typing`](crate::store::records::PaneRecord::typing)).
    /// Written without waiting for the disk: it is for a host that dies,
    /// not a machine.
    pub async fn record_typing(&self, typing: bool) {
        self.durable.set_typing(typing);
        self.write_record(false).await;
    }

    /// Saves in the record that a close for good began (before any of its
    /// signals): a host killed in the middle of it leaves the next host a
    /// close to finish, not an exit to report.
    pub async fn record_closing(&self) {
        self.durable.set_closing();
        self.save_record().await;
    }

    /// Ends the process group (SIGHUP, then SIGTERM, then SIGKILL, with
    /// bounded waits), waits for the exit to be recorded, then ends every
    /// other process the pane started (`sweep.rs`), and marks the pane
    /// closed so its tasks and subscribers finish. Gives the exit and what
    /// the sweep ended.
    pub async fn close(&self) -> (ExitStatus, PaneSweep) {
        // Before any signal: a subscriber that sees the exit must know it
        // is the close's.
        self.progress.mark_closing();
        // Found while their parents and sessions still say whose they are.
        let sweep = self.find_processes(Reach::Pane, None).await;
        let status = signals::end_process_group(self).await;
        let swept = end_processes(sweep).await;
        if let Some(dir) = &self.cgroup {
            if swept.survivors.is_empty() {
                cgroups::remove(dir);
            }
        }
        self.progress.mark_closed();
        (status, swept)
    }

    /// A sweep of `reach`, with the processes of process group `group`
    /// (an interrupt's program) and those of its reach found now.
    pub(crate) async fn find_processes(&self, reach: Reach, group: Option<u32>) -> Sweep {
        let identity = PaneIdentity {
            pane_pid: self.info.pid,
            keeper_pid: self.keeper_pid,
            token_entry: format!("PANEHOST_NOTIFY_TOKEN={}", self.notify_token).into_bytes(),
            pane_started: self.process_started,
            cgroup: self.cgroup.clone(),
        };
        let empty = Sweep::new(identity.clone(), reach);
        let found = crate::blocking::run(move || {
            let mut sweep = Sweep::new(identity, reach);
            if let Some(group) = group {
                sweep.pin_group(group);
            }
            sweep.find();
            Ok(sweep)
        });
        // It cannot fail; were it to, the sweep still finds what it can
        // when it ends them.
        found.await.unwrap_or(empty)
    }

    /// Waits until the exit is recorded, at most `timeout`.
    async fn wait_exit(&self, timeout: Duration) -> Option<ExitStatus> {
        let mut progress = self.progress();
        let waited = tokio::time::timeout(timeout, progress.until(|progress| progress.exit.is_some())).await;
        match waited {
            Ok(Ok(progress)) => progress.exit.clone(),
            _ => None,
        }
    }

    fn record_exit(&self, status: ExitStatus) {
        self.durable.set_exit(status.clone());
        // The turns learn of the exit under the news outlet's lock, so that
        // the feed tells the exit before the activity it leaves. Told
        // before anyone can see the exit in the progress: a close that
        // waits for it, and then has the pane leave, comes after.
        self.news.exited(&self.info.id, status.clone(), || {
            let mut turns = lock(&self.turns);
            turns.exited();
            turns.activity()
        });
        self.progress.set_exit(status);
    }
}

/// Ends the processes `sweep` found and finds (SIGTERM, a grace, SIGKILL;
/// seconds at most), off the async threads.
pub(crate) async fn end_processes(sweep: Sweep) -> PaneSweep {
    match tokio::task::spawn_blocking(move || sweep.end()).await {
        Ok(swept) => swept,
        Err(error) => {
            tracing::error!(%error, "the sweep of a pane's processes did not finish");
            PaneSweep { method: sweep::METHOD.to_owned(), ended: 0, survivors: Vec::new() }
        }
    }
}
