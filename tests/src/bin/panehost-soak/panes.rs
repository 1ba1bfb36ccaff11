//! The pane book: what the program believes about every pane it started
//! (alive, being closed, closed), the kinds of pane it starts, and the
//! ordering numbers that say which answers a belief must agree with.

use panehost_ipc::{PaneId, PaneState, PaneSummary, Size, StartParams};
use panehost_tests::rng::Rng;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// A line of `.` that pads each line of a burst pane.
const BURST_PADDING: &str = "................................................................................";

/// What a pane runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PaneKind {
    /// `sh -c` printing `p-N` lines, one every 200 ms, forever.
    Stream,
    /// `sh -c` printing 50 padded `p-N` lines every 200 ms (about 22 KB/s),
    /// so that its ring wraps during the run.
    Burst,
    /// An interactive `/bin/sh`.
    Shell,
    /// The fixture agent (runtime `fixture`): a prompt, `ask` works on it.
    Fixture,
}

impl PaneKind {
    /// Every kind, in report order.
    pub const ALL: [PaneKind; 4] = [PaneKind::Stream, PaneKind::Burst, PaneKind::Shell, PaneKind::Fixture];

    /// The kind's name in the report.
    pub fn label(self) -> &'static str {
        match self {
            PaneKind::Stream => "stream",
            PaneKind::Burst => "burst",
            PaneKind::Shell => "shell",
            PaneKind::Fixture => "fixture",
        }
    }

    /// True for the kinds whose output is numbered `p-N` lines.
    pub fn prints_numbered_lines(self) -> bool {
        matches!(self, PaneKind::Stream | PaneKind::Burst)
    }

    /// A kind drawn with the run's mix: mostly streams, some bursts,
    /// interactive shells and fixture agents.
    pub fn draw(rng: &mut Rng) -> PaneKind {
        match rng.weighted(&[65, 10, 10, 15]) {
            0 => PaneKind::Stream,
            1 => PaneKind::Burst,
            2 => PaneKind::Shell,
            _ => PaneKind::Fixture,
        }
    }

    /// The `start` request for a pane of this kind, at a random size.
    pub fn start_params(self, rng: &mut Rng) -> StartParams {
        let size = Some(Size { cols: rng.range(20, 200) as u16, rows: rng.range(5, 60) as u16 });
        let (runtime, command): (&str, Vec<String>) = match self {
            PaneKind::Stream => (
                "shell",
                vec!["sh".into(), "-c".into(), "i=0; while :; do i=$((i+1)); echo p-$i; sleep 0.2; done".into()],
            ),
            PaneKind::Burst => (
                "shell",
                vec![
                    "sh".into(),
                    "-c".into(),
                    format!(
                        "i=0; while :; do j=0; while [ $j -lt 50 ]; do i=$((i+1)); j=$((j+1)); \
                         echo p-$i {BURST_PADDING}; done; sleep 0.2; done"
                    ),
                ],
            ),
            PaneKind::Shell => ("shell", Vec::new()),
            PaneKind::Fixture => ("fixture", Vec::new()),
        };
        StartParams { runtime: runtime.into(), command, size, ..Default::default() }
    }
}

/// Where a pane stands, as far as the program knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Life {
    /// Started, and no close begun: the host must list it.
    Alive,
    /// A close is in flight: requests naming it may find it gone.
    Closing,
    /// A close was in flight when the host was killed: it may or may not
    /// have happened; the task that closed it finishes the close.
    Uncertain,
    /// Closed: the host must never list it again.
    Closed,
}

/// One pane in the book.
#[derive(Debug, Clone)]
pub struct PaneEntry {
    /// The pane id.
    pub id: PaneId,
    /// What it runs.
    pub kind: PaneKind,
    /// Where it stands.
    pub life: Life,
    /// The book's sequence number when its `started` answer arrived.
    pub registered_at: u64,
    /// The sequence number when its `closed` answer arrived.
    pub closed_at: Option<u64>,
    /// The host said its process has exited.
    pub exited: bool,
    /// The largest end offset any answer or event reported.
    pub max_end: u64,
    /// The generation last reported.
    pub generation: u64,
    /// The pid last reported.
    pub pid: u32,
    /// A follower follows it: client tasks never close it, nor interrupt
    /// it when it streams.
    pub followed: bool,
}

/// What the program believes about every pane it started.
#[derive(Debug)]
pub struct PaneBook {
    panes: Mutex<HashMap<PaneId, PaneEntry>>,
    sequence: AtomicU64,
    starts_lost: AtomicU64,
    /// How many panes the run keeps.
    pub target: usize,
}

impl PaneBook {
    /// An empty book for a run that keeps `target` panes.
    pub fn new(target: usize) -> PaneBook {
        PaneBook {
            panes: Mutex::new(HashMap::new()),
            sequence: AtomicU64::new(1),
            starts_lost: AtomicU64::new(0),
            target,
        }
    }

    fn panes(&self) -> std::sync::MutexGuard<'_, HashMap<PaneId, PaneEntry>> {
        self.panes.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The next sequence number: taken when a request is sent and when an
    /// answer that changes the book arrives, so the two can be ordered.
    pub fn tick(&self) -> u64 {
        self.sequence.fetch_add(1, Ordering::SeqCst)
    }

    /// Records a pane the host started.
    pub fn register(&self, summary: &PaneSummary, kind: PaneKind) {
        let registered_at = self.tick();
        let entry = PaneEntry {
            id: summary.id.clone(),
            kind,
            life: Life::Alive,
            registered_at,
            closed_at: None,
            exited: matches!(summary.state, PaneState::Exited(_)),
            max_end: summary.offset,
            generation: summary.generation,
            pid: summary.pid,
            followed: false,
        };
        self.panes().insert(summary.id.clone(), entry);
    }

    /// Notes a start whose answer was lost with the host: a pane the
    /// program does not know may be listed.
    pub fn start_lost(&self) {
        self.starts_lost.fetch_add(1, Ordering::SeqCst);
    }

    /// Starts whose answers were lost with the host.
    pub fn starts_lost(&self) -> u64 {
        self.starts_lost.load(Ordering::SeqCst)
    }

    /// A copy of one pane's entry.
    pub fn get(&self, id: &PaneId) -> Option<PaneEntry> {
        self.panes().get(id).cloned()
    }

    /// Copies of every entry.
    pub fn entries(&self) -> Vec<PaneEntry> {
        self.panes().values().cloned().collect()
    }

    /// Panes not closed nor being closed.
    pub fn alive_count(&self) -> usize {
        self.panes().values().filter(|entry| entry.life == Life::Alive).count()
    }

    /// A random alive pane that `wanted` accepts.
    pub fn pick(&self, rng: &mut Rng, wanted: impl Fn(&PaneEntry) -> bool) -> Option<PaneEntry> {
        let panes = self.panes();
        let candidates: Vec<&PaneEntry> =
            panes.values().filter(|entry| entry.life == Life::Alive && wanted(entry)).collect();
        if candidates.is_empty() {
            return None;
        }
        Some(candidates[rng.index(candidates.len())].clone())
    }

    /// Marks a pane as followed.
    pub fn set_followed(&self, id: &PaneId) {
        if let Some(entry) = self.panes().get_mut(id) {
            entry.followed = true;
        }
    }

    /// Claims an alive, unfollowed pane for closing (exited ones first,
    /// most of the time); no other task closes it meanwhile.
    pub fn claim_for_close(&self, rng: &mut Rng) -> Option<PaneId> {
        let mut panes = self.panes();
        let closable = |entry: &&PaneEntry| entry.life == Life::Alive && !entry.followed;
        let exited: Vec<PaneId> =
            panes.values().filter(closable).filter(|entry| entry.exited).map(|entry| entry.id.clone()).collect();
        let candidates: Vec<PaneId> = if !exited.is_empty() && rng.percent(80) {
            exited
        } else {
            panes.values().filter(closable).map(|entry| entry.id.clone()).collect()
        };
        if candidates.is_empty() {
            return None;
        }
        let id = candidates[rng.index(candidates.len())].clone();
        if let Some(entry) = panes.get_mut(&id) {
            entry.life = Life::Closing;
        }
        Some(id)
    }

    /// Sets a pane's life.
    pub fn set_life(&self, id: &PaneId, life: Life) {
        let closed_at = (life == Life::Closed).then(|| self.tick());
        if let Some(entry) = self.panes().get_mut(id) {
            entry.life = life;
            if closed_at.is_some() {
                entry.closed_at = closed_at;
            }
        }
    }

    /// Notes that the host said the pane's process has exited.
    pub fn mark_exited(&self, id: &PaneId) {
        if let Some(entry) = self.panes().get_mut(id) {
            entry.exited = true;
        }
    }

    /// Notes what an answer reported about a pane. Returns a complaint
    /// when its end offset is below `floor`, the largest end known when
    /// the request was sent (offsets never go back).
    pub fn observe(&self, summary: &PaneSummary, floor: u64) -> Result<(), String> {
        let mut panes = self.panes();
        let Some(entry) = panes.get_mut(&summary.id) else { return Ok(()) };
        entry.max_end = entry.max_end.max(summary.offset);
        entry.generation = summary.generation;
        entry.pid = summary.pid;
        if matches!(summary.state, PaneState::Exited(_)) {
            entry.exited = true;
        }
        if summary.offset < floor {
            return Err(format!(
                "pane {} reports end offset {} after an earlier answer reported {floor}",
                summary.id, summary.offset
            ));
        }
        Ok(())
    }

    /// Notes an end offset seen in an event or answer.
    pub fn observe_end(&self, id: &PaneId, end: u64) {
        if let Some(entry) = self.panes().get_mut(id) {
            entry.max_end = entry.max_end.max(end);
        }
    }
}
