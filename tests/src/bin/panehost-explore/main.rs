//! `panehost-explore`: a schedule explorer for panehost. It searches
//! timings the way a fuzzer searches inputs: from a seed it draws a whole
//! schedule up front (several clients' operations, the delay before each,
//! zero included, and faults at set times), runs it against a real host of
//! its own, records what every client saw, checks it, and prints the seed.
//! The same `--seed` draws the same schedule again (the real timings of
//! course vary).
//!
//! ```text
//! cargo build -p panehost-host --bin panehost && cargo build -p panehost-tests --bin panehost-explore
//! target/debug/panehost-explore --seconds 120
//! target/debug/panehost-explore --seed 1234 --schedules 1   # one schedule again
//! ```
//!
//! Each schedule runs on a fresh host (the `panehost` next to this binary,
//! or `--panehost PATH`) in a temp directory of its own (socket, state,
//! HOME with a `.bashrc` that sets the prompt, log), with a cleared
//! environment and bash as the shell, so `shell` panes get the host's
//! shell integration. What a schedule does:
//!
//! - `--clients` clients, some sharing one connection, others on their
//!   own, each running its operations in order: start (a `shell` pane, no
//!   command), ask and send (a command that prints a marker and exits with
//!   a chosen status), interrupt, wait_for, resize, inspect, history,
//!   events from random offsets (0, inside, the end, far beyond), watch,
//!   list and close. Pane slot `s` is owned by client `s % clients`: only
//!   its owner starts, types into, interrupts and closes it;
//! - faults (unless `--no-kill`): SIGKILL of the host at set times and a
//!   new host on the same socket and state directory; SIGKILL of a keeper
//!   (a `panehost-keeper` process naming the state directory).
//!
//! What it checks, after every operation and at the end:
//!
//! - every answer is what the protocol documents for the situation (an
//!   error only where documented; a request lost only with a killed host);
//!   every operation is answered within its own time plus a margin (a
//!   watchdog: a hang is a failure);
//! - each `ask` reports its own command: its two markers once each in
//!   `added_text`, no other command's marker, `exit_code` the command's
//!   status, `source` `shell_integration`;
//! - each pane's follower (subscribed from 0 as soon as the start is
//!   answered, resuming with `reconnect` after a kill) gets contiguous
//!   bytes, with gaps only where the host announced them (`skipped_from`,
//!   `resync`, a generation change, counted and reported), and turn
//!   events after the output up to their offset, one turn open at a time;
//!   its bytes equal a fresh `events` replay of the same range (before
//!   every kill and at the end) and what `events` operations received at
//!   the same offsets;
//!   every command's markers appear in its pane's output exactly once, in
//!   the order typed (at most once when an interrupt, a close or a kill
//!   came between; never when the host refused to type it);
//! - `activity`, watched for the whole schedule, moves only along the
//!   state machine in `watcher.rs` (and docs/RELIABILITY.md);
//! - after every restart, and at the end, the host lists exactly the panes
//!   the explorer believes alive; every pane closes; the host exits on
//!   SIGTERM; no keeper or pane process is left; the host's log has no
//!   panic.
//!
//! A failing schedule prints its seed, the schedule and the failures, and
//! the run exits 1 (with `--keep-going` the other schedules run too);
//! success ends with `explore PASSED: ...`. Whatever way it ends (Ctrl-C
//! included), it ends every process it started, by pid.

mod checks;
mod command;
mod explore;
mod faults;
mod follow;
mod host;
mod life;
mod ops;
mod schedule;
mod watcher;
mod world;

use clap::Parser;
use schedule::{Schedule, Shape};
use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

/// The command line.
#[derive(Debug, Clone, Parser)]
#[command(name = "panehost-explore", about = "Random schedules with faults against a real panehost, checked.")]
struct Options {
    /// The seed of the first schedule; the others' seeds derive from it
    /// (default: from the clock).
    #[arg(long)]
    seed: Option<u64>,
    /// The budget: no schedule starts after this many seconds.
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// The most schedules to run (0: as many as the budget allows).
    #[arg(long, default_value_t = 0)]
    schedules: u64,
    /// Clients per schedule.
    #[arg(long, default_value_t = 3)]
    clients: usize,
    /// Pane slots per schedule.
    #[arg(long, default_value_t = 3)]
    panes: usize,
    /// Operations per client.
    #[arg(long, default_value_t = 14)]
    ops: usize,
    /// No faults: neither the host nor a keeper is killed.
    #[arg(long)]
    no_kill: bool,
    /// The longest delay the host gives itself at its jitter points
    /// (`PANEHOST_JITTER`, drawn from each schedule's seed), in ms; 0 for
    /// none.
    #[arg(long, default_value_t = 150, value_parser = clap::value_parser!(u64).range(0..=2000))]
    jitter_ms: u64,
    /// The `panehost` binary (default: the one next to this binary).
    #[arg(long, value_name = "PATH")]
    panehost: Option<PathBuf>,
    /// Run the other schedules after one failed.
    #[arg(long)]
    keep_going: bool,
    /// Keep every schedule's directory (host log, state), even passing.
    #[arg(long)]
    keep: bool,
    /// Print every operation as it is answered.
    #[arg(long)]
    verbose: bool,
    /// Print each schedule before it runs.
    #[arg(long)]
    print_schedule: bool,
}

fn main() -> ExitCode {
    let options = Options::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("panehost-explore: cannot start the async runtime: {error}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(async {
        tokio::select! {
            code = explore_all(&options) => code,
            signal = interrupted() => {
                // The schedule's future is dropped: its host, keepers and
                // panes are ended by pid as it goes.
                eprintln!("[explore] {signal}: stopped");
                ExitCode::from(130)
            }
        }
    })
}

/// Resolves on Ctrl-C, SIGTERM or SIGHUP; says which.
async fn interrupted() -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut term), Ok(mut hangup)) = (signal(SignalKind::terminate()), signal(SignalKind::hangup())) else {
        let _ = tokio::signal::ctrl_c().await;
        return "interrupted";
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => "interrupted",
        _ = term.recv() => "SIGTERM",
        _ = hangup.recv() => "SIGHUP",
    }
}

/// The seed of schedule `index`: the base seed itself for the first, so
/// that `--seed S --schedules 1` replays schedule S.
fn schedule_seed(base: u64, index: u64) -> u64 {
    if index == 0 {
        base
    } else {
        panehost_tests::rng::Rng::new(base, 0x5eed_0000 + index).next_u64()
    }
}

async fn explore_all(options: &Options) -> ExitCode {
    let base = options.seed.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    });
    let program = match &options.panehost {
        Some(path) => path.clone(),
        None => match std::env::current_exe().ok().and_then(|exe| exe.parent().map(|dir| dir.join("panehost"))) {
            Some(path) => path,
            None => {
                eprintln!("panehost-explore: cannot tell where this binary is; pass --panehost PATH");
                return ExitCode::from(2);
            }
        },
    };
    if !program.is_file() {
        eprintln!(
            "panehost-explore: {} is missing: build it (cargo build -p panehost-host --bin panehost) or pass --panehost PATH",
            program.display()
        );
        return ExitCode::from(2);
    }
    let shape = Shape { clients: options.clients, panes: options.panes, ops: options.ops, faults: !options.no_kill };
    let replay_flags = format!(
        "--clients {} --panes {} --ops {} --jitter-ms {}{}",
        options.clients,
        options.panes,
        options.ops,
        options.jitter_ms,
        if options.no_kill { " --no-kill" } else { "" }
    );
    eprintln!("[explore] base seed {base}; {replay_flags}; budget {} s", options.seconds);
    let began = Instant::now();
    let budget = Duration::from_secs(options.seconds);
    let mut totals: BTreeMap<String, u64> = BTreeMap::new();
    let mut ran = 0u64;
    let mut failed: Vec<u64> = Vec::new();
    let mut failure_kinds: BTreeMap<String, (u64, u64)> = BTreeMap::new();
    let mut index = 0u64;
    loop {
        if index > 0 && began.elapsed() >= budget {
            break;
        }
        if options.schedules > 0 && index >= options.schedules {
            break;
        }
        let seed = schedule_seed(base, index);
        let schedule = Schedule::generate(seed, shape);
        let root = std::env::temp_dir().join(format!("panehost-explore-{}-{index}", std::process::id()));
        eprintln!(
            "[explore] schedule {index}: seed {seed}, {} operations, {} faults",
            schedule.operations(),
            schedule.faults.len()
        );
        if options.print_schedule {
            eprint!("{schedule}");
        }
        let schedule_began = Instant::now();
        let outcome = explore::run(&schedule, &program, &root, options.verbose, options.jitter_ms).await;
        ran += 1;
        for (what, n) in &outcome.counts {
            *totals.entry(what.clone()).or_default() += n;
        }
        let passed = outcome.passed();
        eprintln!(
            "[explore] schedule {index}: seed {seed} {} in {:.1} s",
            if passed { "passed" } else { "FAILED" },
            schedule_began.elapsed().as_secs_f64()
        );
        if passed && !options.keep {
            let _ = std::fs::remove_dir_all(&outcome.dir);
        }
        if !passed {
            failed.push(seed);
            println!("--- schedule {index} FAILED: seed {seed} ---");
            print!("{schedule}");
            if let Some(problem) = &outcome.aborted {
                println!("  aborted: {problem}");
            }
            println!("  failures ({}):", outcome.failures.len());
            for failure in outcome.failures.iter().take(40) {
                println!("    [{}] {}", failure.check, failure.detail);
                failure_kinds.entry(failure.check.clone()).or_insert((0, seed)).0 += 1;
            }
            if outcome.failures.len() > 40 {
                println!("    ... and {} more", outcome.failures.len() - 40);
            }
            println!("  host directory kept: {}", outcome.dir.display());
            println!("  replay: panehost-explore --seed {seed} --schedules 1 {replay_flags}");
            if !options.keep_going {
                break;
            }
        }
        index += 1;
    }
    println!("figures over {ran} schedule(s):");
    for (what, n) in &totals {
        println!("  {what:<60} {n}");
    }
    let count = |what: &str| totals.get(what).copied().unwrap_or(0);
    let gaps = count("announced gaps (skipped_from)") + count("announced gaps (resync)");
    if failed.is_empty() {
        println!(
            "explore PASSED: {ran} schedules, {} operations, {} host kills, {} keeper kills, {gaps} announced gaps (base seed {base})",
            count("operations"),
            count("host kills"),
            count("keeper kills"),
        );
        ExitCode::SUCCESS
    } else {
        for (check, (n, seed)) in &failure_kinds {
            println!("  failed check {check}: {n} time(s), first with seed {seed}");
        }
        println!(
            "explore FAILED: {} of {ran} schedules failed (seeds {failed:?}), {} operations, {} host kills, {} keeper kills, {gaps} announced gaps (base seed {base})",
            failed.len(),
            count("operations"),
            count("host kills"),
            count("keeper kills"),
        );
        ExitCode::FAILURE
    }
}
