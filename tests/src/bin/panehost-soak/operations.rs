//! The random operations of a client task, each with the answers the
//! protocol documents for its situation: what a success must look like,
//! and which error codes may answer it.

use crate::ledger::Verdict;
use crate::link::{ErrorClass, Link};
use crate::panes::{Life, PaneEntry, PaneKind};
use crate::starts::{check_events_start, check_reconnect_start, describe};
use crate::world::World;
use panehost_client::{ClientError, EventStream};
use panehost_ipc::{ErrorCode, Event, PaneId, PaneState, SendParams, Size, StreamStart};
use panehost_tests::rng::Rng;
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// Letters typed into panes: no `p`, `-` or digit, so typed text can never
/// be mistaken for a stream's `p-N` lines.
pub const TYPED_LETTERS: &[u8] = b"abcdefghijklmnoqrstuvwxyz";
/// How long an `events` operation reads its stream before it ends it.
const EVENTS_READ: Duration = Duration::from_millis(300);
/// How long reading the output of an answered `ask` may take.
const ASK_OUTPUT_WAIT: Duration = Duration::from_secs(10);
/// How long an `ask` told that a turn is open waits for its end before it
/// asks again.
const TURN_END_WAIT: Duration = Duration::from_secs(5);
/// Added to an end offset to ask for one no pane reaches in a run.
const BEYOND_ANY_END: u64 = 1 << 40;

const UNKNOWN_PANE: &str = "UNKNOWN_PANE";
const PANE_EXITED: &str = "PANE_EXITED";

/// The operations a client task draws from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Operation {
    /// `send` without `enter`: keystrokes.
    SendRaw,
    /// `send` with `enter`: a submitted line.
    SendEnter,
    /// `inspect`.
    Inspect,
    /// `events` from no offset, 0, a random offset, the end, or beyond it.
    Events,
    /// `reconnect` with the pane's generation or a wrong one.
    Reconnect,
    /// `resize` within 2..=200 columns and 2..=60 rows.
    Resize,
    /// `resize` to a size out of bounds.
    BadResize,
    /// `ask` on a fixture pane.
    Ask,
    /// `interrupt`, sometimes with `terminate`.
    Interrupt,
    /// `history`.
    History,
    /// `list`.
    List,
    /// `close` or `start`, keeping the pane count near its target.
    Churn,
}

impl Operation {
    /// Each operation with its weight in the draw.
    const MIX: [(Operation, u32); 12] = [
        (Operation::SendRaw, 14),
        (Operation::SendEnter, 8),
        (Operation::Inspect, 12),
        (Operation::Events, 12),
        (Operation::Reconnect, 5),
        (Operation::Resize, 10),
        (Operation::BadResize, 2),
        (Operation::Ask, 8),
        (Operation::Interrupt, 2),
        (Operation::History, 6),
        (Operation::List, 5),
        (Operation::Churn, 6),
    ];

    /// An operation drawn from the mix.
    pub fn draw(rng: &mut Rng) -> Operation {
        let weights: Vec<u32> = Operation::MIX.iter().map(|(_, weight)| *weight).collect();
        Operation::MIX[rng.weighted(&weights)].0
    }
}

/// What one client task carries from operation to operation.
#[derive(Debug)]
pub struct TaskState {
    /// Its random numbers.
    pub rng: Rng,
    /// Panes whose close was lost with the host: closed again once
    /// connected to the new one.
    pub unfinished_closes: Vec<PaneId>,
}

/// Runs one operation on `link`; gives the kind it counts as and how it
/// ended (`None` when no pane fits it now).
pub async fn run(
    operation: Operation,
    world: &World,
    link: &Link,
    state: &mut TaskState,
) -> Option<(&'static str, Verdict)> {
    let ops = Ops { world, link };
    let rng = &mut state.rng;
    Some(match operation {
        Operation::SendRaw => {
            let pane = world.book.pick(rng, |_| true)?;
            ("send-raw", ops.send_raw(rng, pane).await)
        }
        Operation::SendEnter => {
            let pane = world.book.pick(rng, |_| true)?;
            ("send-enter", ops.send_enter(rng, pane).await)
        }
        Operation::Inspect => ("inspect", ops.inspect(world.book.pick(rng, |_| true)?).await),
        Operation::Events => {
            let pane = world.book.pick(rng, |_| true)?;
            ("events", ops.events(rng, pane).await)
        }
        Operation::Reconnect => {
            let pane = world.book.pick(rng, |_| true)?;
            ("reconnect", ops.reconnect(rng, pane).await)
        }
        Operation::Resize => {
            let pane = world.book.pick(rng, |_| true)?;
            ("resize", ops.resize(rng, pane).await)
        }
        Operation::BadResize => {
            let pane = world.book.pick(rng, |_| true)?;
            ("resize-invalid", ops.bad_resize(rng, pane).await)
        }
        Operation::Ask => {
            let pane = world.book.pick(rng, |entry| entry.kind == PaneKind::Fixture && !entry.exited)?;
            ("ask", ops.ask(rng, pane).await)
        }
        Operation::Interrupt => {
            let pane = world.book.pick(rng, |entry| !(entry.followed && entry.kind.prints_numbered_lines()))?;
            ("interrupt", ops.interrupt(rng, pane).await)
        }
        Operation::History => {
            let pane = world.book.pick(rng, |_| true)?;
            ("history", ops.history(rng, pane).await)
        }
        Operation::List => ("list", ops.list().await),
        Operation::Churn => {
            let alive = world.book.alive_count();
            let close = alive > world.book.target || (alive == world.book.target && rng.percent(50));
            if close {
                let pane = world.book.claim_for_close(rng)?;
                ("close", ops.close(pane, &mut state.unfinished_closes).await)
            } else {
                ("start", ops.start(rng).await)
            }
        }
    })
}

/// Finishes a close lost with the host, on a connection to the new host:
/// `closed` and `UNKNOWN_PANE` (the first close took effect) both end it.
pub async fn finish_close(world: &World, link: &Link, pane: PaneId) -> (Verdict, Option<PaneId>) {
    match link.client.close(&pane).await {
        Ok(_) => {
            world.book.set_life(&pane, Life::Closed);
            (Verdict::Ok, None)
        }
        Err(error) => match world.life.classify(link.epoch, error) {
            ErrorClass::Host(body) if body.code == UNKNOWN_PANE => {
                world.book.set_life(&pane, Life::Closed);
                (Verdict::Expected(body.code), None)
            }
            ErrorClass::LostToRestart => (Verdict::LostToRestart, Some(pane)),
            other => (other.verdict(&format!("close of {pane} again"), |_| false), Some(pane)),
        },
    }
}

struct Ops<'a> {
    world: &'a World,
    link: &'a Link,
}

impl Ops<'_> {
    /// The verdict on an error answer to a request naming `pane`, when the
    /// protocol documents `documented` for the situation. `UNKNOWN_PANE` is
    /// documented only for a pane being closed or closed; `PANE_EXITED`
    /// is noted in the book.
    fn judge(&self, what: &str, pane: &PaneId, error: ClientError, documented: &[&str]) -> Verdict {
        let class = self.world.life.classify(self.link.epoch, error);
        if let ErrorClass::Host(body) = &class {
            if body.code == UNKNOWN_PANE {
                let life = self.world.book.get(pane).map(|entry| entry.life);
                return match life {
                    Some(Life::Alive) | None => {
                        Verdict::Failed(format!("{what}: {body}, but the pane was never closed"))
                    }
                    Some(_) => Verdict::Expected(body.code.clone()),
                };
            }
            if body.code == PANE_EXITED {
                self.world.book.mark_exited(pane);
            }
        }
        class.verdict(what, |code| documented.contains(&code))
    }

    /// Counts how a stream started, to show which cases the run reached.
    fn count_start(&self, what: &str, start: &StreamStart) {
        let how = match start {
            StreamStart::Replay { .. } => "replay",
            StreamStart::Snapshot { skipped_from: Some(_), .. } => "snapshot, older than the ring",
            StreamStart::Snapshot { skipped_from: None, .. } => "snapshot of the screen",
            StreamStart::GenerationChanged { .. } => "generation changed",
        };
        self.world.ledger.count(&format!("{what} started with {how}"), 1);
    }

    async fn send_raw(&self, rng: &mut Rng, pane: PaneEntry) -> Verdict {
        let len = rng.range(1, 12) as usize;
        let word = rng.word(TYPED_LETTERS, len);
        let (text, bytes): (String, Vec<u8>) = match (pane.kind, rng.range(0, 9)) {
            // Keys a shell's line discipline handles: Tab, an arrow, Ctrl-U.
            (PaneKind::Shell, 0) => (String::new(), b"\t".to_vec()),
            (PaneKind::Shell, 1) => (String::new(), b"\x1b[A".to_vec()),
            (PaneKind::Shell, 2) => (word, b"\x15".to_vec()),
            _ => (word, Vec::new()),
        };
        let expected = (text.len() + bytes.len()) as u64;
        let params = SendParams { pane: pane.id.clone(), text, bytes: bytes.into(), enter: false };
        match self.link.client.send(params).await {
            Ok(written) if written == expected => Verdict::Ok,
            Ok(written) => Verdict::Failed(format!("send to {}: wrote {written} bytes of {expected}", pane.id)),
            Err(error) => self.judge("send", &pane.id, error, &[UNKNOWN_PANE, PANE_EXITED]),
        }
    }

    async fn send_enter(&self, rng: &mut Rng, pane: PaneEntry) -> Verdict {
        let len = rng.range(3, 10) as usize;
        let word = rng.word(TYPED_LETTERS, len);
        let text = match pane.kind {
            PaneKind::Shell => format!("echo soak {word}"),
            PaneKind::Fixture => format!("q{word}z"),
            PaneKind::Stream | PaneKind::Burst => word,
        };
        let least = text.len() as u64 + 1;
        let params = SendParams { pane: pane.id.clone(), text, enter: true, ..Default::default() };
        match self.link.client.send(params).await {
            Ok(written) if written >= least => Verdict::Ok,
            Ok(written) => {
                Verdict::Failed(format!("send with enter to {}: wrote {written} bytes, fewer than {least}", pane.id))
            }
            Err(error) => self.judge("send", &pane.id, error, &[UNKNOWN_PANE, PANE_EXITED]),
        }
    }

    async fn inspect(&self, pane: PaneEntry) -> Verdict {
        match self.link.client.inspect(&pane.id).await {
            Ok(detail) => {
                if detail.pane.id != pane.id {
                    return Verdict::Failed(format!("inspect of {} described {}", pane.id, detail.pane.id));
                }
                if detail.screen.offset > detail.pane.offset {
                    return Verdict::Failed(format!(
                        "inspect of {}: screen at offset {} is past the pane's end {}",
                        pane.id, detail.screen.offset, detail.pane.offset
                    ));
                }
                match self.world.book.observe(&detail.pane, pane.max_end) {
                    Ok(()) => Verdict::Ok,
                    Err(complaint) => Verdict::Failed(format!("inspect: {complaint}")),
                }
            }
            Err(error) => self.judge("inspect", &pane.id, error, &[UNKNOWN_PANE]),
        }
    }

    async fn history(&self, rng: &mut Rng, pane: PaneEntry) -> Verdict {
        let lines = rng.percent(70).then(|| rng.range(1, 300) as u32);
        match self.link.client.history(&pane.id, lines).await {
            Ok(history) if history.pane == pane.id && history.from <= history.to => Verdict::Ok,
            Ok(history) => Verdict::Failed(format!(
                "history of {}: answered for {} from {} to {}",
                pane.id, history.pane, history.from, history.to
            )),
            Err(error) => self.judge("history", &pane.id, error, &[UNKNOWN_PANE]),
        }
    }

    async fn events(&self, rng: &mut Rng, pane: PaneEntry) -> Verdict {
        let end = pane.max_end;
        let from = match rng.range(0, 9) {
            0 | 1 => None,
            2 | 3 => Some(0),
            4 | 5 => Some(end),
            6..=8 => Some(rng.range(0, end)),
            _ => Some(end + BEYOND_ANY_END),
        };
        let beyond = from.is_some_and(|from| from > end);
        match self.link.client.subscribe(&pane.id, from).await {
            Ok(stream) if beyond => {
                drop(stream);
                Verdict::Failed(format!(
                    "events on {} from {from:?}, beyond its end ({end} or a little more): subscribed instead of OFFSET_OUT_OF_RANGE",
                    pane.id
                ))
            }
            Ok(stream) => match check_events_start(from, stream.start()) {
                Ok(start) => {
                    self.count_start("events", stream.start());
                    self.read_briefly(rng, &pane.id, stream, start.output_from).await
                }
                Err(problem) => Verdict::Failed(format!("events on {}: {problem}", pane.id)),
            },
            Err(error) if beyond => self.judge("events beyond the end", &pane.id, error, &["OFFSET_OUT_OF_RANGE"]),
            Err(error) => self.judge(&format!("events from {from:?} (end {end})"), &pane.id, error, &[]),
        }
    }

    async fn reconnect(&self, rng: &mut Rng, pane: PaneEntry) -> Verdict {
        let end = pane.max_end;
        let wrong_generation = rng.percent(30);
        let generation = if wrong_generation { pane.generation + 1000 } else { pane.generation };
        let beyond = !wrong_generation && rng.percent(15);
        let offset = if beyond { end + BEYOND_ANY_END } else { rng.range(0, end) };
        match self.link.client.reconnect(&pane.id, generation, offset).await {
            Ok(stream) if beyond => {
                drop(stream);
                Verdict::Failed(format!(
                    "reconnect to {} at {offset}, beyond its end {end}: subscribed instead of OFFSET_OUT_OF_RANGE",
                    pane.id
                ))
            }
            Ok(stream) => {
                if wrong_generation && !matches!(stream.start(), StreamStart::GenerationChanged { .. }) {
                    return Verdict::Failed(format!(
                        "reconnect to {} naming generation {generation} (it is {}): started with {}",
                        pane.id,
                        stream.generation(),
                        describe(stream.start())
                    ));
                }
                match check_reconnect_start(generation, offset, stream.start()) {
                    Ok(start) => {
                        self.count_start("reconnect", stream.start());
                        self.read_briefly(rng, &pane.id, stream, start.output_from).await
                    }
                    Err(problem) => Verdict::Failed(format!("reconnect to {}: {problem}", pane.id)),
                }
            }
            Err(error) if beyond => self.judge("reconnect beyond the end", &pane.id, error, &["OFFSET_OUT_OF_RANGE"]),
            Err(error) => self.judge(&format!("reconnect at {offset} (end {end})"), &pane.id, error, &[]),
        }
    }

    /// Reads a new stream for a moment, checking that its output is
    /// contiguous from `next`, then ends it (by `unsubscribe` half the
    /// time, by dropping it otherwise).
    async fn read_briefly(&self, rng: &mut Rng, pane: &PaneId, mut stream: EventStream, mut next: u64) -> Verdict {
        let deadline = tokio::time::Instant::now() + EVENTS_READ;
        let mut ended = false;
        while let Ok(Some(event)) = tokio::time::timeout_at(deadline, stream.next()).await {
            match event {
                Event::Output { offset, data } => {
                    if offset != next {
                        return Verdict::Failed(format!(
                            "stream of {pane}: output at offset {offset}, expected {next}"
                        ));
                    }
                    next = offset + data.len() as u64;
                }
                Event::Resync { skipped_from, snapshot } => {
                    if skipped_from != next || snapshot.offset < skipped_from {
                        return Verdict::Failed(format!(
                            "stream of {pane}: resync from {skipped_from} to {} at offset {next}",
                            snapshot.offset
                        ));
                    }
                    next = snapshot.offset;
                }
                Event::Exited { offset, .. } => {
                    self.world.book.mark_exited(pane);
                    if offset != next {
                        return Verdict::Failed(format!(
                            "stream of {pane}: exited at offset {offset}, but output reached {next}"
                        ));
                    }
                }
                Event::Ended { .. } => {
                    ended = true;
                    break;
                }
                _ => {}
            }
        }
        self.world.book.observe_end(pane, next);
        if ended || rng.percent(50) {
            return Verdict::Ok;
        }
        match stream.unsubscribe().await {
            Ok(()) => Verdict::Ok,
            Err(ClientError::Host(body)) if body.code == ErrorCode::UnknownSubscription.as_str() => {
                // Documented when the subscription had ended: the pane
                // exited or was closed meanwhile. Ask the host which.
                match self.link.client.inspect(pane).await {
                    Ok(detail) if matches!(detail.pane.state, PaneState::Exited(_)) => Verdict::Expected(body.code),
                    Err(ClientError::Host(gone)) if gone.code == UNKNOWN_PANE => Verdict::Expected(body.code),
                    Ok(_) => Verdict::Failed(format!(
                        "unsubscribe on {pane}: {body}, but the pane still runs and the stream had not ended"
                    )),
                    Err(error) => self.judge("inspect after unsubscribe", pane, error, &[]),
                }
            }
            Err(error) => self.judge("unsubscribe", pane, error, &[]),
        }
    }

    async fn resize(&self, rng: &mut Rng, pane: PaneEntry) -> Verdict {
        let size = Size { cols: rng.range(2, 200) as u16, rows: rng.range(2, 60) as u16 };
        match self.link.client.resize(&pane.id, size).await {
            Ok(resized) if resized == size => Verdict::Ok,
            Ok(resized) => Verdict::Failed(format!("resize of {} to {size}: answered {resized}", pane.id)),
            Err(error) => self.judge(&format!("resize to {size}"), &pane.id, error, &[UNKNOWN_PANE]),
        }
    }

    async fn bad_resize(&self, rng: &mut Rng, pane: PaneEntry) -> Verdict {
        const OUT_OF_BOUNDS: [(u16, u16); 8] =
            [(0, 24), (80, 0), (1, 24), (80, 1), (1001, 24), (80, 1001), (600, 600), (65535, 65535)];
        let (cols, rows) = OUT_OF_BOUNDS[rng.index(OUT_OF_BOUNDS.len())];
        let size = Size { cols, rows };
        match self.link.client.resize(&pane.id, size).await {
            Ok(resized) => Verdict::Failed(format!(
                "resize of {} to {size}, out of bounds: answered resized {resized} instead of INVALID_ARGUMENT",
                pane.id
            )),
            Err(error) => self.judge(&format!("resize to {size}"), &pane.id, error, &["INVALID_ARGUMENT"]),
        }
    }

    async fn ask(&self, rng: &mut Rng, pane: PaneEntry) -> Verdict {
        let len = rng.range(3, 10) as usize;
        let text = format!("q{}z", rng.word(TYPED_LETTERS, len));
        let timeout = self.world.settings.ask_timeout;
        let mut answer = self.link.client.ask(&pane.id, &text, Some(timeout)).await;
        if matches!(&answer, Err(ClientError::Host(body)) if body.code == "TURN_IN_PROGRESS") {
            // As a client told that a turn is open does: wait for its end
            // (or a moment), then ask once more. Another task may open the
            // next turn first: that answer is judged as any other.
            self.world.ledger.count("asks that waited for an open turn", 1);
            self.wait_turn_end(&pane.id).await;
            answer = self.link.client.ask(&pane.id, &text, Some(timeout)).await;
        }
        let report = match answer {
            Ok(report) => report,
            Err(error) => {
                return self.judge(
                    "ask",
                    &pane.id,
                    error,
                    &[UNKNOWN_PANE, PANE_EXITED, "TURN_IN_PROGRESS", "TURN_TIMEOUT"],
                )
            }
        };
        if report.started_offset > report.completed_offset {
            return Verdict::Failed(format!(
                "ask on {}: turn completed at {} before it started at {}",
                pane.id, report.completed_offset, report.started_offset
            ));
        }
        match report.source.as_str() {
            // An interrupt from another task ended the turn.
            "heuristic" => Verdict::Ok,
            "terminal_notification" => {
                let answer: String = text.chars().rev().collect();
                self.check_ask_output(&pane.id, report.started_offset, report.completed_offset, &answer).await
            }
            other => Verdict::Failed(format!("ask on fixture pane {}: turn ended by {other:?}", pane.id)),
        }
    }

    /// Waits until `pane` is in no turn (its events bring the end of one,
    /// or `inspect` finds it out of one), for [`TURN_END_WAIT`] at most.
    async fn wait_turn_end(&self, pane: &PaneId) {
        let wait = async {
            let Ok(mut stream) = self.link.client.subscribe(pane, None).await else { return };
            // Subscribed first, then looked: an end between the two is in
            // the stream.
            match self.link.client.inspect(pane).await {
                Ok(detail) if detail.pane.activity != "busy" => return,
                Ok(_) => {}
                Err(_) => return,
            }
            while let Some(event) = stream.next().await {
                if matches!(event, Event::TurnCompleted { .. } | Event::Ended { .. } | Event::Exited { .. }) {
                    return;
                }
            }
        };
        let _ = tokio::time::timeout(TURN_END_WAIT, wait).await;
    }

    /// Reads the output of an answered turn and looks for the answer in it.
    async fn check_ask_output(&self, pane: &PaneId, from: u64, to: u64, answer: &str) -> Verdict {
        let mut stream = match self.link.client.subscribe(pane, Some(from)).await {
            Ok(stream) => stream,
            Err(error) => return self.judge("events after ask", pane, error, &[UNKNOWN_PANE]),
        };
        if !matches!(stream.start(), StreamStart::Replay { .. }) {
            // The ring no longer holds the turn: nothing to compare.
            self.world.ledger.count("ask answers not verifiable", 1);
            return Verdict::Ok;
        }
        let mut output = Vec::new();
        let mut next = from;
        let deadline = tokio::time::Instant::now() + ASK_OUTPUT_WAIT;
        while next < to {
            match tokio::time::timeout_at(deadline, stream.next()).await {
                Ok(Some(Event::Output { offset, data })) if offset == next => {
                    output.extend_from_slice(data.as_slice());
                    next = offset + data.len() as u64;
                }
                Ok(Some(Event::Output { offset, .. })) => {
                    return Verdict::Failed(format!("stream of {pane}: output at offset {offset}, expected {next}"))
                }
                Ok(Some(Event::Ended { .. })) | Ok(None) => break,
                Ok(Some(_)) => {}
                Err(_) => {
                    return Verdict::Failed(format!(
                        "events of {pane} from {from}: the output up to {to} did not arrive within {ASK_OUTPUT_WAIT:?} (reached {next})"
                    ))
                }
            }
        }
        drop(stream);
        let turn = String::from_utf8_lossy(&output[..output.len().min((to - from) as usize)]).into_owned();
        if turn.contains(answer) {
            self.world.ledger.count("ask answers verified", 1);
            Verdict::Ok
        } else if turn.contains("^C") {
            // Another task's interrupt (its Ctrl-C echoed as `^C`) cut this
            // prompt or its turn short, and the turn that ended the ask was
            // another prompt's: the host waits for the first end of a turn
            // after the submission, whatever turn it is.
            self.world.ledger.count("ask turns cut short by an interrupt", 1);
            Verdict::Ok
        } else {
            Verdict::Failed(format!(
                "ask on {pane}: the output from {from} to {to} lacks the answer {answer:?}: {turn:?}"
            ))
        }
    }

    async fn interrupt(&self, rng: &mut Rng, pane: PaneEntry) -> Verdict {
        const OUTCOMES: [&str; 6] = [
            "turn_cancelled",
            "process_interrupted",
            "process_ended",
            "foreground_ended",
            "unconfirmed",
            "not_running",
        ];
        let terminate = rng.percent(15);
        match self.link.client.interrupt_with(&pane.id, terminate).await {
            Ok(report) => {
                if !OUTCOMES.contains(&report.outcome.as_str()) {
                    // The vocabulary is open; note what arrived.
                    self.world.ledger.count(&format!("interrupt outcome {} (new)", report.outcome), 1);
                }
                self.world.ledger.count(&format!("interrupt outcome {}", report.outcome), 1);
                if matches!(report.outcome.as_str(), "process_ended" | "not_running") {
                    self.world.book.mark_exited(&pane.id);
                }
                let last_observed = report.steps.last().is_some_and(|step| step.action == "observed");
                let consistent = if report.outcome == "not_running" { report.steps.is_empty() } else { last_observed };
                if consistent {
                    Verdict::Ok
                } else {
                    Verdict::Failed(format!(
                        "interrupt of {}: outcome {} with steps {:?}",
                        pane.id, report.outcome, report.steps
                    ))
                }
            }
            Err(error) => self.judge("interrupt", &pane.id, error, &[UNKNOWN_PANE]),
        }
    }

    async fn list(&self) -> Verdict {
        let floors: HashMap<PaneId, u64> =
            self.world.book.entries().into_iter().map(|entry| (entry.id, entry.max_end)).collect();
        let sent_at = self.world.book.tick();
        let panes = match self.link.client.list().await {
            Ok(panes) => panes,
            Err(error) => return self.world.life.classify(self.link.epoch, error).verdict("list", |_| false),
        };
        let mut seen = HashSet::new();
        let mut problems = Vec::new();
        for summary in &panes {
            if !seen.insert(summary.id.clone()) {
                problems.push(format!("{} listed twice", summary.id));
            }
            if let Err(complaint) = self.world.book.observe(summary, floors.get(&summary.id).copied().unwrap_or(0)) {
                problems.push(complaint);
            }
        }
        for entry in self.world.book.entries() {
            let listed = seen.contains(&entry.id);
            if entry.life == Life::Alive && entry.registered_at < sent_at && !listed {
                problems.push(format!("{} ({}) is missing though never closed", entry.id, entry.kind.label()));
            }
            if entry.life == Life::Closed && entry.closed_at.is_some_and(|at| at < sent_at) && listed {
                problems.push(format!("{} is listed after its close was answered", entry.id));
            }
        }
        if problems.is_empty() {
            Verdict::Ok
        } else {
            Verdict::Failed(format!("list: {}", problems.join("; ")))
        }
    }

    async fn close(&self, pane: PaneId, unfinished: &mut Vec<PaneId>) -> Verdict {
        match self.link.client.close(&pane).await {
            Ok(_) => {
                self.world.book.set_life(&pane, Life::Closed);
                Verdict::Ok
            }
            Err(error) => match self.world.life.classify(self.link.epoch, error) {
                ErrorClass::LostToRestart => {
                    self.world.book.set_life(&pane, Life::Uncertain);
                    unfinished.push(pane);
                    Verdict::LostToRestart
                }
                other => {
                    // Nothing else may close it: it was claimed for this
                    // close. Close it again later to settle its fate.
                    self.world.book.set_life(&pane, Life::Uncertain);
                    unfinished.push(pane.clone());
                    other.verdict(&format!("close of {pane}"), |_| false)
                }
            },
        }
    }

    async fn start(&self, rng: &mut Rng) -> Verdict {
        let kind = PaneKind::draw(rng);
        let params = kind.start_params(rng);
        match self.link.client.start(params.clone()).await {
            Ok(summary) if summary.runtime == params.runtime && Some(summary.size) == params.size => {
                self.world.book.register(&summary, kind);
                Verdict::Ok
            }
            Ok(summary) => {
                self.world.book.register(&summary, kind);
                Verdict::Failed(format!(
                    "start of a {} pane answered runtime {} at {} for {} at {:?}",
                    kind.label(),
                    summary.runtime,
                    summary.size,
                    params.runtime,
                    params.size
                ))
            }
            Err(error) => match self.world.life.classify(self.link.epoch, error) {
                ErrorClass::LostToRestart => {
                    self.world.book.start_lost();
                    Verdict::LostToRestart
                }
                other => other.verdict(&format!("start of a {} pane", kind.label()), |_| false),
            },
        }
    }
}
