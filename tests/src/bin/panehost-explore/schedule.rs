//! A schedule: every client's operations with the delay before each, and
//! the faults with their times, all drawn from one seed before anything
//! runs, so that the same seed gives the same schedule (the real timings
//! vary from run to run).
//!
//! Pane slot `s` is owned by client `s % clients`: only its owner starts,
//! closes, types into (`ask`, `send`, `answer`) and interrupts the pane in it, one
//! operation after the other, so that what each command printed can be
//! told apart. Every client looks at every slot (inspect, history, events
//! from any offset, wait_for, resize, list, watch).

use crate::command::CommandSpec;
use panehost_tests::rng::Rng;
use std::fmt;

/// Where an `events` operation starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventsFrom {
    /// No offset: the current screen.
    Screen,
    /// Offset 0.
    Zero,
    /// This fraction (per mille) of the end offset the followers reached.
    Within(u16),
    /// Exactly the end offset the followers reached.
    End,
    /// Far beyond the pane's end: `OFFSET_OUT_OF_RANGE`.
    Beyond,
}

/// One operation of a client.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// Start a shell pane in the slot (owner) whose startup file takes
    /// `startup_ms` before bash draws its first prompt.
    Start { slot: usize, startup_ms: u32 },
    /// Ask the slot's pane to run a command (owner).
    Ask { slot: usize, command: CommandSpec },
    /// Type a command with Enter (owner).
    Send { slot: usize, command: CommandSpec },
    /// Type an empty line, with Enter (owner): the line a command that
    /// reads waits for, or an empty command line at the prompt. When
    /// `reader` is given, first wait (up to 3 s) for that command's begin
    /// marker, so that the line often finds it reading.
    Answer { slot: usize, reader: Option<u64> },
    /// Interrupt the slot's pane (owner).
    Interrupt { slot: usize },
    /// Wait for output: the end marker of command `command` when given
    /// (from offset 0), else any end marker from now.
    WaitFor { slot: usize, command: Option<u64>, timeout_ms: u64 },
    /// Resize (an invalid size when `cols` is 0).
    Resize { slot: usize, cols: u16, rows: u16 },
    /// Inspect.
    Inspect { slot: usize },
    /// History.
    History { slot: usize, lines: u32 },
    /// Subscribe and read for a while.
    Events { slot: usize, from: EventsFrom, read_ms: u64 },
    /// Watch every pane for a while.
    Watch { read_ms: u64 },
    /// List every pane.
    List,
    /// Close the slot's pane (owner).
    Close { slot: usize },
}

impl Op {
    /// The slot the operation is about, when it is about one.
    pub fn slot(&self) -> Option<usize> {
        match self {
            Op::Start { slot, .. }
            | Op::Ask { slot, .. }
            | Op::Send { slot, .. }
            | Op::Answer { slot, .. }
            | Op::Interrupt { slot }
            | Op::WaitFor { slot, .. }
            | Op::Resize { slot, .. }
            | Op::Inspect { slot }
            | Op::History { slot, .. }
            | Op::Events { slot, .. }
            | Op::Close { slot } => Some(*slot),
            Op::Watch { .. } | Op::List => None,
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Op::Start { slot, startup_ms: 0 } => write!(f, "start s{slot}"),
            Op::Start { slot, startup_ms } => write!(f, "start s{slot} (its startup file takes {startup_ms} ms)"),
            Op::Ask { slot, command } => write!(f, "ask s{slot} {}", command.describe()),
            Op::Send { slot, command } => write!(f, "send s{slot} {}", command.describe()),
            Op::Answer { slot, reader: None } => write!(f, "answer s{slot} (an empty line)"),
            Op::Answer { slot, reader: Some(id) } => write!(f, "answer s{slot} (an empty line, once #{id} began)"),
            Op::Interrupt { slot } => write!(f, "interrupt s{slot}"),
            Op::WaitFor { slot, command: Some(id), timeout_ms } => {
                write!(f, "wait_for s{slot} end of #{id} ({timeout_ms} ms)")
            }
            Op::WaitFor { slot, command: None, timeout_ms } => {
                write!(f, "wait_for s{slot} any end marker ({timeout_ms} ms)")
            }
            Op::Resize { slot, cols, rows } => write!(f, "resize s{slot} {cols}x{rows}"),
            Op::Inspect { slot } => write!(f, "inspect s{slot}"),
            Op::History { slot, lines } => write!(f, "history s{slot} {lines} lines"),
            Op::Events { slot, from, read_ms } => write!(f, "events s{slot} from {from:?} for {read_ms} ms"),
            Op::Watch { read_ms } => write!(f, "watch for {read_ms} ms"),
            Op::List => write!(f, "list"),
            Op::Close { slot } => write!(f, "close s{slot}"),
        }
    }
}

/// An operation and the pause before it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Milliseconds after the previous operation was answered.
    pub delay_ms: u64,
    /// What is done.
    pub op: Op,
}

/// What one client does.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientPlan {
    /// The connection it sends on (shared with other clients or not).
    pub connection: usize,
    /// Its operations, in order.
    pub steps: Vec<Step>,
}

/// A fault.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FaultKind {
    /// SIGKILL of the host, then a new host on the same socket and state.
    KillHost,
    /// SIGKILL of one of the host's keepers (`pick` modulo how many).
    KillKeeper { pick: u64 },
}

/// A fault and when it strikes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Fault {
    /// Milliseconds after the clients began.
    pub at_ms: u64,
    /// What.
    pub kind: FaultKind,
}

/// What a schedule is made of.
#[derive(Debug, Clone, Copy)]
pub struct Shape {
    /// Client tasks.
    pub clients: usize,
    /// Pane slots.
    pub panes: usize,
    /// Operations per client.
    pub ops: usize,
    /// Whether faults (host and keeper kills) are drawn.
    pub faults: bool,
}

/// A whole schedule.
#[derive(Debug, Clone)]
pub struct Schedule {
    /// The seed it was drawn from.
    pub seed: u64,
    /// Pane slots.
    pub panes: usize,
    /// Connections the clients share.
    pub connections: usize,
    /// One plan per client.
    pub clients: Vec<ClientPlan>,
    /// Faults, by time.
    pub faults: Vec<Fault>,
}

impl Schedule {
    /// The schedule of `seed`.
    pub fn generate(seed: u64, shape: Shape) -> Schedule {
        let clients = shape.clients.max(1);
        let panes = shape.panes.max(1);
        let mut rng = Rng::new(seed, 0);
        // At least one connection shared by two clients when there are two.
        let connections = if clients == 1 { 1 } else { (clients - 1).max(1) };
        let mut next_command = 1;
        let mut plans = Vec::new();
        for index in 0..clients {
            let connection = if index < connections { index } else { rng.index(connections) };
            let owned: Vec<usize> = (0..panes).filter(|slot| slot % clients == index).collect();
            let mut crng = Rng::new(seed, 1 + index as u64);
            let steps = client_steps(&mut crng, &owned, panes, shape.ops, &mut next_command);
            plans.push(ClientPlan { connection, steps });
        }
        let mut faults = Vec::new();
        if shape.faults {
            for _ in 0..rng.weighted(&[25, 50, 25]) {
                faults.push(Fault { at_ms: rng.range(100, 6000), kind: FaultKind::KillHost });
            }
            for _ in 0..rng.weighted(&[50, 50]) {
                faults
                    .push(Fault { at_ms: rng.range(100, 6000), kind: FaultKind::KillKeeper { pick: rng.next_u64() } });
            }
            faults.sort_by_key(|fault| fault.at_ms);
        }
        Schedule { seed, panes, connections, clients: plans, faults }
    }

    /// How many operations the clients make in all.
    pub fn operations(&self) -> usize {
        self.clients.iter().map(|plan| plan.steps.len()).sum()
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(
            f,
            "schedule of seed {}: {} pane slots, {} clients on {} connections",
            self.seed,
            self.panes,
            self.clients.len(),
            self.connections
        )?;
        for (index, plan) in self.clients.iter().enumerate() {
            writeln!(f, "  client {index} (connection {}):", plan.connection)?;
            for (n, step) in plan.steps.iter().enumerate() {
                writeln!(f, "    {n:>2}. +{:>4} ms  {}", step.delay_ms, step.op)?;
            }
        }
        if self.faults.is_empty() {
            writeln!(f, "  faults: none")?;
        }
        for fault in &self.faults {
            match fault.kind {
                FaultKind::KillHost => writeln!(f, "  at {:>5} ms: SIGKILL the host, start it again", fault.at_ms)?,
                FaultKind::KillKeeper { pick } => {
                    writeln!(f, "  at {:>5} ms: SIGKILL keeper pick {pick}", fault.at_ms)?
                }
            }
        }
        Ok(())
    }
}

fn command(rng: &mut Rng, next: &mut u64, long: bool) -> CommandSpec {
    let id = *next;
    *next += 1;
    let sleep_ms = if long {
        3000
    } else {
        match rng.weighted(&[50, 35, 15]) {
            0 => 0,
            1 => rng.range(20, 300) as u32,
            _ => rng.range(300, 1200) as u32,
        }
    };
    // A fifth of the short ones read a line (up to 2 s) before they end.
    let reads_ms = if !long && rng.percent(20) { rng.range(200, 2000) as u32 } else { 0 };
    CommandSpec { id, status: rng.range(0, 9) as u8, filler: rng.range(0, 2) as u8, sleep_ms, reads_ms }
}

/// The steps of one client owning `owned` slots of `panes`.
fn client_steps(rng: &mut Rng, owned: &[usize], panes: usize, count: usize, next: &mut u64) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut started = vec![false; panes];
    let mut just_started: Option<usize> = None;
    let mut last_send: Vec<Option<(u64, bool)>> = vec![None; panes];
    // The last command typed into the slot, when it reads a line.
    let mut reads: Vec<Option<u64>> = vec![None; panes];
    while steps.len() < count {
        let mut delay_ms = random_delay_ms(rng);
        let running: Vec<usize> = owned.iter().copied().filter(|slot| started[*slot]).collect();
        let stopped: Vec<usize> = owned.iter().copied().filter(|slot| !started[*slot]).collect();
        if steps.is_empty() && !stopped.is_empty() {
            delay_ms = 0;
        }
        let op = if let Some(slot) = just_started.take() {
            // Right after a start, often with no delay at all.
            if rng.percent(60) {
                delay_ms = 0;
            }
            let picked = rng.weighted(&[52, 15, 10, 10, 10, 3]);
            match picked {
                0 | 1 => {
                    let command = command(rng, next, false);
                    reads[slot] = (command.reads_ms > 0).then_some(command.id);
                    if picked == 0 {
                        Op::Ask { slot, command }
                    } else {
                        Op::Send { slot, command }
                    }
                }
                2 => Op::Inspect { slot },
                3 => Op::Resize { slot, cols: rng.range(60, 200) as u16, rows: rng.range(12, 50) as u16 },
                4 => Op::Events { slot, from: EventsFrom::Zero, read_ms: rng.range(0, 500) },
                _ => Op::Interrupt { slot },
            }
        } else if !stopped.is_empty() && (running.is_empty() || steps.is_empty() || rng.percent(25)) {
            let slot = stopped[rng.index(stopped.len())];
            started[slot] = true;
            just_started = Some(slot);
            let startup_ms = match rng.weighted(&[50, 25, 25]) {
                0 => 0,
                1 => rng.range(50, 200) as u32,
                _ => rng.range(200, 600) as u32,
            };
            Op::Start { slot, startup_ms }
        } else {
            let any = rng.index(panes);
            let mine = if running.is_empty() { None } else { Some(running[rng.index(running.len())]) };
            let slot = mine.unwrap_or(any);
            // An answer is likelier while the last command typed reads.
            let answer = match mine {
                Some(slot) if reads[slot].is_some() => 12,
                Some(_) => 2,
                None => 0,
            };
            let weights: [u32; 13] = if mine.is_some() {
                [26, 10, 5, 8, 5, 6, 4, 9, 3, 4, 3, 4, answer]
            } else {
                [0, 0, 0, 10, 10, 15, 8, 20, 6, 8, 0, 0, 0]
            };
            match rng.weighted(&weights) {
                0 => {
                    let command = command(rng, next, false);
                    reads[slot] = (command.reads_ms > 0).then_some(command.id);
                    Op::Ask { slot, command }
                }
                1 => {
                    let long = rng.percent(30);
                    let command = command(rng, next, long);
                    last_send[slot] = Some((command.id, long));
                    reads[slot] = (command.reads_ms > 0).then_some(command.id);
                    Op::Send { slot, command }
                }
                2 => Op::Interrupt { slot },
                3 => {
                    let mine_last = last_send[slot].filter(|_| mine.is_some() && rng.percent(70));
                    match mine_last {
                        Some((id, long)) => {
                            Op::WaitFor { slot, command: Some(id), timeout_ms: if long { 2000 } else { 15_000 } }
                        }
                        None => Op::WaitFor { slot: any, command: None, timeout_ms: rng.range(0, 2000) },
                    }
                }
                4 => {
                    if rng.percent(10) {
                        Op::Resize { slot: any, cols: 0, rows: 24 }
                    } else {
                        Op::Resize { slot: any, cols: rng.range(60, 200) as u16, rows: rng.range(12, 50) as u16 }
                    }
                }
                5 => Op::Inspect { slot: any },
                6 => Op::History { slot: any, lines: rng.range(0, 200) as u32 },
                7 => {
                    let from = match rng.weighted(&[15, 25, 35, 15, 10]) {
                        0 => EventsFrom::Screen,
                        1 => EventsFrom::Zero,
                        2 => EventsFrom::Within(rng.range(0, 1000) as u16),
                        3 => EventsFrom::End,
                        _ => EventsFrom::Beyond,
                    };
                    Op::Events { slot: any, from, read_ms: rng.range(0, 800) }
                }
                8 => Op::Watch { read_ms: rng.range(0, 800) },
                9 => Op::List,
                10 => {
                    started[slot] = false;
                    last_send[slot] = None;
                    reads[slot] = None;
                    Op::Close { slot }
                }
                12 => {
                    let reader = reads[slot].take().filter(|_| rng.percent(80));
                    Op::Answer { slot, reader }
                }
                _ => {
                    // An interrupt right after a long command, when there is one.
                    match last_send[slot] {
                        Some((_, true)) => Op::Interrupt { slot },
                        _ => {
                            let command = command(rng, next, false);
                            reads[slot] = (command.reads_ms > 0).then_some(command.id);
                            Op::Ask { slot, command }
                        }
                    }
                }
            }
        };
        steps.push(Step { delay_ms, op });
    }
    steps
}

/// A delay in milliseconds before a step: zero a third of the time, else
/// short, now and then long.
fn random_delay_ms(rng: &mut Rng) -> u64 {
    match rng.weighted(&[34, 40, 20, 6]) {
        0 => 0,
        1 => rng.range(1, 20),
        2 => rng.range(20, 300),
        _ => rng.range(300, 1500),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_seed_gives_the_same_schedule() {
        let shape = Shape { clients: 3, panes: 3, ops: 20, faults: true };
        let a = Schedule::generate(42, shape).to_string();
        assert_eq!(a, Schedule::generate(42, shape).to_string());
        assert_ne!(a, Schedule::generate(43, shape).to_string());
    }
}
