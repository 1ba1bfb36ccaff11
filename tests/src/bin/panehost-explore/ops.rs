//! The client tasks: each runs its plan's operations one after the other,
//! after each one's delay, on its (maybe shared) connection, and checks
//! every answer against what the protocol documents for the situation.
//! A watchdog bounds every operation: one with no answer in time is a
//! failure (a hang), and the client goes on with its next operation.

use crate::command::{self, CommandSpec, Mark};
use crate::follow::{self, FollowRecord};
use crate::life::{Failed, SharedConnection};
use crate::schedule::{ClientPlan, EventsFrom, Op};
use crate::world::{lock, Expect, Life, PaneEntry, Typed, World};
use panehost_client::Client;
use panehost_ipc::{ErrorBody, Event, PaneId, SendParams, Size, StartParams, StreamStart, WaitForParams, WaitTarget};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::time::Instant;

/// How long an `ask` may take on the host.
const ASK_TIMEOUT: Duration = Duration::from_secs(20);
/// The margin of the watchdog over what an operation may take.
const WATCHDOG_MARGIN: Duration = Duration::from_secs(40);

/// How an operation ended.
enum Verdict {
    Ok,
    Expected(String),
    Lost,
    Failed(String),
}

/// Runs one client's plan.
pub async fn run(world: Arc<World>, index: usize, plan: ClientPlan, connection: Arc<SharedConnection>) {
    for (n, step) in plan.steps.iter().enumerate() {
        if step.delay_ms > 0 {
            tokio::time::sleep(Duration::from_millis(step.delay_ms)).await;
        }
        let limit = limit_of(&step.op);
        let what = format!("client {index} step {n} `{}`", step.op);
        let began = Instant::now();
        let verdict = match tokio::time::timeout(limit, perform(&world, &connection, &step.op)).await {
            Ok(verdict) => verdict,
            Err(_) => Verdict::Failed(format!("no answer within {limit:?}")),
        };
        let kind = kind_of(&step.op);
        world.count("operations", 1);
        if world.verbose {
            let said = match &verdict {
                Verdict::Ok => "ok".to_owned(),
                Verdict::Expected(code) => code.clone(),
                Verdict::Lost => "lost".to_owned(),
                Verdict::Failed(_) => "FAILED".to_owned(),
            };
            eprintln!(
                "[explore]   {:>6} ms {what}: {said} after {} ms",
                world.began.elapsed().as_millis(),
                began.elapsed().as_millis()
            );
        }
        match verdict {
            Verdict::Ok => world.count(&format!("{kind}: ok"), 1),
            Verdict::Expected(code) => world.count(&format!("{kind}: {code} (documented here)"), 1),
            Verdict::Lost => world.count(&format!("{kind}: lost with the killed host"), 1),
            Verdict::Failed(problem) => {
                world.count(&format!("{kind}: failed"), 1);
                world.fail(kind, format!("{what}: {problem}"));
            }
        }
    }
}

fn kind_of(op: &Op) -> &'static str {
    match op {
        Op::Start { .. } => "start",
        Op::Ask { .. } => "ask",
        Op::Send { .. } => "send",
        Op::Answer { .. } => "answer",
        Op::Interrupt { .. } => "interrupt",
        Op::WaitFor { .. } => "wait_for",
        Op::Resize { .. } => "resize",
        Op::Inspect { .. } => "inspect",
        Op::History { .. } => "history",
        Op::Events { .. } => "events",
        Op::Watch { .. } => "watch",
        Op::List => "list",
        Op::Close { .. } => "close",
    }
}

fn limit_of(op: &Op) -> Duration {
    WATCHDOG_MARGIN
        + match op {
            Op::Ask { .. } => ASK_TIMEOUT,
            Op::Answer { reader: Some(_), .. } => Duration::from_secs(3),
            Op::WaitFor { timeout_ms, .. } => Duration::from_millis(*timeout_ms),
            Op::Events { read_ms, .. } | Op::Watch { read_ms } => Duration::from_millis(*read_ms),
            _ => Duration::ZERO,
        }
}

/// The pane in `slot` now.
fn pane_in(world: &World, slot: usize) -> Option<PaneId> {
    world.book().slots.get(slot).cloned().flatten()
}

/// True when `pane` may be gone now (closed, closing, its keeper killed,
/// not brought back by a restarted host).
fn may_be_gone(world: &World, pane: &PaneId) -> bool {
    world.book().panes.get(pane).is_none_or(PaneEntry::may_be_gone)
}

/// The verdict on a host error about `pane` that is documented only when
/// the pane may be gone.
fn gone_or_failed(world: &World, pane: &PaneId, body: &ErrorBody) -> Verdict {
    if (body.code == "UNKNOWN_PANE" || body.code == "PANE_EXITED") && may_be_gone(world, pane) {
        Verdict::Expected(body.code.clone())
    } else {
        Verdict::Failed(format!("{pane}: undocumented answer {body}"))
    }
}

fn failed(world: &World, pane: &PaneId, epoch: u64, error: panehost_client::ClientError) -> Verdict {
    match world.life.classify(epoch, error) {
        Failed::Lost => Verdict::Lost,
        Failed::Host(body) => gone_or_failed(world, pane, &body),
        Failed::Broken(problem) => Verdict::Failed(format!("{pane}: {problem}")),
    }
}

async fn perform(world: &Arc<World>, connection: &SharedConnection, op: &Op) -> Verdict {
    let (client, epoch) = match connection.get(&world.life).await {
        Ok(opened) => opened,
        Err(problem) => return Verdict::Failed(format!("no connection: {problem}")),
    };
    if let Op::Start { slot, startup_ms } = op {
        return start(world, &client, epoch, *slot, *startup_ms).await;
    }
    if let Op::List = op {
        return list(world, &client, epoch).await;
    }
    if let Op::Watch { read_ms } = op {
        return watch(world, &client, epoch, *read_ms).await;
    }
    let Some(pane) = op.slot().and_then(|slot| pane_in(world, slot)) else {
        return Verdict::Expected("no pane in the slot".into());
    };
    match op {
        Op::Ask { command, .. } => ask(world, &client, epoch, &pane, *command).await,
        Op::Send { command, .. } => send(world, &client, epoch, &pane, *command).await,
        Op::Answer { reader, .. } => answer(world, &client, epoch, &pane, *reader).await,
        Op::Interrupt { .. } => interrupt(world, &client, epoch, &pane).await,
        Op::WaitFor { command, timeout_ms, .. } => wait_for(world, &client, epoch, &pane, *command, *timeout_ms).await,
        Op::Resize { cols, rows, .. } => resize(world, &client, epoch, &pane, *cols, *rows).await,
        Op::Inspect { .. } => match client.inspect(&pane).await {
            Ok(detail) => {
                let activity = detail.pane.activity.as_str();
                if detail.pane.id != pane {
                    Verdict::Failed(format!("inspect {pane} described {}", detail.pane.id))
                } else if !matches!(activity, "idle" | "busy" | "unknown") {
                    Verdict::Failed(format!("{pane}: activity {activity} on a shell pane"))
                } else if detail.screen.offset > detail.pane.offset {
                    Verdict::Failed(format!(
                        "{pane}: the screen is at {}, past the end {}",
                        detail.screen.offset, detail.pane.offset
                    ))
                } else {
                    Verdict::Ok
                }
            }
            Err(error) => failed(world, &pane, epoch, error),
        },
        Op::History { lines, .. } => match client.history(&pane, Some(*lines)).await {
            Ok(history) if history.from <= history.to => Verdict::Ok,
            Ok(history) => Verdict::Failed(format!("{pane}: history from {} to {}", history.from, history.to)),
            Err(error) => failed(world, &pane, epoch, error),
        },
        Op::Events { from, read_ms, .. } => events(world, &client, epoch, &pane, *from, *read_ms).await,
        Op::Close { .. } => close(world, &client, epoch, &pane).await,
        // Answered above: these name no pane.
        Op::Start { .. } | Op::List | Op::Watch { .. } => Verdict::Ok,
    }
}

async fn start(world: &Arc<World>, client: &Client, epoch: u64, slot: usize, startup_ms: u32) -> Verdict {
    {
        let mut starts = lock(&world.starts);
        starts.0 += 1;
        starts.1 += 1;
    }
    let mut params = StartParams { runtime: "shell".into(), ..Default::default() };
    if startup_ms > 0 {
        params.env.insert("EXP_STARTUP".into(), format!("{}.{:03}", startup_ms / 1000, startup_ms % 1000));
    }
    let keeper_kills = world.keeper_kills.load(std::sync::atomic::Ordering::SeqCst);
    let started = client.start(params).await;
    // A keeper killed while the start ran may be the one it was given
    // (the pane was not in the book to be marked).
    let keeper_maybe_lost = world.keeper_kills.load(std::sync::atomic::Ordering::SeqCst) != keeper_kills;
    let verdict = match started {
        Ok(summary) => {
            let record = Arc::new(Mutex::new(FollowRecord::default()));
            let mut book = world.book();
            let problem = if book.panes.contains_key(&summary.id) {
                Some(format!("the new pane's id {} was given before", summary.id))
            } else if summary.runtime != "shell" || summary.restored_by != "started" {
                Some(format!("{}: runtime {}, restored_by {}", summary.id, summary.runtime, summary.restored_by))
            } else if summary.completion != "shell_integration" {
                Some(format!("{}: completion {} (bash should have prompt marks)", summary.id, summary.completion))
            } else {
                None
            };
            book.panes.insert(
                summary.id.clone(),
                PaneEntry {
                    slot,
                    pid: summary.pid,
                    generation: summary.generation,
                    life: Life::Alive,
                    keeper_lost: keeper_maybe_lost,
                    replaced: false,
                    turn_maybe_open: false,
                    commands: Vec::new(),
                    record: Arc::clone(&record),
                },
            );
            book.slots[slot] = Some(summary.id.clone());
            drop(book);
            let handle = tokio::spawn(follow::run(Arc::clone(world), summary.id.clone(), record));
            lock(&world.followers).push(handle);
            match problem {
                Some(problem) => Verdict::Failed(problem),
                None => Verdict::Ok,
            }
        }
        Err(error) => match world.life.classify(epoch, error) {
            Failed::Lost => {
                world.book().lost_starts += 1;
                Verdict::Lost
            }
            Failed::Host(body) => Verdict::Failed(format!("start answered {body}")),
            Failed::Broken(problem) => Verdict::Failed(problem),
        },
    };
    lock(&world.starts).0 -= 1;
    verdict
}

/// Notes a command about to be typed into `pane`; its index.
fn note_typed(world: &World, pane: &PaneId, spec: CommandSpec, how: &'static str) -> Option<usize> {
    let epoch = world.life.kills();
    let mut book = world.book();
    let entry = book.panes.get_mut(pane)?;
    let may_be_read = entry.may_be_reading();
    entry.commands.push(Typed { spec, expect: Expect::AtMostOnce, how, done: false, epoch, may_be_read });
    Some(entry.commands.len() - 1)
}

/// Settles what a typed command must have printed, and whether a turn may
/// be open after it.
fn settle_typed(world: &World, pane: &PaneId, index: Option<usize>, expect: Expect, done: bool, turn_open: bool) {
    let mut book = world.book();
    let Some(entry) = book.panes.get_mut(pane) else { return };
    if let Some(typed) = index.and_then(|index| entry.commands.get_mut(index)) {
        // A kill of the host or of the keeper meanwhile may have cut it;
        // a command reading a line may have taken it as its answer.
        typed.expect = if expect == Expect::Once
            && (typed.epoch != world.life.kills() || entry.keeper_lost || typed.may_be_read)
        {
            Expect::AtMostOnce
        } else {
            expect
        };
        typed.done = done;
    }
    entry.turn_maybe_open = turn_open;
}

async fn ask(world: &World, client: &Client, epoch: u64, pane: &PaneId, spec: CommandSpec) -> Verdict {
    let turn_was_open = world.book().panes.get(pane).is_some_and(|entry| entry.turn_maybe_open);
    let index = note_typed(world, pane, spec, "ask");
    match client.ask(pane, &spec.typed(), Some(ASK_TIMEOUT)).await {
        Ok(report) => {
            if world.verbose {
                eprintln!(
                    "[explore]   {pane} #{} answered: offsets {}..{}, exit_code {:?}",
                    spec.id, report.started_offset, report.completed_offset, report.exit_code
                );
            }
            let mut problems = Vec::new();
            let text = &report.added_text;
            for marker in [spec.begin(), spec.end()] {
                let n = command::count(text, &marker);
                if n != 1 {
                    problems.push(format!("{marker} {n} times in added_text"));
                }
            }
            let others: Vec<u64> = command::markers(text.as_bytes())
                .into_iter()
                .filter(|(id, _)| *id != spec.id)
                .map(|(id, _)| id)
                .collect();
            if !others.is_empty() {
                problems.push(format!("the markers of other commands {others:?} in added_text"));
            }
            if report.exit_code != Some(u32::from(spec.status)) {
                problems.push(format!("exit_code {:?}, the command exits with {}", report.exit_code, spec.status));
            }
            if report.source != "shell_integration" {
                problems.push(format!("source {}", report.source));
            }
            if report.completed_offset < report.started_offset {
                problems.push(format!(
                    "completed at {} before it started at {}",
                    report.completed_offset, report.started_offset
                ));
            }
            // It was typed: it runs to its end whatever the answer said.
            settle_typed(world, pane, index, Expect::Once, problems.is_empty(), !problems.is_empty());
            if problems.is_empty() {
                Verdict::Ok
            } else {
                Verdict::Failed(format!(
                    "{pane} #{}: {} (started_offset {}, completed_offset {}, added_text {:?})",
                    spec.id,
                    problems.join("; "),
                    report.started_offset,
                    report.completed_offset,
                    report.added_text
                ))
            }
        }
        Err(error) => match world.life.classify(epoch, error) {
            Failed::Lost => {
                settle_typed(world, pane, index, Expect::AtMostOnce, false, true);
                Verdict::Lost
            }
            Failed::Host(body) if body.code == "TURN_IN_PROGRESS" => {
                // Nothing was written.
                settle_typed(world, pane, index, Expect::Never, false, true);
                if turn_was_open {
                    Verdict::Expected(body.code)
                } else {
                    Verdict::Failed(format!("{pane} #{}: {body}, but no turn was open", spec.id))
                }
            }
            Failed::Host(body) => {
                settle_typed(world, pane, index, Expect::AtMostOnce, false, true);
                gone_or_failed(world, pane, &body)
            }
            Failed::Broken(problem) => {
                settle_typed(world, pane, index, Expect::AtMostOnce, false, true);
                Verdict::Failed(format!("{pane} #{}: {problem}", spec.id))
            }
        },
    }
}

async fn send(world: &World, client: &Client, epoch: u64, pane: &PaneId, spec: CommandSpec) -> Verdict {
    let index = note_typed(world, pane, spec, "send");
    let typed = spec.typed();
    let params = SendParams { pane: pane.clone(), text: typed.clone(), enter: true, ..Default::default() };
    match client.send(params).await {
        Ok(bytes) => {
            settle_typed(world, pane, index, Expect::Once, false, true);
            if bytes < typed.len() as u64 + 1 {
                Verdict::Failed(format!("{pane}: sent {bytes} bytes of {} and Enter", typed.len()))
            } else {
                Verdict::Ok
            }
        }
        Err(error) => {
            settle_typed(world, pane, index, Expect::AtMostOnce, false, true);
            failed(world, pane, epoch, error)
        }
    }
}

/// Types an empty line with Enter: a reading command's answer, or an
/// empty command line at the prompt (after `reader`'s begin marker when
/// given, or 3 s). A turn may be open after it.
async fn answer(world: &World, client: &Client, epoch: u64, pane: &PaneId, reader: Option<u64>) -> Verdict {
    if let Some(id) = reader {
        let params = WaitForParams {
            pane: pane.clone(),
            pattern: format!("EXP-{id}-beg"),
            target: WaitTarget::Output,
            from: Some(0),
            timeout_ms: Some(3000),
        };
        // Any answer will do: the line is typed either way.
        let _ = client.wait_for(params).await;
    }
    if let Some(entry) = world.book().panes.get_mut(pane) {
        entry.turn_maybe_open = true;
    }
    let params = SendParams { pane: pane.clone(), text: String::new(), enter: true, ..Default::default() };
    match client.send(params).await {
        Ok(1) => Verdict::Ok,
        Ok(bytes) => Verdict::Failed(format!("{pane}: sent {bytes} bytes for an empty line and its Enter")),
        Err(error) => failed(world, pane, epoch, error),
    }
}

async fn interrupt(world: &World, client: &Client, epoch: u64, pane: &PaneId) -> Verdict {
    if let Some(entry) = world.book().panes.get_mut(pane) {
        // What was typed and not seen to end may be cut short (and the
        // terminal drops input typed ahead).
        entry.weaken_commands();
        entry.turn_maybe_open = true;
    }
    match client.interrupt(pane).await {
        Ok(report) if &report.pane == pane => {
            world.count(&format!("interrupt outcome {}", report.outcome), 1);
            Verdict::Ok
        }
        Ok(report) => Verdict::Failed(format!("interrupt of {pane} answered for {}", report.pane)),
        Err(error) => failed(world, pane, epoch, error),
    }
}

async fn wait_for(
    world: &World,
    client: &Client,
    epoch: u64,
    pane: &PaneId,
    command: Option<u64>,
    timeout_ms: u64,
) -> Verdict {
    let (pattern, from) = match command {
        Some(id) => (format!("EXP-{id}-end"), Some(0)),
        None => ("EXP-[0-9]+-end".to_owned(), None),
    };
    let params =
        WaitForParams { pane: pane.clone(), pattern, target: WaitTarget::Output, from, timeout_ms: Some(timeout_ms) };
    match client.wait_for(params).await {
        Ok(found) => {
            let wanted = command.map(|id| format!("EXP-{id}-end"));
            let matches = match &wanted {
                Some(marker) => &found.matched == marker,
                None => command::markers(found.matched.as_bytes()).iter().any(|(_, mark)| *mark == Mark::End),
            };
            if matches && found.offset >= found.matched.len() as u64 {
                Verdict::Ok
            } else {
                Verdict::Failed(format!("{pane}: wait_for matched {:?} at {}", found.matched, found.offset))
            }
        }
        Err(error) => match world.life.classify(epoch, error) {
            Failed::Lost => Verdict::Lost,
            Failed::Host(body) if body.code == "WAIT_TIMEOUT" => {
                let must_have = command.is_some_and(|id| {
                    world.book().panes.get(pane).is_some_and(|entry| {
                        !entry.may_be_gone()
                            && entry.commands.iter().any(|typed| {
                                typed.spec.id == id
                                    && typed.expect == Expect::Once
                                    && typed.epoch == world.life.kills()
                                    && u64::from(typed.spec.sleep_ms) + u64::from(typed.spec.reads_ms) + 8000
                                        < timeout_ms
                            })
                    })
                });
                if must_have {
                    Verdict::Failed(format!("{pane}: the end marker of #{} did not come: {body}", command.unwrap_or(0)))
                } else {
                    Verdict::Expected(body.code)
                }
            }
            Failed::Host(body) => gone_or_failed(world, pane, &body),
            Failed::Broken(problem) => Verdict::Failed(format!("{pane}: {problem}")),
        },
    }
}

async fn resize(world: &World, client: &Client, epoch: u64, pane: &PaneId, cols: u16, rows: u16) -> Verdict {
    let size = Size { cols, rows };
    match client.resize(pane, size).await {
        Ok(now) if size.is_valid() && now == size => Verdict::Ok,
        Ok(now) => Verdict::Failed(format!("{pane}: resize to {size} answered {now}")),
        Err(error) => match world.life.classify(epoch, error) {
            Failed::Host(body) if body.code == "INVALID_ARGUMENT" && !size.is_valid() => Verdict::Expected(body.code),
            Failed::Lost => Verdict::Lost,
            Failed::Host(body) => gone_or_failed(world, pane, &body),
            Failed::Broken(problem) => Verdict::Failed(format!("{pane}: {problem}")),
        },
    }
}

async fn events(world: &World, client: &Client, epoch: u64, pane: &PaneId, from: EventsFrom, read_ms: u64) -> Verdict {
    let known_end = world.book().panes.get(pane).map(|entry| lock(&entry.record).next().unwrap_or(0)).unwrap_or(0);
    let offset = match from {
        EventsFrom::Screen => None,
        EventsFrom::Zero => Some(0),
        EventsFrom::Within(per_mille) => Some(known_end * u64::from(per_mille) / 1000),
        EventsFrom::End => Some(known_end),
        EventsFrom::Beyond => Some(known_end + (64 << 20)),
    };
    let mut stream = match client.subscribe(pane, offset).await {
        Ok(stream) => stream,
        Err(error) => {
            return match world.life.classify(epoch, error) {
                Failed::Host(body) if body.code == "OFFSET_OUT_OF_RANGE" && from == EventsFrom::Beyond => {
                    Verdict::Expected(body.code)
                }
                Failed::Lost => Verdict::Lost,
                Failed::Host(body) => gone_or_failed(world, pane, &body),
                Failed::Broken(problem) => Verdict::Failed(format!("{pane}: {problem}")),
            };
        }
    };
    if from == EventsFrom::Beyond {
        return Verdict::Failed(format!("{pane}: events from {offset:?}, far past the end, was accepted"));
    }
    let mut next = match (stream.start(), offset) {
        (StreamStart::Replay { from }, Some(asked)) if *from == asked => *from,
        (StreamStart::Snapshot { snapshot, skipped_from }, asked) if *skipped_from == asked => {
            if asked.is_some() {
                world.count("announced gaps (skipped_from) on events", 1);
            }
            snapshot.offset
        }
        (start, asked) => {
            return Verdict::Failed(format!("{pane}: events from {asked:?} began {}", describe_start(start)));
        }
    };
    let (first, mut bytes) = (next, Vec::new());
    let deadline = Instant::now() + Duration::from_millis(read_ms);
    let mut problem = None;
    loop {
        let event = tokio::select! {
            _ = tokio::time::sleep_until(deadline) => break,
            event = stream.next() => event,
        };
        match event {
            Some(Event::Output { offset, data }) => {
                if offset != next {
                    problem = Some(format!("{pane}: output at {offset} after {next}, with no gap announced"));
                    break;
                }
                next += data.len() as u64;
                bytes.extend_from_slice(data.as_slice());
            }
            Some(Event::Resync { .. }) => break,
            Some(Event::Ended { .. }) | None => break,
            Some(_) => {}
        }
    }
    if !bytes.is_empty() {
        world.count("bytes received by events operations", bytes.len() as u64);
        lock(&world.observed).push((pane.clone(), first, bytes));
    }
    match problem {
        Some(problem) => Verdict::Failed(problem),
        None => Verdict::Ok,
    }
}

fn describe_start(start: &StreamStart) -> String {
    match start {
        StreamStart::Replay { from } => format!("with a replay from {from}"),
        StreamStart::Snapshot { snapshot, skipped_from } => {
            format!("with a snapshot at {} naming skipped_from {skipped_from:?}", snapshot.offset)
        }
        StreamStart::GenerationChanged { previous, .. } => format!("with a generation change from {previous}"),
    }
}

async fn watch(world: &World, client: &Client, epoch: u64, read_ms: u64) -> Verdict {
    let (panes, mut stream) = match client.watch().await {
        Ok(watching) => watching,
        Err(error) => {
            return match world.life.classify(epoch, error) {
                Failed::Lost => Verdict::Lost,
                Failed::Host(body) => Verdict::Failed(format!("watch answered {body}")),
                Failed::Broken(problem) => Verdict::Failed(problem),
            };
        }
    };
    let mut ids: Vec<&PaneId> = panes.iter().map(|pane| &pane.id).collect();
    ids.sort();
    if ids.windows(2).any(|pair| pair[0] == pair[1]) {
        return Verdict::Failed(format!("watching listed a pane twice: {ids:?}"));
    }
    let deadline = Instant::now() + Duration::from_millis(read_ms);
    loop {
        let event = tokio::select! {
            _ = tokio::time::sleep_until(deadline) => return Verdict::Ok,
            event = stream.next() => event,
        };
        match event {
            Some(
                Event::Output { .. } | Event::Resync { .. } | Event::TurnStarted { .. } | Event::TurnCompleted { .. },
            ) => {
                return Verdict::Failed("a pane's own event on a watch".into());
            }
            Some(_) => {}
            None => return Verdict::Ok,
        }
    }
}

async fn list(world: &World, client: &Client, epoch: u64) -> Verdict {
    let alive_before: Vec<PaneId> =
        world.book().panes.iter().filter(|(_, entry)| !entry.may_be_gone()).map(|(id, _)| id.clone()).collect();
    let starts_before = lock(&world.starts).1;
    let panes = match client.list().await {
        Ok(panes) => panes,
        Err(error) => {
            return match world.life.classify(epoch, error) {
                Failed::Lost => Verdict::Lost,
                Failed::Host(body) => Verdict::Failed(format!("list answered {body}")),
                Failed::Broken(problem) => Verdict::Failed(problem),
            };
        }
    };
    let (in_flight, starts_after) = *lock(&world.starts);
    let book = world.book();
    let mut problems = Vec::new();
    let mut ids: Vec<&PaneId> = panes.iter().map(|pane| &pane.id).collect();
    ids.sort();
    if ids.windows(2).any(|pair| pair[0] == pair[1]) {
        problems.push(format!("a pane listed twice: {ids:?}"));
    }
    for id in &alive_before {
        let still = book.panes.get(id).is_some_and(|entry| !entry.may_be_gone());
        if still && !ids.contains(&id) && epoch == world.life.kills() {
            problems.push(format!("{id} is alive but not listed"));
        }
    }
    let strangers: Vec<&PaneId> = ids.iter().copied().filter(|id| !book.panes.contains_key(*id)).collect();
    let starts_explain = in_flight > 0 || starts_after != starts_before || book.lost_starts > 0;
    if !strangers.is_empty() && !starts_explain {
        problems.push(format!("panes no one started: {strangers:?}"));
    }
    if problems.is_empty() {
        Verdict::Ok
    } else {
        Verdict::Failed(problems.join("; "))
    }
}

async fn close(world: &World, client: &Client, epoch: u64, pane: &PaneId) -> Verdict {
    let slot = {
        let mut book = world.book();
        let Some(entry) = book.panes.get_mut(pane) else { return Verdict::Expected("no pane".into()) };
        entry.life = Life::Closing;
        entry.weaken_commands();
        entry.slot
    };
    match client.close(pane).await {
        Ok(_status) => {
            let mut book = world.book();
            if let Some(entry) = book.panes.get_mut(pane) {
                entry.life = Life::Closed;
            }
            if book.slots[slot].as_ref() == Some(pane) {
                book.slots[slot] = None;
            }
            Verdict::Ok
        }
        Err(error) => {
            let verdict = failed(world, pane, epoch, error);
            let mut book = world.book();
            if book.slots[slot].as_ref() == Some(pane) {
                book.slots[slot] = None;
            }
            verdict
        }
    }
}
