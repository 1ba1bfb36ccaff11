//! The followers: one per pane, subscribed from offset 0 as soon as the
//! pane's start is answered, recording every byte at its offset and every
//! gap the host announces; after a kill of the host each resumes with
//! `reconnect` (generation and offset). What they hold is what the checks
//! compare with replays and search for markers.

use crate::life::Failed;
use crate::world::{lock, World};
use panehost_client::{ClientOptions, EventStream};
use panehost_ipc::{Event, PaneId, StreamStart};
use std::sync::{Arc, Mutex};
use std::time::Duration;

/// Why bytes are missing between two segments.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GapKind {
    /// A `resync` event.
    Resync,
    /// A stream start with `skipped_from`.
    Skipped,
    /// A `generation_changed` start.
    Generation,
    /// Output that did not go on where the last ended, unannounced.
    Unannounced,
}

/// Bytes missing from a record, `[from, to)`.
#[derive(Debug, Clone, Copy)]
pub struct Gap {
    /// The first missing offset.
    pub from: u64,
    /// Where output went on.
    pub to: u64,
    /// Why.
    pub kind: GapKind,
}

/// Contiguous bytes from `start`.
#[derive(Debug, Clone, Default)]
pub struct Segment {
    /// The offset of `bytes[0]`.
    pub start: u64,
    /// The bytes.
    pub bytes: Vec<u8>,
}

impl Segment {
    /// One past the last byte.
    pub fn end(&self) -> u64 {
        self.start + self.bytes.len() as u64
    }
}

/// What one follower received.
#[derive(Debug, Clone, Default)]
pub struct FollowRecord {
    /// Contiguous runs, oldest first.
    pub segments: Vec<Segment>,
    /// The gaps between them.
    pub gaps: Vec<Gap>,
    /// The generation of the last stream start.
    pub generation: u64,
    /// Streams opened (the first and every resume).
    pub streams: u64,
    /// The `exited` event's offset, once it came.
    pub exited_at: Option<u64>,
    /// The `ended` reason, once it came.
    pub ended: Option<String>,
    /// It stopped following.
    pub done: bool,
    /// The checks compared its bytes with a replay up to here.
    pub verified_to: u64,
    /// Whether a turn is open as this stream told it (`None` until the
    /// stream's first turn event: a stream may begin inside a turn).
    pub turn_open: Option<bool>,
    /// The last turn event, to tell a repeat at a resume offset.
    pub last_turn: Option<(bool, u64, String)>,
}

impl FollowRecord {
    /// The offset the next output must start at, once a stream began.
    pub fn next(&self) -> Option<u64> {
        self.segments.last().map(Segment::end)
    }

    fn gap_to(&mut self, to: u64, kind: GapKind) {
        let from = self.next().unwrap_or(0);
        if to != from {
            self.gaps.push(Gap { from, to, kind });
        }
        match self.segments.last_mut() {
            Some(last) if last.bytes.is_empty() => last.start = to,
            _ => self.segments.push(Segment { start: to, bytes: Vec::new() }),
        }
    }

    /// Every byte received, in order (segments joined).
    pub fn all_bytes(&self) -> Vec<u8> {
        self.segments.iter().flat_map(|segment| segment.bytes.iter().copied()).collect()
    }

    /// The bytes it holds of `[from, to)`, as `(offset, bytes)` pieces.
    pub fn pieces(&self, from: u64, to: u64) -> Vec<(u64, &[u8])> {
        let mut pieces = Vec::new();
        for segment in &self.segments {
            let start = segment.start.max(from);
            let end = segment.end().min(to);
            if start < end {
                let slice = &segment.bytes[(start - segment.start) as usize..(end - segment.start) as usize];
                pieces.push((start, slice));
            }
        }
        pieces
    }
}

/// A record shared by its follower and the checks.
pub type SharedRecord = Arc<Mutex<FollowRecord>>;

/// Follows `pane` until its subscription ends or the world stops.
pub async fn run(world: Arc<World>, pane: PaneId, record: SharedRecord) {
    let options = ClientOptions {
        request_timeout: Some(Duration::from_secs(30)),
        event_buffer: 4096,
        ..ClientOptions::named(format!("explore follower {pane}"))
    };
    'streams: while !world.stopping() {
        let Some((mut stream, epoch)) = open(&world, &options, &pane, &record).await else { break };
        loop {
            tokio::select! {
                _ = world.stopped() => break 'streams,
                event = stream.next() => match event {
                    Some(event) => {
                        if !take_event(&world, &pane, &record, event) {
                            break 'streams;
                        }
                    }
                    None => {
                        if world.stopping() {
                            break 'streams;
                        }
                        if epoch >= world.life.kills() {
                            world.fail("follower", format!("{pane}: the connection closed with no kill of the host"));
                            break 'streams;
                        }
                        world.count("follower resumes after a host kill", 1);
                        continue 'streams;
                    }
                },
            }
        }
    }
    lock(&record).done = true;
}

/// Opens the follower's stream: `events` from 0 the first time, then
/// `reconnect`; checks how it starts.
async fn open(
    world: &World,
    options: &ClientOptions,
    pane: &PaneId,
    record: &SharedRecord,
) -> Option<(EventStream, u64)> {
    loop {
        if world.stopping() {
            return None;
        }
        let (client, epoch) = match world.life.connect(options).await {
            Ok(opened) => opened,
            Err(problem) => {
                world.fail("follower", format!("{pane}: {problem}"));
                return None;
            }
        };
        let resume = {
            let record = lock(record);
            record.next().map(|next| (record.generation, next))
        };
        let opened = match resume {
            None => client.subscribe(pane, Some(0)).await,
            Some((generation, offset)) => client.reconnect(pane, generation, offset).await,
        };
        let stream = match opened {
            Ok(stream) => stream,
            Err(error) => match world.life.classify(epoch, error) {
                Failed::Lost => continue,
                Failed::Host(body) if body.code == "UNKNOWN_PANE" => {
                    let gone = world.book().panes.get(pane).is_some_and(|entry| entry.may_be_gone());
                    if !gone {
                        world
                            .fail("follower", format!("{pane}: resuming answered {body}, but the pane was not closed"));
                    }
                    return None;
                }
                Failed::Host(body) => {
                    world.fail("follower", format!("{pane}: resuming answered {body}"));
                    return None;
                }
                Failed::Broken(problem) => {
                    world.fail("follower", format!("{pane}: resuming failed: {problem}"));
                    return None;
                }
            },
        };
        let asked = resume.map(|(_, offset)| offset).unwrap_or(0);
        let mut rec = lock(record);
        rec.streams += 1;
        rec.turn_open = None;
        match stream.start() {
            StreamStart::Replay { from } => {
                if *from != asked {
                    world.fail("follower", format!("{pane}: asked to resume at {asked}, the replay starts at {from}"));
                }
                rec.gap_to(*from, GapKind::Unannounced);
            }
            StreamStart::Snapshot { snapshot, skipped_from } => {
                if *skipped_from != Some(asked) || snapshot.offset < asked {
                    world.fail(
                        "follower",
                        format!(
                            "{pane}: resuming at {asked} began with a snapshot at {} naming skipped_from {skipped_from:?}",
                            snapshot.offset
                        ),
                    );
                }
                world.count("announced gaps (skipped_from)", 1);
                world.count("announced gap bytes", snapshot.offset.saturating_sub(asked));
                rec.gap_to(snapshot.offset, GapKind::Skipped);
            }
            StreamStart::GenerationChanged { previous, snapshot } => {
                let replaced = world.book().panes.get(pane).is_some_and(|entry| entry.keeper_lost);
                if !replaced || *previous != rec.generation {
                    world.fail(
                        "follower",
                        format!(
                            "{pane}: generation changed from {previous} (last seen {}) to {} though its keeper lived",
                            rec.generation,
                            stream.generation()
                        ),
                    );
                }
                world.count("generation changes", 1);
                rec.gap_to(snapshot.offset, GapKind::Generation);
            }
        }
        rec.generation = stream.generation();
        drop(rec);
        return Some((stream, epoch));
    }
}

/// Records one event; false when the subscription is over.
fn take_event(world: &World, pane: &PaneId, record: &SharedRecord, event: Event) -> bool {
    let mut record = lock(record);
    let next = record.next().unwrap_or(0);
    match event {
        Event::Output { offset, data } => {
            if offset != next {
                world.fail(
                    "follower",
                    format!("{pane}: output at {offset}, but the last ended at {next}, no gap announced"),
                );
                record.gap_to(offset, GapKind::Unannounced);
            }
            if let Some(last) = record.segments.last_mut() {
                last.bytes.extend_from_slice(data.as_slice());
            }
        }
        Event::Resync { skipped_from, snapshot } => {
            if skipped_from != next || snapshot.offset < skipped_from {
                world.fail("follower", format!("{pane}: resync from {skipped_from} to {} at {next}", snapshot.offset));
            }
            world.count("announced gaps (resync)", 1);
            record.gap_to(snapshot.offset, GapKind::Resync);
        }
        Event::Exited { offset, .. } => {
            if offset != next {
                world.fail("follower", format!("{pane}: exited at offset {offset}, but output reached {next}"));
            }
            record.exited_at = Some(offset);
        }
        Event::Ended { reason } => {
            record.ended = Some(reason);
            return false;
        }
        Event::TurnStarted { offset, source } => {
            // Every byte before a turn event's offset comes before it.
            if offset > next {
                world.fail(
                    "turn events",
                    format!("{pane}: turn_started at {offset} before the output reached it ({next})"),
                );
            }
            let repeat = record.last_turn.as_ref() == Some(&(true, offset, source.clone()));
            if record.turn_open == Some(true) && !repeat {
                world.fail("turn events", format!("{pane}: turn_started ({source}) at {offset} while a turn was open"));
            }
            world.count("turn events followed", 1);
            record.turn_open = Some(true);
            record.last_turn = Some((true, offset, source));
        }
        Event::TurnCompleted { offset, source, .. } => {
            if offset > next {
                world.fail(
                    "turn events",
                    format!("{pane}: turn_completed at {offset} before the output reached it ({next})"),
                );
            }
            world.count("turn events followed", 1);
            record.turn_open = Some(false);
            record.last_turn = Some((false, offset, source));
        }
        _ => {}
    }
    true
}
