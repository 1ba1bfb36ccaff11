//! Checking what the followers received: each run of bytes compared with a
//! fresh subscription from the run's start (byte-exact wherever both hold
//! the bytes), each announced gap checked against what the host still
//! holds, and the numbered lines of stream panes checked to run on without
//! a hole inside every run.

use crate::followers::{FollowRecord, Followers, Gap, GapKind, Segment};
use crate::link::{ErrorClass, Link};
use crate::panes::Life;
use crate::world::World;
use panehost_client::ClientOptions;
use panehost_ipc::{Event, PaneId, StreamStart};
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

/// The pause between two verification passes during the load.
const PASS_INTERVAL: Duration = Duration::from_secs(10);
/// How long reading one run's bytes back from the host may take.
const READ_BACK_TIMEOUT: Duration = Duration::from_secs(60);

/// What a verification pass found, in bytes and counts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Tally {
    /// Runs of bytes compared.
    pub segments: u64,
    /// Bytes compared with the host's and equal.
    pub bytes_verified: u64,
    /// Bytes the host no longer held (older than its ring, or before its
    /// restart), so not compared.
    pub bytes_not_held: u64,
    /// Runs with a differing byte.
    pub mismatches: u64,
    /// Announced gaps checked against the host.
    pub gaps_checked: u64,
    /// Numbered lines checked to follow each other.
    pub lines_checked: u64,
}

impl Tally {
    fn add(&mut self, other: Tally) {
        self.segments += other.segments;
        self.bytes_verified += other.bytes_verified;
        self.bytes_not_held += other.bytes_not_held;
        self.mismatches += other.mismatches;
        self.gaps_checked += other.gaps_checked;
        self.lines_checked += other.lines_checked;
    }
}

/// What earlier passes verified: offsets per pane (so each byte is
/// compared once and counted once) and the gaps already checked.
#[derive(Debug, Default)]
pub struct VerifiedRanges {
    ranges: BTreeMap<PaneId, Vec<(u64, u64)>>,
    /// Offsets the host no longer held when a pass asked: never
    /// comparable again (a ring only moves on).
    given_up: BTreeMap<PaneId, Vec<(u64, u64)>>,
    gaps_checked: HashSet<(PaneId, u64)>,
    passes: u64,
}

impl VerifiedRanges {
    fn add(&mut self, pane: &PaneId, from: u64, to: u64) {
        if to > from {
            self.ranges.entry(pane.clone()).or_default().push((from, to));
        }
    }

    fn give_up(&mut self, pane: &PaneId, from: u64, to: u64) {
        if to > from {
            self.given_up.entry(pane.clone()).or_default().push((from, to));
        }
    }

    /// The first offset at or after `start` (and before `end`) that no
    /// pass verified or gave up on, counting from `start` on.
    fn first_unverified(&self, pane: &PaneId, start: u64, end: u64) -> u64 {
        let mut ranges: Vec<(u64, u64)> =
            self.ranges.get(pane).into_iter().chain(self.given_up.get(pane)).flatten().copied().collect();
        ranges.sort_unstable();
        let mut at = start;
        for (from, to) in ranges {
            if from <= at && to > at {
                at = to;
            }
        }
        at.min(end)
    }

    /// Bytes verified in at least one pass.
    pub fn total(&self) -> u64 {
        let mut total = 0;
        for ranges in self.ranges.values() {
            let mut ranges = ranges.clone();
            ranges.sort_unstable();
            let mut covered_to = 0u64;
            for (from, to) in ranges {
                let from = from.max(covered_to);
                if to > from {
                    total += to - from;
                    covered_to = to;
                }
            }
        }
        total
    }

    /// Announced gaps checked against the host so far.
    pub fn gaps_checked(&self) -> usize {
        self.gaps_checked.len()
    }

    /// Passes run so far.
    pub fn passes(&self) -> u64 {
        self.passes
    }
}

/// Compares what the followers received since the last pass with the
/// host's bytes, and checks the gaps announced since.
pub async fn verify_followers(world: &World, followers: &Followers, verified: &mut VerifiedRanges) -> Tally {
    let options = ClientOptions {
        request_timeout: Some(Duration::from_secs(30)),
        event_buffer: 4096,
        ..ClientOptions::named("panehost-soak verifier")
    };
    verified.passes += 1;
    let mut tally = Tally::default();
    for record in &followers.records {
        // Only what no pass verified yet, copied out of the live record.
        let (pane, segments, gaps) = {
            let record = record.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
            let segments: Vec<Segment> = record
                .segments
                .iter()
                .filter_map(|segment| {
                    let from = verified.first_unverified(&record.pane, segment.start, segment.end());
                    (from < segment.end()).then(|| Segment {
                        start: from,
                        bytes: segment.bytes[(from - segment.start) as usize..].to_vec(),
                    })
                })
                .collect();
            let gaps: Vec<Gap> = record
                .gaps
                .iter()
                .filter(|gap| matches!(gap.kind, GapKind::Resync | GapKind::Skipped))
                .filter(|gap| !verified.gaps_checked.contains(&(record.pane.clone(), gap.from)))
                .copied()
                .collect();
            (record.pane.clone(), segments, gaps)
        };
        if segments.is_empty() && gaps.is_empty() {
            continue;
        }
        let link = match world.life.connect(&options).await {
            Ok(link) => link,
            Err(problem) => {
                world.ledger.fail("verify", problem);
                return tally;
            }
        };
        for segment in &segments {
            tally.add(compare_segment(world, &link, &pane, segment, verified).await);
        }
        for gap in &gaps {
            if check_gap(world, &link, &pane, gap.from, gap.to).await {
                verified.gaps_checked.insert((pane.clone(), gap.from));
                tally.gaps_checked += 1;
            }
        }
    }
    tally
}

/// Reads the host's bytes from the run's start and compares them.
async fn compare_segment(
    world: &World,
    link: &Link,
    pane: &PaneId,
    segment: &Segment,
    verified: &mut VerifiedRanges,
) -> Tally {
    let mut tally = Tally { segments: 1, ..Tally::default() };
    let len = segment.bytes.len() as u64;
    let end = segment.end();
    let mut stream = match link.client.subscribe(pane, Some(segment.start)).await {
        Ok(stream) => stream,
        Err(error) => {
            note_unreadable(world, link, pane, error, "reading back");
            tally.bytes_not_held = len;
            return tally;
        }
    };
    let held_from = match stream.start() {
        StreamStart::Replay { from } if *from == segment.start => segment.start,
        StreamStart::Snapshot { snapshot, skipped_from: Some(skipped) } if *skipped == segment.start => snapshot.offset,
        other => {
            world.ledger.fail(
                "verify",
                format!("{pane}: events from {} started with {}", segment.start, crate::starts::describe(other)),
            );
            return tally;
        }
    };
    if held_from >= end {
        tally.bytes_not_held = len;
        verified.give_up(pane, segment.start, end);
        return tally;
    }
    tally.bytes_not_held = held_from - segment.start;
    verified.give_up(pane, segment.start, held_from);
    let mut next = held_from;
    let mut compared_from = held_from;
    let deadline = tokio::time::Instant::now() + READ_BACK_TIMEOUT;
    while next < end {
        let event = match tokio::time::timeout_at(deadline, stream.next()).await {
            Ok(Some(event)) => event,
            Ok(None) if link.epoch < world.life.kills() => break,
            Ok(None) => {
                world.ledger.fail("verify", format!("{pane}: the read-back stream ended at {next}, before {end}"));
                break;
            }
            Err(_) if link.epoch < world.life.kills() => break,
            Err(_) => {
                world.ledger.fail(
                    "verify",
                    format!("{pane}: reading back to {end} took over {READ_BACK_TIMEOUT:?} (reached {next})"),
                );
                break;
            }
        };
        match event {
            Event::Output { offset, data } => {
                if offset != next {
                    world.ledger.fail("verify", format!("{pane}: read-back output at {offset}, expected {next}"));
                    break;
                }
                let data = data.as_slice();
                let overlap = data.len().min((end - offset) as usize);
                let mine = &segment.bytes[(offset - segment.start) as usize..][..overlap];
                if let Some(at) = mine.iter().zip(&data[..overlap]).position(|(a, b)| a != b) {
                    let differs = offset + at as u64;
                    tally.mismatches += 1;
                    world.ledger.fail(
                        "verify",
                        format!(
                            "{pane}: byte {differs} differs: the follower got {:?}, the host holds {:?}",
                            context(&segment.bytes, (differs - segment.start) as usize),
                            context(data, at)
                        ),
                    );
                    verified.add(pane, compared_from, differs);
                    tally.bytes_verified += differs - compared_from;
                    return tally;
                }
                next = offset + data.len() as u64;
            }
            Event::Resync { snapshot, .. } => {
                // The read-back itself fell behind: what it skipped is not
                // compared.
                let resumed = snapshot.offset.min(end);
                verified.add(pane, compared_from, next.min(end));
                tally.bytes_verified += next.min(end) - compared_from;
                tally.bytes_not_held += resumed.saturating_sub(next);
                verified.give_up(pane, next.min(end), resumed);
                next = snapshot.offset;
                compared_from = resumed;
            }
            Event::Exited { offset, .. } if offset < end => {
                world.ledger.fail(
                    "verify",
                    format!("{pane}: the host says its output ended at {offset}, but a follower got bytes up to {end}"),
                );
                break;
            }
            Event::Ended { .. } => {}
            _ => {}
        }
    }
    let reached = next.min(end);
    verified.add(pane, compared_from, reached);
    tally.bytes_verified += reached.saturating_sub(compared_from);
    tally
}

/// A gap announced as skipped must still be skipped: the host holds no
/// byte at its start now (its ring only moves on, and a restarted host
/// never holds bytes from before it). True when it was checked.
async fn check_gap(world: &World, link: &Link, pane: &PaneId, from: u64, to: u64) -> bool {
    match link.client.subscribe(pane, Some(from)).await {
        Ok(stream) => {
            match stream.start() {
                StreamStart::Snapshot { skipped_from: Some(skipped), .. } if *skipped == from => {}
                other => world.ledger.fail(
                    "verify",
                    format!(
                        "{pane}: bytes {from}..{to} were announced as skipped, but events from {from} now starts with {}",
                        crate::starts::describe(other)
                    ),
                ),
            }
            true
        }
        Err(error) => {
            note_unreadable(world, link, pane, error, "checking a gap");
            false
        }
    }
}

/// A pane that cannot be read back: fine when it was closed.
fn note_unreadable(world: &World, link: &Link, pane: &PaneId, error: panehost_client::ClientError, doing: &str) {
    match world.life.classify(link.epoch, error) {
        ErrorClass::Host(body) if body.code == "UNKNOWN_PANE" => {
            if world.book.get(pane).is_some_and(|entry| entry.life == Life::Alive) {
                world.ledger.fail("verify", format!("{pane}: {doing}: {body}, but the pane was never closed"));
            }
        }
        ErrorClass::Host(body) => world.ledger.fail("verify", format!("{pane}: {doing}: {body}")),
        // Checked again by a later pass.
        ErrorClass::LostToRestart => {}
        ErrorClass::Broken(problem) => world.ledger.fail("verify", format!("{pane}: {doing}: {problem}")),
    }
}

/// Up to 24 bytes either side of `at`, for a report.
fn context(bytes: &[u8], at: usize) -> String {
    let from = at.saturating_sub(24);
    let to = (at + 24).min(bytes.len());
    format!(
        "{}[{}]{}",
        escape(&bytes[from..at]),
        escape(&bytes[at..(at + 1).min(to)]),
        escape(&bytes[(at + 1).min(to)..to])
    )
}

fn escape(bytes: &[u8]) -> String {
    bytes.iter().flat_map(|b| std::ascii::escape_default(*b)).map(char::from).collect()
}

/// Checks that the `p-N` lines inside each run of a stream pane's bytes
/// number on without a hole or a repeat. Typed text may share a line with
/// a number (its echo), but never holds `p-` itself.
pub fn check_numbered_lines(world: &World, record: &FollowRecord) -> Tally {
    let mut tally = Tally::default();
    for segment in &record.segments {
        let mut previous: Option<(u64, u64)> = None;
        let mut position = 0usize;
        let lines: Vec<&[u8]> = segment.bytes.split_inclusive(|b| *b == b'\n').collect();
        let count = lines.len();
        for (index, line) in lines.into_iter().enumerate() {
            let at = segment.start + position as u64;
            position += line.len();
            // The first piece may be the tail of a line, the last one
            // unfinished.
            let complete = line.ends_with(b"\n");
            if index == 0 || index + 1 == count && !complete {
                continue;
            }
            let Some(number) = number_in(line) else { continue };
            tally.lines_checked += 1;
            if let Some((last, last_at)) = previous {
                if number != last + 1 {
                    world.ledger.fail(
                        "numbered lines",
                        format!(
                            "{}: line p-{number} at offset {at} follows p-{last} (at {last_at}) in bytes received without a gap",
                            record.pane
                        ),
                    );
                    break;
                }
            }
            previous = Some((number, at));
        }
    }
    tally
}

/// The number after the first `p-` of a line.
fn number_in(line: &[u8]) -> Option<u64> {
    let at = line.windows(2).position(|pair| pair == b"p-")?;
    let digits: Vec<u8> = line[at + 2..].iter().copied().take_while(u8::is_ascii_digit).collect();
    std::str::from_utf8(&digits).ok()?.parse().ok()
}

/// Runs a verification pass every 10 s until the world stops, so that the
/// bytes of busy panes are compared before their ring moves on.
pub async fn run_passes(
    world: Arc<World>,
    followers: Arc<Followers>,
    verified: Arc<tokio::sync::Mutex<VerifiedRanges>>,
) {
    while !world.pause(PASS_INTERVAL).await {
        let mut verified = verified.lock().await;
        verify_followers(&world, &followers, &mut verified).await;
    }
}
