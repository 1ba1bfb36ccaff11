//! A pane: a process in a PTY, its output ring and its terminal model.
//!
//! A pane knows nothing of connections. Three tasks work for it: the
//! reader moves bytes from the PTY into the ring and never waits for a
//! client; the screen follower parses the ring into the terminal model off
//! the read path; the exit watcher learns of the child's exit from its
//! keeper (which reaps it) and records it. Anyone who wants the
//! output (a connection's subscription) watches [`Pane::progress`] and
//! reads the ring through a cursor of its own.

mod conversation;
mod end_marker;
mod exit;
pub mod history;
mod input_line;
pub(crate) mod keeper;
mod launch_files;
mod news;
mod progress;
mod quiet_watch;
mod reader;
mod recorder;
mod reference_capture;
mod ring;
pub mod screen;
mod screen_follower;
mod screen_sleep;
mod session_capture;
mod signals;
mod turn;

use crate::limits;
use crate::process_stat::{descends_from, ProcessStat};
use crate::store::records::{PaneRecord, RecordStore, RecordedScreen, RecordedTurn, RECORD_VERSION, RESERVE_STEP};
use end_marker::EndMarker;
use input_line::InputLine;
pub use input_line::{InputPlace, InputTurn};
pub use keeper::Keepers;
use news::NewsOutlet;
use panehost_adapters::completion::HookInjection;
use panehost_adapters::descriptor::ReferenceCapture;
use panehost_adapters::reference_pattern::ReferencePattern;
use panehost_adapters::{CompletionSignal, LaunchPlan};
use panehost_ipc::{
    ExitStatus, Labels, PaneId, PaneState, PaneSummary, ResumeRequest, ScreenSnapshot, Size, StartParams,
};
use progress::ProgressCell;
pub use progress::{PaneGone, Progress, ProgressWatch};
use ring::OutputRing;
pub use ring::RingRead;
use screen::TerminalScreen;
use screen_sleep::MODEL_AWAKE;
use session_capture::SessionCapture;
use std::collections::VecDeque;
use std::io;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, SystemTime};
use tokio::io::unix::AsyncFd;
use tokio::sync::watch;
pub use turn::TurnSignal;
use turn::{Reported, TerminalNotice, TurnTracker};

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

/// The ring and the resizes the terminal model has yet to apply.
#[derive(Debug)]
struct OutputState {
    ring: OutputRing,
    /// Resizes to apply when the model reaches their offset.
    pending_resizes: VecDeque<(u64, Size)>,
    reader_done: bool,
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
pub struct Pane {
    info: PaneInfo,
    interrupt_keys: Vec<u8>,
    interrupt_presses: u8,
    notify_token: String,
    drops_early_input: bool,
    reference_capture: ReferenceCapture,
    reference_pattern: Option<ReferencePattern>,
    /// Where its session reference is looked for, when the CLI's session
    /// store names it.
    session_capture: Option<SessionCapture>,
    turns: Mutex<TurnTracker>,
    output: Mutex<OutputState>,
    /// The ring's capacity (fixed when the pane is made).
    ring_capacity: usize,
    /// How long the pane must be quiet before its terminal model sleeps.
    screen_sleep_after: Duration,
    screen: Mutex<TerminalScreen>,
    /// While the terminal model sleeps, the offset from which the ring
    /// must keep the output to rebuild it; [`MODEL_AWAKE`] otherwise. Set
    /// and read under the `output` lock.
    asleep_from: AtomicU64,
    progress: ProgressCell,
    /// The terminal model's offset, for the reader's backpressure.
    parsed: watch::Sender<u64>,
    /// Set when the screen follower has stopped: the reader no longer
    /// waits for the model.
    follower_stopped: std::sync::atomic::AtomicBool,
    io: AsyncFd<OwnedFd>,
    input: InputLine,
    news: NewsOutlet,
    /// Whether the pane's record was removed for good (on release); saves
    /// hold this lock, so none lands after the removal.
    record_released: tokio::sync::Mutex<bool>,
    /// The keeper connection's writing side, for `release`.
    keeper_control: tokio::sync::Mutex<Option<tokio::net::unix::OwnedWriteHalf>>,
    /// The pane's durable record, and where it is written.
    record: Mutex<PaneRecord>,
    /// The pane's exact output end on disk, while it is quiet.
    end_marker: Mutex<EndMarker>,
    /// For a pane taken back after a restart: the screen where this host's
    /// offsets begin, while the ring still holds that offset. A client
    /// behind it is told of the gap and then gets every byte from there.
    start_snapshot: Mutex<Option<ScreenSnapshot>>,
    records: RecordStore,
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
    /// Starts a new pane `id`: the launch's process in a new PTY held by a
    /// keeper process, and the pane's tasks. Must be called within a tokio
    /// runtime.
    ///
    /// # Errors
    /// Fails when the keeper, the PTY or the process cannot be created.
    pub async fn start(id: PaneId, launch: Launch, services: PaneServices<'_>) -> io::Result<Arc<Pane>> {
        Pane::spawn(id, launch, services, None).await
    }

    /// Starts a new process for the pane `previous` records (whose process
    /// is gone), as `how` says it resumes: same id and creation time, the
    /// next generation, offsets continuing from the reservation.
    ///
    /// # Errors
    /// Fails when the keeper, the PTY or the process cannot be created.
    pub async fn relaunch(
        previous: PaneRecord,
        how: &'static str,
        launch: Launch,
        services: PaneServices<'_>,
    ) -> io::Result<Arc<Pane>> {
        Pane::spawn(previous.id.clone(), launch, services, Some((previous, how))).await
    }

    async fn spawn(
        id: PaneId,
        launch: Launch,
        services: PaneServices<'_>,
        previous: Option<(PaneRecord, &'static str)>,
    ) -> io::Result<Arc<Pane>> {
        let Launch { plan, start, size } = launch;
        let PaneServices { keepers, records, limits: pane_limits } = services;
        let notify_token = random_token()?;
        let extra_env = vec![
            ("PANEHOST_PANE".to_owned(), id.0.clone()),
            ("PANEHOST_NOTIFY_TOKEN".to_owned(), notify_token.clone()),
        ];
        let socket = keepers.sockets_dir().join(format!("{id}.sock"));
        let keepers = Arc::clone(keepers);
        let launch_plan = plan.clone();
        let launch_socket = socket.clone();
        // Before the process exists: what it writes to its session store
        // comes after this.
        let spawned_at = SystemTime::now();
        let handover = tokio::task::spawn_blocking(move || {
            launch_files::write(&launch_plan.files)?;
            keepers.launch(&launch_plan, size, &extra_env, &launch_socket)?;
            keeper::connect(&launch_socket)
        })
        .await
        .map_err(io::Error::other)??;
        // A pane restored by a new process keeps its id and creation time;
        // its generation grows and its offsets continue.
        let (generation, created_at_ms, reserved_offset, native_reference, restored_by) = match &previous {
            Some((prev, how)) => {
                (prev.generation + 1, prev.created_at_ms, prev.reserved_offset, prev.native_reference.clone(), *how)
            }
            // Resuming an exact session: that is the pane's session.
            None => {
                let resumed = match &start.resume {
                    Some(ResumeRequest::Reference(reference)) => Some(reference.clone()),
                    _ => None,
                };
                (1, now_ms(), 0, resumed, "started")
            }
        };
        let record = PaneRecord {
            version: RECORD_VERSION,
            id: id.clone(),
            runtime: plan.runtime.clone(),
            generation,
            pid: handover.pid,
            keeper_socket: socket,
            start,
            cwd: plan.cwd.display().to_string(),
            size,
            created_at_ms,
            notify_token,
            native_reference,
            reserved_offset,
            screen: None,
            exit: None,
            open_turn: None,
        };
        let behaviour = Behaviour { process_started: Some(spawned_at), ..Behaviour::of(&plan) };
        // A new process: its offsets continue from the reservation (a new
        // generation, whose offsets no client compares with the old ones).
        let base = reserved_offset;
        Pane::assemble(record, base, behaviour, handover, pane_limits, records.clone(), restored_by).await
    }

    /// Takes back a pane whose keeper survived a host restart: same id,
    /// generation and pid; offsets continue from the exact end its end
    /// marker holds when the pane was quiet (no gap), else from the
    /// record's reservation; the screen starts from the recorded one, and
    /// a turn open in the record is open again.
    ///
    /// # Errors
    /// Fails when the keeper does not answer.
    pub async fn adopt(record: PaneRecord, behaviour: Behaviour, services: PaneServices<'_>) -> io::Result<Arc<Pane>> {
        let PaneServices { records, limits: pane_limits, .. } = services;
        let socket = record.keeper_socket.clone();
        let handover =
            tokio::task::spawn_blocking(move || keeper::connect(&socket)).await.map_err(io::Error::other)??;
        if handover.pid != record.pid {
            return Err(io::Error::other(format!(
                "the keeper holds pid {}, the record names {}",
                handover.pid, record.pid
            )));
        }
        let base = exact_end(&record, records).unwrap_or(record.reserved_offset);
        Pane::assemble(record, base, behaviour, handover, pane_limits, records.clone(), "keeper").await
    }

    async fn assemble(
        mut record: PaneRecord,
        base: u64,
        behaviour: Behaviour,
        handover: keeper::Handover,
        pane_limits: PaneLimits,
        records: RecordStore,
        restored_by: &'static str,
    ) -> io::Result<Arc<Pane>> {
        record.reserved_offset = base + RESERVE_STEP;
        let size = record.size;
        let redraw = record.screen.as_ref().map_or(&[][..], |saved| saved.formatted.as_slice());
        let mut screen = TerminalScreen::new(size, base, redraw);
        // The record shows the screen where this host's offsets begin.
        let first_screen = screen.snapshot();
        record.screen = Some(RecordedScreen { offset: base, formatted: first_screen.formatted.clone() });
        let start_snapshot = (restored_by == "keeper").then_some(first_screen);
        let end_marker = EndMarker::create(&records.end_marker_path(&record.id));
        let mut turns = TurnTracker::new(behaviour.completion, behaviour.hook_injection);
        let reopened = match (restored_by, record.open_turn.take()) {
            ("keeper", Some(turn)) => turns.reopen(base, turn.submitted.as_deref().unwrap_or("")),
            _ => None,
        };
        let io_fd = handover.master;
        set_nonblocking(&io_fd)?;
        handover.control.set_nonblocking(true)?;
        let (control_read, control_write) = tokio::net::UnixStream::from_std(handover.control)?.into_split();
        let info = PaneInfo {
            id: record.id.clone(),
            runtime: record.runtime.clone(),
            generation: record.generation,
            pid: handover.pid,
            cwd: record.cwd.clone(),
            created_at_ms: record.created_at_ms,
            labels: record.start.labels.clone(),
        };
        let notify_token = record.notify_token.clone();
        let mut ring = OutputRing::new(pane_limits.ring_bytes);
        ring.skip_to(base);
        let pane = Arc::new(Pane {
            info,
            interrupt_keys: behaviour.interrupt_keys,
            interrupt_presses: behaviour.interrupt_presses.max(1),
            notify_token,
            drops_early_input: behaviour.drops_early_input,
            reference_capture: behaviour.reference_capture.clone(),
            reference_pattern: behaviour.reference_pattern.clone(),
            session_capture: match (
                &behaviour.reference_capture,
                &behaviour.session_store_location,
                &behaviour.reference_pattern,
            ) {
                (ReferenceCapture::SessionStore(store), Some(location), Some(pattern)) => Some(SessionCapture::new(
                    store.clone(),
                    location.clone(),
                    behaviour.process_started.unwrap_or_else(SystemTime::now),
                    pattern.clone(),
                )),
                _ => None,
            },
            turns: Mutex::new(turns),
            ring_capacity: ring.capacity(),
            screen_sleep_after: pane_limits.screen_sleep_after,
            output: Mutex::new(OutputState { ring, pending_resizes: VecDeque::new(), reader_done: false }),
            screen: Mutex::new(screen),
            asleep_from: AtomicU64::new(MODEL_AWAKE),
            progress: ProgressCell::new(Progress::new(base, size)),
            parsed: watch::Sender::new(base),
            follower_stopped: std::sync::atomic::AtomicBool::new(false),
            // Safety: the OwnedFd is moved into the AsyncFd, which keeps it
            // open and unchanged for as long as it is registered.
            io: unsafe { AsyncFd::register(io_fd) }.map_err(io::Error::from)?,
            input: InputLine::default(),
            news: NewsOutlet::default(),
            keeper_control: tokio::sync::Mutex::new(Some(control_write)),
            record_released: tokio::sync::Mutex::new(false),
            record: Mutex::new(record),
            end_marker: Mutex::new(end_marker),
            start_snapshot: Mutex::new(start_snapshot),
            records,
            restored_by,
        });
        pane.publish(reopened);
        // A host that restarts finds the pane from here on; the disk has
        // it a moment later (a start does not wait for it: a machine that
        // loses power in between comes back without the pane, never with
        // a wrong one).
        pane.write_record(false).await;
        let durable = Arc::clone(&pane);
        tokio::spawn(async move { durable.save_record().await });
        // Nothing is read yet: the end is exact.
        pane.record_saved_at(base);
        tokio::spawn(reader::run(Arc::clone(&pane)));
        tokio::spawn(screen_follower::run(Arc::clone(&pane)));
        tokio::spawn(exit::watch(Arc::clone(&pane), control_read, handover.exited));
        tokio::spawn(recorder::run(Arc::clone(&pane)));
        if behaviour.completion == CompletionSignal::ScreenHeuristic {
            tokio::spawn(quiet_watch::run(Arc::clone(&pane)));
        }
        Ok(pane)
    }

    /// How the pane came to this host: `started` or `keeper`.
    pub fn restored_by(&self) -> &'static str {
        self.restored_by
    }

    fn set_recorded_screen(&self, screen: RecordedScreen) {
        lock(&self.record).screen = Some(screen);
    }

    /// A copy of the pane's record, with the turn open now.
    pub fn record(&self) -> PaneRecord {
        let open_turn = lock(&self.turns).open_turn();
        let mut record = lock(&self.record).clone();
        record.open_turn = open_turn.map(|(offset, submitted)| RecordedTurn { offset, submitted });
        record
    }

    /// The reader is about to take bytes from the PTY (the end marker says
    /// "open" from now on).
    fn reading_begins(&self) {
        lock(&self.end_marker).before_read();
    }

    /// What the reader took is in the ring, or there was nothing.
    fn reading_ends(&self) {
        lock(&self.end_marker).after_read();
    }

    /// The screen saved in the record shows the output up to `screen_at`:
    /// when that is all of it, the end marker holds it as the exact end.
    fn record_saved_at(&self, screen_at: u64) {
        let mut marker = lock(&self.end_marker);
        // Under the marker's lock: a read that began before has set
        // `reading`, and one that begins after sees the exact end.
        if self.progress.end() == screen_at {
            marker.settled_at(screen_at);
        }
    }

    /// Where a subscription behind this host's first offset starts: the
    /// screen at that offset (for a pane taken back after a restart, while
    /// the ring still holds it), so that every byte this host holds
    /// follows. `None` otherwise.
    pub fn start_snapshot_before(&self, offset: u64) -> Option<ScreenSnapshot> {
        let mut start = lock(&self.start_snapshot);
        let snapshot = start.as_ref()?;
        if !self.ring_holds(snapshot.offset) {
            // The ring moved on; the screen is of no more use.
            *start = None;
            return None;
        }
        (offset < snapshot.offset).then(|| snapshot.clone())
    }

    /// Writes the pane's record (off the async threads), and waits until
    /// it is on the disk.
    async fn save_record(&self) {
        self.write_record(true).await;
    }

    /// Writes the pane's record; `durable`: waits until it is on the disk.
    async fn write_record(&self, durable: bool) {
        // Saves and the removal on release take turns: a save that finishes
        // after the release would bring a forgotten pane back.
        let released = self.record_released.lock().await;
        if *released {
            return;
        }
        let record = self.record();
        let records = self.records.clone();
        let saved =
            tokio::task::spawn_blocking(
                move || {
                    if durable {
                        records.save(&record)
                    } else {
                        records.save_unsynced(&record)
                    }
                },
            )
            .await;
        if let Ok(Err(err)) | Err(err) = saved.map_err(io::Error::other) {
            tracing::warn!(pane = %self.info.id, %err, "cannot write the pane record");
        }
    }

    /// Tells the keeper the pane is forgotten (it lets the pane go once
    /// its child has exited), and forgets the record.
    pub async fn release(&self) {
        if let Some(mut control) = self.keeper_control.lock().await.take() {
            use tokio::io::AsyncWriteExt;
            let _ = control.write_all(crate::keeper_wire::pane_lines::RELEASE).await;
        }
        {
            let mut released = self.record_released.lock().await;
            *released = true;
            self.records.remove(&self.info.id);
        }
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

    /// Up to `max` output bytes from `cursor`.
    pub fn read_output(&self, cursor: u64, max: usize) -> RingRead {
        lock(&self.output).ring.read_from(cursor, max)
    }

    /// True when the ring can replay from `offset`.
    pub fn ring_holds(&self, offset: u64) -> bool {
        lock(&self.output).ring.holds(offset)
    }

    /// The screen at the offset the terminal model has reached. That
    /// offset is always still in the ring (the reader never lets the ring
    /// drop bytes the model has not parsed), so output can follow it.
    pub fn snapshot(&self) -> ScreenSnapshot {
        self.awake_screen().snapshot()
    }

    /// The visible screen as text, and the offset it reflects.
    pub fn screen_text(&self) -> (u64, String) {
        self.awake_screen().text()
    }

    /// The output the ring holds, its offset, and the pane's size: what
    /// [`history::render`] re-parses.
    pub fn held_output(&self) -> (u64, Vec<u8>, Size) {
        let size = self.current_progress().size;
        let output = lock(&self.output);
        let start = output.ring.start();
        let bytes = output.ring.held_between(start, output.ring.end()).unwrap_or_default();
        (start, bytes, size)
    }

    /// The pane as `list` describes it.
    pub fn summary(&self) -> PaneSummary {
        let progress = self.current_progress();
        let title = lock(&self.screen).title().to_owned();
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

    /// How the end of a turn is observed for this pane.
    pub fn completion(&self) -> CompletionSignal {
        lock(&self.turns).completion()
    }

    /// `idle`, `busy`, `awaiting_input` or `unknown`.
    pub fn activity(&self) -> &'static str {
        lock(&self.turns).activity()
    }

    /// True while a turn is open.
    pub fn busy(&self) -> bool {
        lock(&self.turns).busy()
    }

    /// Whether the runtime loses input typed before its prompt is drawn.
    pub fn drops_early_input(&self) -> bool {
        self.drops_early_input
    }

    /// Turn signals from sequence number `from_seq` on.
    pub fn signals_from(&self, from_seq: u64) -> Vec<TurnSignal> {
        lock(&self.turns).signals_from(from_seq)
    }

    /// The first signal sequence number at or after `offset`.
    pub fn first_signal_at(&self, offset: u64) -> u64 {
        lock(&self.turns).first_seq_at(offset)
    }

    /// A receiver of the terminal model's offset.
    pub fn parsed_offset(&self) -> watch::Receiver<u64> {
        self.parsed.subscribe()
    }

    /// An interrupt was confirmed by the output going quiet: the open turn
    /// (if any) ends, labelled as a heuristic.
    pub fn turn_interrupted(&self) {
        let offset = self.current_progress().end;
        let mut turns = lock(&self.turns);
        if !turns.busy() {
            return;
        }
        let signal = turns.interrupted(offset);
        drop(turns);
        self.publish(signal);
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

    /// Records that the host submitted input (`text`, empty when only
    /// keys) as a turn.
    pub fn input_submitted(&self, text: &str) {
        let offset = self.current_progress().end;
        let signal = lock(&self.turns).input_submitted(offset, text);
        self.publish(signal);
    }

    /// Waits until no output has arrived for `quiet`, at most `limit`.
    pub async fn wait_output_quiet(&self, quiet: Duration, limit: Duration) {
        let mut progress = self.progress();
        progress.mark_seen();
        let settle = async { while let Ok(Ok(())) = tokio::time::timeout(quiet, progress.changed()).await {} };
        let _ = tokio::time::timeout(limit, settle).await;
    }

    /// A hook or notify program's report. Returns false when the token is
    /// not this pane's. The end of a turn is recorded once the output
    /// after the report has settled (at most [`limits::HOOK_SETTLE_LIMIT`]
    /// later), at the offset reached then: a CLI may run its hook before it
    /// draws the answer.
    pub fn report(self: &Arc<Self>, token: &str, event: &str, payload: &str) -> bool {
        if !same_secret(token.as_bytes(), self.notify_token.as_bytes()) {
            return false;
        }
        let offset = self.current_progress().end;
        let reported = lock(&self.turns).reported(event, payload, offset);
        self.act_on(reported);
        if let ReferenceCapture::HookField(field) = &self.reference_capture {
            let value = serde_json::from_str::<serde_json::Value>(payload).ok();
            if let Some(reference) = value.as_ref().and_then(|value| value.get(field)).and_then(|value| value.as_str())
            {
                self.capture_reference(reference);
            }
        }
        true
    }

    fn record_terminal_notices(self: &Arc<Self>, notices: &[TerminalNotice], offset: u64) {
        for notice in notices {
            let reported = lock(&self.turns).terminal_notice(notice, offset);
            self.act_on(reported);
        }
    }

    /// Publishes a signal now, or records a reported end once the output
    /// after it has settled (at most [`limits::HOOK_SETTLE_LIMIT`] later),
    /// at the offset reached then.
    fn act_on(self: &Arc<Self>, reported: Reported) {
        match reported {
            Reported::Now(signal) => self.publish(signal),
            Reported::EndPending(pending) => {
                let pane = Arc::clone(self);
                tokio::spawn(async move {
                    pane.wait_output_quiet(limits::HOOK_SETTLE_QUIET, limits::HOOK_SETTLE_LIMIT).await;
                    let offset = pane.current_progress().end;
                    let signal = lock(&pane.turns).end_reported(pending, offset);
                    pane.publish(signal);
                });
            }
        }
    }

    fn record_quiet(&self) {
        let offset = self.current_progress().end;
        let signal = lock(&self.turns).quiet(offset);
        self.publish(signal);
    }

    fn publish(&self, signal: Option<TurnSignal>) {
        if let Some(signal) = signal {
            tracing::debug!(pane = %self.info.id, seq = signal.seq, event = ?signal.event, "turn signal");
            self.progress.set_signals(signal.seq + 1);
        }
        self.news.activity(&self.info.id, || self.activity());
    }

    /// Tells `feed` that the pane arrived, and from now on its activity
    /// and its exit (the registry connects it when the pane joins).
    pub fn connect_news(&self, feed: tokio::sync::broadcast::Sender<panehost_ipc::Event>) {
        self.news.connect(feed, || self.summary());
    }

    /// Tells the feed that the pane left (`reason`), and nothing after
    /// (the registry disconnects it when the pane leaves).
    pub fn disconnect_news(&self, reason: String) {
        self.news.disconnect(&self.info.id, reason);
    }

    /// A place in the pane's line of input writers, taken now: input is
    /// written in the order places were taken.
    pub fn join_input_line(&self) -> InputPlace {
        self.input.join()
    }

    /// Writes input to the terminal, all of it or failing. Only the holder
    /// of the pane's input turn writes (see [`Pane::join_input_line`]), so
    /// input never interleaves.
    ///
    /// # Errors
    /// Fails when the PTY refuses the write, or (with `TimedOut`) when the
    /// process has not taken the input within `timeout`.
    pub async fn write_input(&self, _turn: &InputTurn, data: &[u8], timeout: Duration) -> io::Result<()> {
        let write_all = async {
            let mut written = 0;
            while written < data.len() {
                let mut guard = self.io.writable().await?;
                match guard.try_io(|fd| rustix::io::write(fd.get_ref(), &data[written..]).map_err(io::Error::from)) {
                    Ok(Ok(n)) => written += n,
                    Ok(Err(err)) if err.kind() == io::ErrorKind::Interrupted => {}
                    Ok(Err(err)) => return Err(err),
                    Err(_would_block) => {}
                }
            }
            Ok(())
        };
        tokio::time::timeout(timeout, write_all)
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "the process did not take the input in time"))?
    }

    /// Resizes the PTY (the process gets SIGWINCH) and, in order with the
    /// output, the terminal model.
    ///
    /// # Errors
    /// Fails when the resize ioctl fails.
    pub fn resize(&self, size: Size) -> io::Result<()> {
        self.resize_terminal_only(size)?;
        lock(&self.record).size = size;
        let mut output = lock(&self.output);
        let at = output.ring.end();
        output.pending_resizes.push_back((at, size));
        drop(output);
        self.progress.set_size(size);
        Ok(())
    }

    /// Sets the PTY's window size (the process gets SIGWINCH) without
    /// touching the model or the record: a nudge that makes a full-screen
    /// program draw its screen again.
    ///
    /// # Errors
    /// Fails when the resize ioctl fails.
    fn resize_terminal_only(&self, size: Size) -> io::Result<()> {
        let winsize = rustix::termios::Winsize { ws_row: size.rows, ws_col: size.cols, ws_xpixel: 0, ws_ypixel: 0 };
        rustix::termios::tcsetwinsize(self.io.get_ref(), winsize)?;
        Ok(())
    }

    /// Ends the process group (SIGHUP, then SIGTERM, then SIGKILL, with
    /// bounded waits), waits for the exit to be recorded, and marks the
    /// pane closed so its tasks and subscribers finish.
    pub async fn close(&self) -> ExitStatus {
        // Before any signal: a subscriber that sees the exit must know it
        // is the close's.
        self.progress.mark_closing();
        let status = signals::end_process_group(self).await;
        self.progress.mark_closed();
        status
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

    /// Appends output read from the PTY, first waiting (briefly, bounded by
    /// the parser's speed) if the ring would drop bytes the terminal model
    /// has not parsed yet.
    async fn accept_output(&self, data: &[u8]) {
        // The ring may not drop bytes the screen model has not parsed: wait
        // (only) when this chunk would push such bytes out.
        let capacity = self.ring_capacity as u64;
        let target = (self.progress.end() + data.len() as u64).saturating_sub(capacity);
        if *self.parsed.borrow() < target {
            let mut parsed = self.parsed.subscribe();
            // The follower only stops once the pane is closed (or, were it
            // ever to fail, when its task ends); then nothing waits for it.
            let _ = parsed
                .wait_for(|offset| {
                    *offset >= target
                        || self.progress.closed()
                        || self.follower_stopped.load(std::sync::atomic::Ordering::SeqCst)
                })
                .await;
        }
        debug_assert!(
            self.progress.end() + data.len() as u64 <= lock(&self.record).reserved_offset,
            "the reader reserves offsets before it reads"
        );
        let end = loop {
            let mut output = lock(&self.output);
            if self.append_would_drop_sleeping_origin(&output, data.len()) {
                drop(output);
                drop(self.awake_screen());
                continue;
            }
            output.ring.append(data);
            break output.ring.end();
        };
        self.progress.set_end(end);
    }

    /// Makes sure the reservation on disk covers the next `len` bytes,
    /// before the reader takes them from the PTY. A host killed after a read
    /// loses the bytes it held; a restarted host continues offsets from the
    /// reservation, so clients are told of those bytes as a gap, and no
    /// offset is ever given twice.
    async fn reserve_ahead(&self, len: usize) {
        let needed = self.progress.end() + len as u64;
        if needed > lock(&self.record).reserved_offset {
            lock(&self.record).reserved_offset = needed + RESERVE_STEP;
            self.save_record().await;
        }
    }

    fn finish_reading(&self) {
        lock(&self.output).reader_done = true;
        // Wake whoever waits for the drain.
        self.progress.wake();
    }

    fn reader_done(&self) -> bool {
        lock(&self.output).reader_done
    }

    fn record_exit(&self, status: ExitStatus) {
        lock(&self.turns).exited();
        lock(&self.record).exit = Some(status.clone());
        // Told before anyone can see the exit in the progress: a close that
        // waits for it, and then has the pane leave, comes after.
        self.news.exited(&self.info.id, status.clone());
        self.news.activity(&self.info.id, || self.activity());
        self.progress.set_exit(status);
    }
}

/// How a pane's runtime behaves, from its launch plan (kept across a host
/// restart through the runtime's descriptor).
#[derive(Debug, Clone)]
pub struct Behaviour {
    /// The interrupt keys.
    pub interrupt_keys: Vec<u8>,
    /// How many times they are pressed.
    pub interrupt_presses: u8,
    /// How the end of a turn is observed.
    pub completion: CompletionSignal,
    /// How the hooks were injected (and their payloads read).
    pub hook_injection: Option<HookInjection>,
    /// Whether early input is lost.
    pub drops_early_input: bool,
    /// Where the session's native reference is captured.
    pub reference_capture: ReferenceCapture,
    /// The pattern a captured reference must match.
    pub reference_pattern: Option<ReferencePattern>,
    /// Where the CLI's session store is for this launch's environment, when
    /// the reference is captured from it.
    pub session_store_location: Option<PathBuf>,
    /// When the process was about to be started (sessions created since
    /// are its own); unknown for a pane taken back from its keeper.
    pub process_started: Option<SystemTime>,
}

impl Behaviour {
    /// The behaviour a launch plan describes.
    pub fn of(plan: &LaunchPlan) -> Behaviour {
        Behaviour {
            interrupt_keys: plan.interrupt_keys.clone(),
            interrupt_presses: plan.interrupt_presses,
            completion: plan.completion,
            hook_injection: plan.hook_injection,
            drops_early_input: plan.drops_early_input,
            reference_capture: plan.reference_capture.clone(),
            reference_pattern: plan.reference_pattern.clone(),
            session_store_location: match &plan.reference_capture {
                ReferenceCapture::SessionStore(store) => store.location(&plan.env),
                _ => None,
            },
            process_started: None,
        }
    }
}

/// The exact end the pane's end marker holds, when the record agrees with
/// it: within the reservation, and the saved screen (if any) showing all
/// the output up to it.
fn exact_end(record: &PaneRecord, records: &RecordStore) -> Option<u64> {
    let end = EndMarker::read_exact(&records.end_marker_path(&record.id))?;
    let screen_at = record.screen.as_ref().map_or(0, |screen| screen.offset);
    (end <= record.reserved_offset && screen_at == end).then_some(end)
}

fn set_nonblocking(fd: &OwnedFd) -> io::Result<()> {
    let flags = rustix::fs::fcntl_getfl(fd)?;
    rustix::fs::fcntl_setfl(fd, flags | rustix::fs::OFlags::NONBLOCK)?;
    Ok(())
}

/// A pane's notify token: 128 bits from the OS random source, in hex.
fn random_token() -> io::Result<String> {
    let mut bytes = [0u8; 16];
    let mut filled = 0;
    while filled < bytes.len() {
        match rustix::rand::getrandom(&mut bytes[filled..], rustix::rand::GetRandomFlags::empty()) {
            Ok(read) => filled += read,
            Err(rustix::io::Errno::INTR) => {}
            Err(err) => return Err(err.into()),
        }
    }
    Ok(bytes.iter().map(|byte| format!("{byte:02x}")).collect())
}

/// Compares two secrets in time that depends on their lengths only.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len() && given.iter().zip(expected).fold(0u8, |diff, (a, b)| diff | (a ^ b)) == 0
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|elapsed| elapsed.as_millis() as u64)
        .unwrap_or(0)
}
