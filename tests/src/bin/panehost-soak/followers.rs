//! The followers: each keeps a subscription to one pane and records every
//! byte it receives at its offset, with every gap the host announces
//! (resync, skipped bytes, a generation change). It reconnects with
//! `reconnect` (generation and offset) whenever its connection drops, and
//! now and then on purpose. Some read slowly, so the host resyncs them.

use crate::ledger::Verdict;
use crate::link::{ErrorClass, Link};
use crate::panes::{Life, PaneKind};
use crate::starts::{check_events_start, check_reconnect_start, CheckedStart};
use crate::world::World;
use panehost_client::{ClientOptions, EventStream};
use panehost_ipc::{Event, PaneId};
use panehost_tests::rng::Rng;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// How long a slow follower reads before it pauses.
const SLOW_READING: Duration = Duration::from_secs(10);
/// How long a slow follower stops reading: long enough for a burst pane
/// to write more than its ring holds.
const SLOW_PAUSE: Duration = Duration::from_secs(20);
/// How long a follower tries to resume before it gives up.
const RESUME_TIMEOUT: Duration = Duration::from_secs(150);

/// Why bytes are missing between two segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum GapKind {
    /// A `resync` event: the follower fell out of the ring.
    Resync,
    /// A stream start with `skipped_from`: the host no longer held the
    /// offset asked for (the ring moved on, or the host restarted).
    Skipped,
    /// A `generation_changed` start.
    Generation,
    /// Output that did not continue where the last ended, unannounced.
    Unannounced,
}

impl GapKind {
    /// The gap's name in the report.
    pub fn label(self) -> &'static str {
        match self {
            GapKind::Resync => "resync",
            GapKind::Skipped => "skipped (ring or restart)",
            GapKind::Generation => "generation change",
            GapKind::Unannounced => "unannounced",
        }
    }
}

/// Bytes missing from a follower's record, `[from, to)`.
#[derive(Debug, Clone, Copy)]
pub struct Gap {
    /// The first missing offset.
    pub from: u64,
    /// The offset output continued at.
    pub to: u64,
    /// Why.
    pub kind: GapKind,
}

/// Contiguous bytes received, from `start`.
#[derive(Debug, Clone, Default)]
pub struct Segment {
    /// The offset of `bytes[0]`.
    pub start: u64,
    /// The bytes, in order.
    pub bytes: Vec<u8>,
}

impl Segment {
    /// One past the last byte.
    pub fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }
}

/// What one follower received.
#[derive(Debug, Clone)]
pub struct FollowRecord {
    /// The pane.
    pub pane: PaneId,
    /// What it runs.
    pub kind: PaneKind,
    /// It pauses its reading now and then.
    pub slow: bool,
    /// The bytes, in contiguous runs, oldest first.
    pub segments: Vec<Segment>,
    /// The announced (and unannounced) gaps between them.
    pub gaps: Vec<Gap>,
    /// The generation of the last stream start.
    pub generation: u64,
    /// Subscriptions resumed with `reconnect`.
    pub reconnects: u64,
    /// The host kills before the current stream's connection was opened;
    /// `None` while it has no stream.
    pub connected_epoch: Option<u64>,
    /// The subscription's `ended` reason, once it came.
    pub ended: Option<String>,
    /// It stopped following (ended, the pane is gone, or it gave up).
    pub done: bool,
}

impl FollowRecord {
    fn new(pane: PaneId, kind: PaneKind, slow: bool) -> FollowRecord {
        FollowRecord {
            pane,
            kind,
            slow,
            segments: Vec::new(),
            gaps: Vec::new(),
            generation: 0,
            reconnects: 0,
            connected_epoch: None,
            ended: None,
            done: false,
        }
    }

    /// The offset the next output must start at, once a stream began.
    pub fn next(&self) -> Option<u64> {
        self.segments.last().map(Segment::end)
    }

    fn begin_segment(&mut self, at: u64) {
        match self.segments.last_mut() {
            Some(last) if last.bytes.is_empty() => last.start = at,
            _ => self.segments.push(Segment { start: at, bytes: Vec::new() }),
        }
    }

    /// Starts a segment at `at` unless output already continues there (a
    /// replay from where the last segment ended).
    fn begin_segment_if_needed(&mut self, at: u64) {
        if self.next() != Some(at) {
            self.begin_segment(at);
        }
    }

    fn note_gap(&mut self, from: u64, to: u64, kind: GapKind) {
        if to != from {
            self.gaps.push(Gap { from, to, kind });
        }
        self.begin_segment(to);
    }

    /// Bytes received in all.
    pub fn bytes(&self) -> u64 {
        self.segments.iter().map(|segment| segment.bytes.len() as u64).sum()
    }
}

/// A record shared by its follower and whoever checks it.
pub type SharedRecord = Arc<Mutex<FollowRecord>>;

/// Every follower's record, and a signal whenever one (re)subscribes.
#[derive(Debug)]
pub struct Followers {
    /// The records, one per follower.
    pub records: Vec<SharedRecord>,
    changes: watch::Sender<u64>,
}

impl Followers {
    /// Records for these panes: `(pane, kind, slow)`.
    pub fn new(panes: Vec<(PaneId, PaneKind, bool)>) -> Followers {
        let records = panes
            .into_iter()
            .map(|(pane, kind, slow)| Arc::new(Mutex::new(FollowRecord::new(pane, kind, slow))))
            .collect();
        Followers { records, changes: watch::Sender::new(0) }
    }

    /// Copies of every record.
    pub fn snapshot(&self) -> Vec<FollowRecord> {
        self.records.iter().map(|record| lock(record).clone()).collect()
    }

    /// Waits until every follower that still follows has a stream on a
    /// connection opened after `kills` host kills; false after `timeout`.
    pub async fn wait_all_connected(&self, kills: u64, timeout: Duration) -> bool {
        let mut changes = self.changes.subscribe();
        let all = |_: &u64| {
            self.records.iter().all(|record| {
                let record = lock(record);
                record.done || record.connected_epoch.is_some_and(|epoch| epoch >= kills)
            })
        };
        tokio::time::timeout(timeout, async { changes.wait_for(all).await.is_ok() }).await.unwrap_or(false)
    }

    fn changed(&self) {
        self.changes.send_modify(|n| *n += 1);
    }
}

fn lock(record: &SharedRecord) -> std::sync::MutexGuard<'_, FollowRecord> {
    record.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// Follows the pane of `followers.records[index]` until the world stops.
pub async fn run(world: Arc<World>, followers: Arc<Followers>, index: usize) {
    let record = Arc::clone(&followers.records[index]);
    let (pane, slow) = {
        let record = lock(&record);
        (record.pane.clone(), record.slow)
    };
    let mut rng = Rng::new(world.settings.seed, 2000 + index as u64);
    let options = ClientOptions {
        request_timeout: Some(Duration::from_secs(30)),
        // A slow follower's connection stops reading almost at once.
        event_buffer: if slow { 4 } else { 4096 },
        ..ClientOptions::named(format!("panehost-soak follower {index}"))
    };
    let mut current: Option<(Link, EventStream)> = None;
    let mut next_drop = Instant::now() + Duration::from_secs(rng.range(10, 30));
    let mut next_pause = Instant::now() + Duration::from_secs(rng.range(3, 10));
    while !world.stopping() {
        let (link, mut stream) = match current.take() {
            Some(open) => open,
            None => match resume(&world, &options, &record).await {
                Some(open) => {
                    lock(&record).connected_epoch = Some(open.0.epoch);
                    followers.changed();
                    open
                }
                None => break,
            },
        };
        if slow && Instant::now() >= next_pause {
            // Stop reading: the connection's buffer fills, then its socket.
            if world.pause(SLOW_PAUSE).await {
                break;
            }
            next_pause = Instant::now() + SLOW_READING;
        }
        tokio::select! {
            _ = world.stopped() => break,
            _ = tokio::time::sleep_until(next_drop), if !slow => {
                // Drop the connection on purpose, as a reloaded page would.
                drop(stream);
                drop(link);
                lock(&record).connected_epoch = None;
                world.ledger.count("follower reconnects (on purpose)", 1);
                next_drop = Instant::now() + Duration::from_secs(rng.range(10, 30));
            }
            event = stream.next() => match event {
                Some(event) => {
                    if take_event(&world, &record, event) {
                        current = Some((link, stream));
                    } else {
                        break;
                    }
                }
                None => {
                    lock(&record).connected_epoch = None;
                    if link.epoch < world.life.kills() {
                        world.ledger.count("follower reconnects (host killed)", 1);
                    } else {
                        world.ledger.fail(
                            "follower",
                            format!("the connection following {pane} closed with no kill of the host"),
                        );
                        world.ledger.count("follower reconnects (connection broke)", 1);
                    }
                }
            },
        }
    }
    {
        let mut record = lock(&record);
        record.done = true;
        record.connected_epoch = None;
        if let Some(next) = record.next() {
            world.book.observe_end(&pane, next);
        }
    }
    followers.changed();
}

/// Records one event; false when the subscription is over.
fn take_event(world: &World, record: &SharedRecord, event: Event) -> bool {
    let mut record = lock(record);
    let next = record.next().unwrap_or(0);
    let pane = record.pane.clone();
    match event {
        Event::Output { offset, data } => {
            if offset != next {
                world.ledger.fail(
                    "follower",
                    format!("{pane}: output at offset {offset}, but the last ended at {next}, with no gap announced"),
                );
                if offset > next {
                    record.note_gap(next, offset, GapKind::Unannounced);
                } else {
                    record.begin_segment(offset);
                }
            }
            if let Some(last) = record.segments.last_mut() {
                last.bytes.extend_from_slice(data.as_slice());
            }
        }
        Event::Resync { skipped_from, snapshot } => {
            if skipped_from != next || snapshot.offset < skipped_from {
                world.ledger.fail(
                    "follower",
                    format!("{pane}: resync from {skipped_from} to {} when output had reached {next}", snapshot.offset),
                );
            }
            world.ledger.count("follower resyncs", 1);
            record.note_gap(next, snapshot.offset, GapKind::Resync);
        }
        Event::Exited { offset, .. } => {
            world.book.mark_exited(&pane);
            if offset != next {
                world.ledger.fail("follower", format!("{pane}: exited at offset {offset}, but output reached {next}"));
            }
        }
        Event::Ended { reason } => {
            if reason == "closed" && world.book.get(&pane).is_some_and(|entry| entry.life == Life::Alive) {
                world
                    .ledger
                    .fail("follower", format!("{pane}: the subscription ended as closed, but no one closed it"));
            }
            record.ended = Some(reason);
            return false;
        }
        Event::TurnStarted { .. } | Event::TurnCompleted { .. } => world.ledger.count("follower turn events", 1),
        _ => {}
    }
    true
}

/// Opens the follower's stream: `events` from 0 the first time, then
/// `reconnect` with the generation and offset it reached; retried while
/// the host is down. `None` when it cannot follow any more.
async fn resume(world: &World, options: &ClientOptions, record: &SharedRecord) -> Option<(Link, EventStream)> {
    let (pane, resume_at) = {
        let record = lock(record);
        (record.pane.clone(), record.next().map(|next| (record.generation, next)))
    };
    let deadline = Instant::now() + RESUME_TIMEOUT;
    while Instant::now() < deadline && !world.stopping() {
        let link = match world.life.connect(options).await {
            Ok(link) => link,
            Err(problem) => {
                world.ledger.fail("follower", format!("{pane}: {problem}"));
                return None;
            }
        };
        let opened = match resume_at {
            None => link.client.subscribe(&pane, Some(0)).await,
            Some((generation, offset)) => link.client.reconnect(&pane, generation, offset).await,
        };
        let stream = match opened {
            Ok(stream) => stream,
            Err(error) => {
                let what = if resume_at.is_some() { "follower reconnect" } else { "follower subscribe" };
                match world.life.classify(link.epoch, error) {
                    ErrorClass::LostToRestart => {
                        world.ledger.record(what, Verdict::LostToRestart);
                        continue;
                    }
                    ErrorClass::Host(body) if body.code == "UNKNOWN_PANE" => {
                        let alive = world.book.get(&pane).is_some_and(|entry| entry.life == Life::Alive);
                        let verdict = if alive {
                            Verdict::Failed(format!("{pane}: {body}, but the pane was never closed"))
                        } else {
                            Verdict::Expected(body.code)
                        };
                        world.ledger.record(what, verdict);
                        return None;
                    }
                    other => {
                        world.ledger.record(what, other.verdict(&pane.to_string(), |_| false));
                        if world.pause(Duration::from_secs(1)).await {
                            return None;
                        }
                        continue;
                    }
                }
            }
        };
        let checked = match resume_at {
            None => check_events_start(Some(0), stream.start()),
            Some((generation, offset)) => check_reconnect_start(generation, offset, stream.start()),
        };
        let what = if resume_at.is_some() { "follower reconnect" } else { "follower subscribe" };
        let mut record = lock(record);
        let start = match checked {
            Ok(start) => {
                world.ledger.record(what, Verdict::Ok);
                start
            }
            Err(problem) => {
                world.ledger.record(what, Verdict::Failed(format!("{pane}: {problem}")));
                // Follow on from wherever the stream says output begins.
                let output_from = crate::starts::output_from(stream.start());
                CheckedStart {
                    output_from,
                    announced_gap: Some((resume_at.map(|(_, offset)| offset).unwrap_or(0), output_from)),
                    generation_changed: false,
                }
            }
        };
        if resume_at.is_some() {
            record.reconnects += 1;
        }
        record.generation = stream.generation();
        let kind = if start.generation_changed { GapKind::Generation } else { GapKind::Skipped };
        match start.announced_gap {
            Some((from, to)) => record.note_gap(from, to, kind),
            None => record.begin_segment_if_needed(start.output_from),
        }
        if start.generation_changed && start.announced_gap.is_none() {
            // The new generation's output may begin before where the old
            // one's ended: a new segment, compared on its own.
            record.begin_segment(start.output_from);
        }
        return Some((link, stream));
    }
    None
}
