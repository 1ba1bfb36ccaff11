//! The checks on what the clients and followers saw: each follower's bytes
//! against a fresh replay (`events` from the offset it was last checked
//! at), the bytes `events` operations received against the followers',
//! every command's markers in its pane's output (exactly once, in order,
//! never for a command the host refused to type), and at the end the
//! panes listed, their closes, the host's exit and what it left running.

use crate::command::{self, Mark};
use crate::follow::{FollowRecord, GapKind};
use crate::host::ExploreHost;
use crate::world::{lock, Expect, Life, World};
use panehost_client::{Client, ClientOptions};
use panehost_ipc::{Event, PaneId, StreamStart};
use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// How long a replay may take to reach the follower's end.
const REPLAY_TIMEOUT: Duration = Duration::from_secs(10);

fn control_options(name: &str) -> ClientOptions {
    ClientOptions { request_timeout: Some(Duration::from_secs(30)), event_buffer: 4096, ..ClientOptions::named(name) }
}

/// Compares what each follower holds past the offset it was last checked
/// at with a fresh `events` replay from there.
pub async fn compare_with_replays(world: &Arc<World>) {
    let targets: Vec<(PaneId, crate::follow::SharedRecord)> = world
        .book()
        .panes
        .iter()
        .filter(|(_, entry)| matches!(entry.life, Life::Alive | Life::Closing))
        .map(|(id, entry)| (id.clone(), Arc::clone(&entry.record)))
        .collect();
    let client = match Client::connect(&world.life.socket, &control_options("explore replay")).await {
        Ok(client) => client,
        Err(error) => {
            world.fail("replay", format!("cannot connect: {error}"));
            return;
        }
    };
    for (pane, record) in targets {
        let copy = lock(&record).clone();
        let Some(to) = copy.next() else { continue };
        let from = copy.verified_to.min(to);
        if from == to {
            continue;
        }
        match replay(&client, &pane, from, to).await {
            Ok((start, bytes, gap)) => {
                let compared = compare(world, &pane, &copy, start, &bytes, "a replay");
                world.count("bytes compared with replays", compared);
                if let Some((gone_from, gone_to)) = gap {
                    // Bytes a killed host had in hand: the follower cannot
                    // have had any of them either.
                    if !copy.pieces(gone_from, gone_to).is_empty() {
                        world.fail(
                            "replay",
                            format!("{pane}: a replay skipped {gone_from}..{gone_to}, which the follower got"),
                        );
                    }
                    world.count("replays that reached an announced gap", 1);
                }
                lock(&record).verified_to = to;
            }
            Err(problem) if problem.contains("UNKNOWN_PANE") => {
                let gone = world.book().panes.get(&pane).is_some_and(|entry| entry.may_be_gone());
                if !gone {
                    world.fail("replay", format!("{pane}: {problem}"));
                }
            }
            Err(problem) => world.fail("replay", format!("{pane}: {problem}")),
        }
    }
}

/// The pane's bytes from `from` (or from where the host still holds them)
/// up to `to`: `(offset of the first, bytes, the range of a gap the host
/// announced after them, where the replay stops)`.
async fn replay(
    client: &Client,
    pane: &PaneId,
    from: u64,
    to: u64,
) -> Result<(u64, Vec<u8>, Option<(u64, u64)>), String> {
    let mut stream = client.subscribe(pane, Some(from)).await.map_err(|e| e.to_string())?;
    let start = match stream.start() {
        StreamStart::Replay { from: at } if *at == from => from,
        StreamStart::Snapshot { snapshot, skipped_from: Some(at) } if *at == from => snapshot.offset,
        other => return Err(format!("events from {from} began with {other:?}")),
    };
    let mut next = start;
    let mut bytes = Vec::new();
    let deadline = Instant::now() + REPLAY_TIMEOUT;
    while next < to {
        let event = tokio::select! {
            _ = tokio::time::sleep_until(deadline) => {
                return Err(format!("the replay from {from} stopped at {next}, short of {to}"));
            }
            event = stream.next() => event,
        };
        match event {
            Some(Event::Output { offset, data }) if offset == next => {
                next += data.len() as u64;
                bytes.extend_from_slice(data.as_slice());
            }
            Some(Event::Output { offset, .. }) => return Err(format!("replay output at {offset} after {next}")),
            // A hole a killed host left, announced where the replay got to:
            // what comes after it is compared by the follower's own checks.
            Some(Event::Resync { skipped_from, snapshot }) if skipped_from == next && snapshot.offset > next => {
                return Ok((start, bytes, Some((skipped_from, snapshot.offset))));
            }
            Some(Event::Resync { skipped_from, snapshot }) => {
                return Err(format!("a replay at {next} was resynced from {skipped_from} to {}", snapshot.offset));
            }
            Some(Event::Exited { .. } | Event::Ended { .. }) | None => {
                if next < to {
                    return Err(format!("the replay from {from} ended at {next}, short of {to}"));
                }
            }
            Some(_) => {}
        }
    }
    Ok((start, bytes, None))
}

/// Compares `bytes` at `start` with the record where both hold bytes;
/// how many bytes were compared.
fn compare(world: &World, pane: &PaneId, record: &FollowRecord, start: u64, bytes: &[u8], what: &str) -> u64 {
    let end = start + bytes.len() as u64;
    let mut compared = 0;
    for (offset, held) in record.pieces(start, end) {
        let theirs = &bytes[(offset - start) as usize..(offset - start) as usize + held.len()];
        if let Some(at) = held.iter().zip(theirs).position(|(a, b)| a != b) {
            world.fail(
                "follower bytes",
                format!(
                    "{pane}: the follower and {what} differ at offset {}: {:?} against {:?}",
                    offset + at as u64,
                    String::from_utf8_lossy(&held[at..(at + 40).min(held.len())]),
                    String::from_utf8_lossy(&theirs[at..(at + 40).min(theirs.len())])
                ),
            );
            return compared;
        }
        compared += held.len() as u64;
    }
    compared
}

/// Compares what the `events` operations received with the followers.
pub fn compare_observed(world: &World) {
    let observed = std::mem::take(&mut *lock(&world.observed));
    for (pane, start, bytes) in observed {
        let record = world.book().panes.get(&pane).map(|entry| lock(&entry.record).clone());
        if let Some(record) = record {
            let compared = compare(world, &pane, &record, start, &bytes, "an events operation");
            world.count("bytes of events operations compared with followers", compared);
        }
    }
}

/// Every command's markers in its pane's output, as its follower holds it.
pub fn check_markers(world: &World) {
    let book = world.book();
    let owner: BTreeMap<u64, &PaneId> =
        book.panes.iter().flat_map(|(id, entry)| entry.commands.iter().map(move |typed| (typed.spec.id, id))).collect();
    for (pane, entry) in &book.panes {
        let record = lock(&entry.record).clone();
        let announced = record.gaps.iter().any(|gap| gap.kind != GapKind::Unannounced);
        let found = command::markers(&record.all_bytes());
        let mut counts: BTreeMap<u64, (usize, usize)> = BTreeMap::new();
        let mut last_begin = 0;
        for (id, mark) in &found {
            if owner.get(id).is_some_and(|p| *p != pane) || !owner.contains_key(id) {
                world.fail("markers", format!("{pane}: the output holds marker {id} of a command typed elsewhere"));
            }
            let count = counts.entry(*id).or_default();
            match mark {
                Mark::Begin => {
                    count.0 += 1;
                    if *id < last_begin {
                        world.fail("markers", format!("{pane}: command #{id} began after #{last_begin}"));
                    }
                    last_begin = *id;
                }
                Mark::End => {
                    count.1 += 1;
                    if count.0 == 0 {
                        world.fail("markers", format!("{pane}: command #{id} ended before it began"));
                    }
                }
            }
        }
        for typed in &entry.commands {
            let id = typed.spec.id;
            let (begins, ends) = counts.get(&id).copied().unwrap_or((0, 0));
            world.count("commands checked", 1);
            let problem = match typed.expect {
                Expect::Never if begins + ends > 0 => Some("was refused, yet its output is there".to_owned()),
                Expect::Once if begins == 1 && ends == 1 => None,
                Expect::Once if begins <= 1 && ends <= 1 && announced => {
                    world.count("markers missing within an announced gap", 1);
                    None
                }
                Expect::Once => Some(format!("begin marker {begins} times and end marker {ends} times, wanted once")),
                Expect::AtMostOnce if begins > 1 || ends > 1 => {
                    Some(format!("begin marker {begins} times and end marker {ends} times"))
                }
                _ => None,
            };
            if let Some(problem) = problem {
                let gaps: Vec<String> =
                    record.gaps.iter().map(|gap| format!(" gap {:?} {}..{}", gap.kind, gap.from, gap.to)).collect();
                let gaps = gaps.concat();
                world.fail("markers", format!("{pane}: {} #{id} {problem}{gaps}", typed.how));
            }
        }
    }
}

/// Whether every command of `pane` that must run once has printed its end
/// marker, as its follower holds the output: a command typed ahead while
/// another ran starts only when that one has ended, after the pane was
/// idle for a moment.
fn typed_commands_ended(world: &World, pane: &PaneId) -> bool {
    let book = world.book();
    let Some(entry) = book.panes.get(pane) else { return true };
    let ended: BTreeSet<u64> = command::markers(&lock(&entry.record).all_bytes())
        .into_iter()
        .filter(|(_, mark)| *mark == Mark::End)
        .map(|(id, _)| id)
        .collect();
    entry.commands.iter().filter(|typed| typed.expect == Expect::Once).all(|typed| ended.contains(&typed.spec.id))
}

/// Waits until each pane that should be alive is quiet: not busy, its
/// follower has its end, and every command that must run once has ended.
pub async fn settle(world: &Arc<World>) {
    let client = match Client::connect(&world.life.socket, &control_options("explore settle")).await {
        Ok(client) => client,
        Err(error) => {
            world.fail("settle", format!("cannot connect: {error}"));
            return;
        }
    };
    let panes: Vec<PaneId> =
        world.book().panes.iter().filter(|(_, entry)| entry.life == Life::Alive).map(|(id, _)| id.clone()).collect();
    let deadline = Instant::now() + Duration::from_secs(20);
    for pane in panes {
        loop {
            let detail = match client.inspect(&pane).await {
                Ok(detail) => detail,
                Err(error) => {
                    if !world.book().panes.get(&pane).is_some_and(|entry| entry.may_be_gone()) {
                        world.fail("settle", format!("{pane}: inspect failed: {error}"));
                    }
                    break;
                }
            };
            let followed = world.book().panes.get(&pane).and_then(|entry| lock(&entry.record).next());
            if detail.pane.activity != "busy"
                && followed == Some(detail.pane.offset)
                && typed_commands_ended(world, &pane)
            {
                break;
            }
            if Instant::now() > deadline {
                world.fail(
                    "settle",
                    format!(
                        "{pane}: still {} with its follower at {followed:?} of {} after 20 s",
                        detail.pane.activity, detail.pane.offset
                    ),
                );
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// The end: the list holds exactly the panes believed alive; every one
/// closes; the followers end; the host exits on SIGTERM and leaves nothing
/// running.
pub async fn finish(world: &Arc<World>, host: &Mutex<ExploreHost>) {
    let client = match Client::connect(&world.life.socket, &control_options("explore end")).await {
        Ok(client) => client,
        Err(error) => {
            world.fail("end", format!("cannot connect: {error}"));
            return;
        }
    };
    let listed: BTreeSet<PaneId> = match client.list().await {
        Ok(panes) => panes.into_iter().map(|pane| pane.id).collect(),
        Err(error) => {
            world.fail("end", format!("list: {error}"));
            return;
        }
    };
    let (alive, maybe, strays): (BTreeSet<PaneId>, BTreeSet<PaneId>, Vec<PaneId>) = {
        let book = world.book();
        let alive = book
            .panes
            .iter()
            .filter(|(_, entry)| entry.life == Life::Alive && !entry.keeper_lost)
            .map(|(id, _)| id.clone())
            .collect();
        let maybe = book
            .panes
            .iter()
            .filter(|(_, entry)| entry.life == Life::Closing || (entry.life == Life::Alive && entry.keeper_lost))
            .map(|(id, _)| id.clone())
            .collect();
        (alive, maybe, book.strays.clone())
    };
    for id in alive.difference(&listed) {
        world.fail("end", format!("{id} is alive, but the host does not list it"));
    }
    for id in listed.difference(&alive) {
        if !maybe.contains(id) && !strays.contains(id) {
            world.fail("end", format!("the host lists {id}, which the explorer does not believe alive"));
        }
    }
    for id in &listed {
        {
            let mut book = world.book();
            if let Some(entry) = book.panes.get_mut(id) {
                entry.life = Life::Closing;
                entry.weaken_commands();
            }
        }
        match client.close(id).await {
            Ok(_) => {
                if let Some(entry) = world.book().panes.get_mut(id) {
                    entry.life = Life::Closed;
                }
                world.count("panes closed at the end", 1);
            }
            Err(error) => world.fail("end", format!("close {id}: {error}")),
        }
    }
    // Every follower's subscription ends once its pane is closed.
    let handles = std::mem::take(&mut *lock(&world.followers));
    let deadline = Instant::now() + Duration::from_secs(15);
    for handle in handles {
        let left = deadline.saturating_duration_since(Instant::now());
        if tokio::time::timeout(left, handle).await.is_err() {
            world.fail("end", "a follower did not end within 15 s of the closes");
        }
    }
    for (id, entry) in world.book().panes.iter() {
        let record = lock(&entry.record);
        // A pane whose keeper was killed may have exited on its own first.
        let exited_first = entry.keeper_lost && record.ended.as_deref() == Some("exited");
        if listed.contains(id) && record.ended.as_deref() != Some("closed") && !exited_first {
            world.fail("end", format!("{id}: the follower's subscription ended with {:?}, not closed", record.ended));
        }
    }
    drop(client);
    world.stop();
    let stopped = lock(host).stop(Duration::from_secs(20));
    match stopped {
        Some((status, true)) if status.success() => {}
        Some((status, by_itself)) => world.fail(
            "end",
            format!("the host ended with {status}{}", if by_itself { "" } else { " after SIGKILL (SIGTERM ignored)" }),
        ),
        None => world.fail("end", "the host had already exited"),
    }
    let dir = lock(host).dir.clone();
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let left: Vec<u32> = dir.pane_processes().into_iter().chain(dir.keepers()).collect();
        if left.is_empty() {
            break;
        }
        if Instant::now() > deadline {
            let described: Vec<String> = left.iter().map(|pid| panehost_tests::procfs::describe(*pid)).collect();
            world.fail("end", format!("left running after the host exited: {}", described.join("; ")));
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    if let Ok(log) = std::fs::read_to_string(&dir.log) {
        for line in log.lines().filter(|line| line.contains("panicked")) {
            world.fail("host log", line.to_owned());
        }
    }
}
