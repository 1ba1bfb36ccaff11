//! Many starts at once: 32 interactive shells started one after another,
//! and 32 started at the same moment, each timed until every shell has
//! drawn its prompt. A system whose starts wait for each other takes as
//! long for the burst as for the row; one that overlaps them takes less.
//!
//! - panehost: one connection (the client library); in a row, each
//!   `start` is answered before the next is sent; at once, all 32 are
//!   sent together. Ready: the pane's output has begun (`list`).
//! - tmux: `tmux new-window -d` commands; in a row, each exits before the
//!   next is run; at once, all 32 run together. Ready: the pane's cursor
//!   has left column 0 (`list-panes`).
//! - raw: `sh` in a fresh PTY, spawned by the bench; in a row from one
//!   thread, at once from 32 threads. Ready: its first output is read.
//!
//! Each round runs every system both ways, in turns; the panes are ended
//! outside the clock.

use crate::host::shell_pane;
use crate::raw_pty::RawPty;
use crate::report::{Better, Figure};
use crate::stats::{median, ratios};
use crate::tmux::TmuxServer;
use crate::{progress, Bench, BenchResult};
use panehost_client::Client;
use panehost_ipc::PaneId;
use std::io::Read;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

/// Panes in each burst.
pub const BURST: usize = 32;

/// Rounds when `--rounds` is not given.
const DEFAULT_ROUNDS: usize = 5;

/// How long a burst may take before the bench gives up on it.
const READY_TIMEOUT: Duration = Duration::from_secs(60);

/// How often readiness is looked at.
const POLL: Duration = Duration::from_millis(2);

/// How the 32 starts are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Order {
    InARow,
    AtOnce,
}

/// One burst's times, in ms from the first start.
#[derive(Debug, Clone, Copy)]
struct Burst {
    /// Until the last start returned (panehost: its `started` answer).
    started_ms: f64,
    /// Until the last pane was ready.
    ready_ms: f64,
}

pub fn run(bench: &Bench) -> BenchResult<Vec<Figure>> {
    let rounds = bench.options.rounds_or(DEFAULT_ROUNDS);
    let host = bench.start_host(&[])?;
    let client = bench.runtime.block_on(host.connect())?;
    let tmux = bench.start_tmux(2000)?;
    // Pays one-time costs (the first keeper, tmux's first window) before
    // anything is measured.
    bench.runtime.block_on(panehost_burst(&client, Order::InARow))?;
    tmux_burst(&tmux, Order::InARow)?;

    let mut times: [Vec<(Burst, Burst, Burst)>; 2] = [Vec::new(), Vec::new()];
    for round in 0..rounds {
        for (slot, order) in [Order::InARow, Order::AtOnce].into_iter().enumerate() {
            let p = bench.runtime.block_on(panehost_burst(&client, order))?;
            let t = tmux_burst(&tmux, order)?;
            let r = raw_burst(order)?;
            times[slot].push((p, t, r));
        }
        progress(&format!(
            "start-{BURST}: round {}: panehost in a row {:.1} ms, at once {:.1} ms",
            round + 1,
            times[0][round].0.ready_ms,
            times[1][round].0.ready_ms
        ));
    }
    drop(client);
    host.stop();
    tmux.kill();

    let figure = |name: &str, runs: &[(Burst, Burst, Burst)]| {
        let ready = |pick: fn(&(Burst, Burst, Burst)) -> Burst| -> Vec<f64> {
            runs.iter().map(|run| pick(run).ready_ms).collect()
        };
        let answered: Vec<f64> = runs.iter().map(|run| run.0.started_ms).collect();
        Figure::from_rounds(
            name,
            "ms",
            Better::Lower,
            ready(|run| run.0),
            Some(ready(|run| run.1)),
            Some(ready(|run| run.2)),
        )
        .note(format!("panehost: the last `started` answer came after {:.1} ms (median)", median(&answered)))
    };
    let at_once_over_row = |pick: fn(&(Burst, Burst, Burst)) -> Burst| {
        let row: Vec<f64> = times[0].iter().map(|run| pick(run).ready_ms).collect();
        let once: Vec<f64> = times[1].iter().map(|run| pick(run).ready_ms).collect();
        median(&ratios(&once, &row))
    };
    let overlap = format!(
        "at once / in a row (median of rounds; below 1: starts overlap): panehost {:.2}, tmux {:.2}, raw {:.2}",
        at_once_over_row(|run| run.0),
        at_once_over_row(|run| run.1),
        at_once_over_row(|run| run.2)
    );
    Ok(vec![
        figure(&format!("start-{BURST}/in-a-row"), &times[0]).note(format!(
            "{BURST} interactive shells started one after another, until every prompt is out; panehost \
             through one connection, tmux `new-window -d` commands, raw `sh` in PTYs the bench opens"
        )),
        figure(&format!("start-{BURST}/at-once"), &times[1])
            .note(format!("the same {BURST} starts made at the same moment"))
            .note(overlap),
    ])
}

fn ms_since(started: Instant) -> f64 {
    started.elapsed().as_secs_f64() * 1e3
}

async fn panehost_burst(client: &Client, order: Order) -> BenchResult<Burst> {
    let began = Instant::now();
    let mut panes: Vec<PaneId> = Vec::with_capacity(BURST);
    match order {
        Order::InARow => {
            for _ in 0..BURST {
                panes.push(client.start(shell_pane(&[])).await?.id);
            }
        }
        Order::AtOnce => {
            let starts = (0..BURST).map(|_| client.start(shell_pane(&[])));
            for started in futures_util::future::join_all(starts).await {
                panes.push(started?.id);
            }
        }
    }
    let started_ms = ms_since(began);
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        let list = client.list().await?;
        let ready = list.iter().filter(|pane| panes.contains(&pane.id) && pane.offset > 0).count();
        if ready == panes.len() {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("only {ready} of {BURST} panehost shells drew a prompt in {READY_TIMEOUT:?}").into());
        }
        tokio::time::sleep(POLL).await;
    }
    let ready_ms = ms_since(began);
    for pane in &panes {
        client.close(pane).await?;
    }
    Ok(Burst { started_ms, ready_ms })
}

fn tmux_burst(tmux: &TmuxServer, order: Order) -> BenchResult<Burst> {
    let new_window = || tmux.command().args(["new-window", "-d", "-t", "keep:"]).stdin(Stdio::null()).spawn();
    let began = Instant::now();
    match order {
        Order::InARow => {
            for _ in 0..BURST {
                expect_success(new_window()?)?;
            }
        }
        Order::AtOnce => {
            let children = (0..BURST).map(|_| new_window()).collect::<Result<Vec<Child>, _>>()?;
            for child in children {
                expect_success(child)?;
            }
        }
    }
    let started_ms = ms_since(began);
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        // The `keep` session's own pane (`cat`) keeps its cursor at 0.
        let listed = tmux.cmd(&["list-panes", "-s", "-t", "keep", "-F", "#{cursor_x}"])?;
        let ready = listed.lines().filter(|x| x.trim().parse::<u64>().is_ok_and(|x| x > 0)).count();
        if ready >= BURST {
            break;
        }
        if Instant::now() > deadline {
            return Err(format!("only {ready} of {BURST} tmux shells drew a prompt in {READY_TIMEOUT:?}").into());
        }
        std::thread::sleep(POLL);
    }
    let ready_ms = ms_since(began);
    // Every window but the first (`cat`).
    tmux.cmd(&["kill-window", "-a", "-t", "keep:0"])?;
    Ok(Burst { started_ms, ready_ms })
}

fn expect_success(mut child: Child) -> BenchResult<()> {
    if !child.wait()?.success() {
        return Err("tmux new-window failed".into());
    }
    Ok(())
}

fn raw_burst(order: Order) -> BenchResult<Burst> {
    let began = Instant::now();
    let mut ptys: Vec<RawPty> = match order {
        Order::InARow => (0..BURST).map(|_| RawPty::spawn(&["sh"])).collect::<BenchResult<_>>()?,
        Order::AtOnce => std::thread::scope(|scope| {
            let spawns: Vec<_> = (0..BURST).map(|_| scope.spawn(|| RawPty::spawn(&["sh"]))).collect();
            spawns
                .into_iter()
                .map(|spawn| spawn.join().unwrap_or_else(|_| Err("a spawn thread panicked".into())))
                .collect::<BenchResult<Vec<RawPty>>>()
        })?,
    };
    let started_ms = ms_since(began);
    // Each shell's first output, read as it comes (a blocking read each:
    // the slowest decides the time).
    for pty in &mut ptys {
        let mut first = [0u8; 256];
        if pty.reader.read(&mut first)? == 0 {
            return Err("a raw shell ended before its prompt".into());
        }
    }
    let ready_ms = ms_since(began);
    for pty in ptys {
        pty.end();
    }
    Ok(Burst { started_ms, ready_ms })
}
