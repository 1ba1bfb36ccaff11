//! `panehost-soak`: a soak run of panehost. It starts its own host, keeps
//! about a hundred panes busy, drives them from several clients at once
//! with random operations, follows a sample of them byte by byte, sends
//! hostile traffic, kills the host with SIGKILL half-way and starts it
//! again, then checks what survived and prints the figures.
//!
//! ```text
//! cargo build --release -p panehost-host -p panehost-tests
//! target/release/panehost-soak --seconds 120
//! ```
//!
//! The `panehost` it drives is the one next to this binary (or
//! `--panehost PATH`); the fixture agent must be next to this binary too.
//! The host runs in a temp directory of its own (socket, state, HOME,
//! log) with a cleared environment. What runs during the load:
//!
//! - `--panes` panes (default 100): mostly `sh -c` loops printing numbered
//!   `p-N` lines every 200 ms, some printing 50 padded lines at a time (so
//!   their ring wraps), some interactive shells, some fixture agents;
//! - `--clients` client tasks (default 6), each on its own connection,
//!   running random operations against random panes: send (raw and with
//!   enter), inspect, events from random offsets, reconnect, resize (valid
//!   and out of bounds), ask, interrupt, history, list, close and start.
//!   Every answer is checked against what the protocol documents for the
//!   situation; anything else is a failure;
//! - `--followers` followers (default 20), each recording every byte of
//!   one pane at its offset and every gap the host announces, reconnecting
//!   with `reconnect` when their connection drops; a few read slowly;
//! - `--storms` storm tasks (default 2) of hostile connections, and
//!   `--stalled` subscribers (default 4) that never read;
//! - at half time (unless `--no-crash`), a SIGKILL of the host and a new
//!   host on the same socket and state directory.
//!
//! Every 10 s during the load, just before the kill and at the end, each
//! follower's new bytes are compared with a fresh subscription from the
//! same offsets (the host's ring is kept small, `--ring-bytes`, so that
//! busy panes wrap it and "older than the ring" happens). At the end it
//! checks that every pane it believes alive is listed once, that the
//! numbered lines run on inside every run of bytes, looks for zombies,
//! bounds the host's open descriptors and PTY masters, reads the host's
//! log for panics, and stops the host with SIGTERM, expecting a clean exit
//! and nothing left behind. It prints the figures as tables on stdout
//! (progress and failures go to stderr as they happen) and exits 1 when
//! any check failed, 130 when interrupted.
//!
//! Whatever way it ends (success, failure, Ctrl-C, a panic), it ends every
//! process it started by pid: the host (SIGTERM, then SIGKILL), then the
//! pane processes (found by the socket in their environment) and keepers
//! (found by the state directory on their command line) that remain. The
//! temp directory is removed after a passing run and kept otherwise.

mod clients;
mod crash;
mod end_checks;
mod followers;
mod health;
mod host;
mod ledger;
mod link;
mod operations;
mod panes;
mod raw;
mod report;
mod stalled;
mod starts;
mod storm;
mod verify;
mod world;

use clap::Parser;
use followers::Followers;
use health::{FdModel, Sample};
use host::{HostCommand, HostDir, SoakHost};
use link::HostLife;
use panehost_client::ClientOptions;
use panehost_ipc::PaneId;
use panehost_tests::procfs;
use panehost_tests::rng::Rng;
use panes::PaneKind;
use report::{Check, Report};
use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinSet;
use tokio::time::Instant;
use verify::VerifiedRanges;
use world::{Settings, World};

/// The operations of the client tasks that must each succeed at least once.
const CLIENT_OPERATIONS: [&str; 12] = [
    "send-raw",
    "send-enter",
    "inspect",
    "events",
    "reconnect",
    "resize",
    "ask",
    "interrupt",
    "history",
    "list",
    "close",
    "start",
];

/// The command line.
#[derive(Debug, Clone, Parser)]
#[command(name = "panehost-soak", about = "Soak run of panehost: load, hostile traffic, a crash, then checks.")]
pub struct Options {
    /// How long the load runs, in seconds.
    #[arg(long, default_value_t = 120)]
    pub seconds: u64,
    /// How many panes the run keeps.
    #[arg(long, default_value_t = 100)]
    pub panes: usize,
    /// Client tasks running random operations, one connection each.
    #[arg(long, default_value_t = 6)]
    pub clients: usize,
    /// Panes followed byte by byte.
    #[arg(long, default_value_t = 20)]
    pub followers: usize,
    /// Tasks sending hostile traffic.
    #[arg(long, default_value_t = 2)]
    pub storms: usize,
    /// Subscribers that never read, held at any time.
    #[arg(long, default_value_t = 4)]
    pub stalled: usize,
    /// The seed of every random choice (default: from the clock).
    #[arg(long)]
    pub seed: Option<u64>,
    /// Do not kill and restart the host half-way.
    #[arg(long)]
    pub no_crash: bool,
    /// The `panehost` binary (default: the one next to this binary).
    #[arg(long, value_name = "PATH")]
    pub panehost: Option<PathBuf>,
    /// Output bytes each pane keeps (the host's PANEHOST_RING_BYTES);
    /// small enough that busy panes wrap it during the run.
    #[arg(long, default_value_t = 256 * 1024)]
    pub ring_bytes: usize,
    /// The longest pause between two operations of a client task, in ms.
    #[arg(long, default_value_t = 50)]
    pub pace_ms: u64,
    /// The timeout of every `ask`, in seconds.
    #[arg(long, default_value_t = 15)]
    pub ask_timeout: u64,
    /// The host's log filter (PANEHOST_LOG).
    #[arg(long, default_value = "info")]
    pub host_log: String,
    /// Keep the temp directory (host log, state) even after a passing run.
    #[arg(long)]
    pub keep: bool,
}

/// Prints progress on stderr.
pub fn progress(message: &str) {
    eprintln!("[soak] {message}");
}

fn main() -> ExitCode {
    let options = Options::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread().enable_all().build() {
        Ok(runtime) => runtime,
        Err(error) => {
            eprintln!("panehost-soak: cannot start the async runtime: {error}");
            return ExitCode::from(2);
        }
    };
    runtime.block_on(soak(options))
}

/// How a run ended.
enum Ending {
    /// It ran to the end; the report says whether it passed.
    Completed,
    /// Ctrl-C, SIGTERM or SIGHUP.
    Interrupted,
    /// It could not run (setup failed, the restart failed).
    Aborted(String),
}

async fn soak(options: Options) -> ExitCode {
    let seed = options.seed.unwrap_or_else(|| {
        std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_nanos() as u64).unwrap_or(1)
    });
    let bin_dir = match std::env::current_exe().ok().and_then(|exe| exe.parent().map(PathBuf::from)) {
        Some(dir) => dir,
        None => {
            eprintln!("panehost-soak: cannot tell where this binary is");
            return ExitCode::from(2);
        }
    };
    let program = options.panehost.clone().unwrap_or_else(|| bin_dir.join("panehost"));
    for needed in [program.clone(), bin_dir.join("panehost-fixture-agent")] {
        if !needed.is_file() {
            eprintln!(
                "panehost-soak: {} is missing: build it first (cargo build --release -p panehost-host -p panehost-tests) or pass --panehost PATH",
                needed.display()
            );
            return ExitCode::from(2);
        }
    }
    let root = std::env::temp_dir().join(format!("panehost-soak-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let dir = match HostDir::create(&root) {
        Ok(dir) => dir,
        Err(error) => {
            eprintln!("panehost-soak: cannot create {}: {error}", root.display());
            return ExitCode::from(2);
        }
    };
    let command = HostCommand {
        program,
        bin_dir,
        env: vec![
            ("PANEHOST_RING_BYTES".into(), options.ring_bytes.to_string()),
            ("PANEHOST_LOG".into(), options.host_log.clone()),
        ],
    };
    // Ends the host and whatever it left, by pid, however the run ends.
    let host = Mutex::new(SoakHost::new(dir.clone(), command));
    let settings = Settings {
        seed,
        pace: Duration::from_millis(options.pace_ms.max(1)),
        ask_timeout: Duration::from_secs(options.ask_timeout.max(1)),
    };
    let world = Arc::new(World::new(HostLife::new(dir.socket.clone()), options.panes, settings));
    let mut report = Report {
        header: format!(
            "panehost-soak: seed {seed}, {} s, {} panes, {} clients, {} followers, {} storm tasks, {} stalled subscribers, ring {} bytes, {}",
            options.seconds,
            options.panes,
            options.clients,
            options.followers,
            options.storms,
            options.stalled,
            options.ring_bytes,
            if options.no_crash { "no crash" } else { "SIGKILL and restart at half time" }
        ),
        ..Report::default()
    };
    progress(&format!("seed {seed}; host directory {}", dir.root.display()));

    let ending = tokio::select! {
        ending = run(&options, seed, &world, &host, &mut report) => ending,
        signal = interrupted() => {
            progress(&format!("{signal}: stopping"));
            Ending::Interrupted
        }
    };
    world.stop();
    let leftovers = lock(&host).end_everything();
    for what in &leftovers {
        progress(&format!("at exit: {what}"));
    }
    let code = match &ending {
        Ending::Completed => {
            println!("{}", report.render(&world.ledger));
            if report.passed() {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Ending::Interrupted => {
            report.checks.push(Check::new("the run completed", false, "interrupted: the checks did not run"));
            println!("{}", report.render(&world.ledger));
            ExitCode::from(130)
        }
        Ending::Aborted(problem) => {
            report.checks.push(Check::new("the run completed", false, format!("aborted: {problem}")));
            println!("{}", report.render(&world.ledger));
            ExitCode::FAILURE
        }
    };
    let passed = matches!(ending, Ending::Completed) && report.passed();
    if passed && !options.keep {
        let _ = std::fs::remove_dir_all(&dir.root);
    } else {
        progress(&format!("kept {} (host log: {})", dir.root.display(), dir.log.display()));
    }
    code
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

fn lock(host: &Mutex<SoakHost>) -> std::sync::MutexGuard<'_, SoakHost> {
    host.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// The whole run: setup, load (with the crash), stop, checks.
async fn run(options: &Options, seed: u64, world: &Arc<World>, host: &Mutex<SoakHost>, report: &mut Report) -> Ending {
    let dir = lock(host).dir.clone();
    let pid = match lock(host).spawn() {
        Ok(pid) => pid,
        Err(problem) => return Ending::Aborted(problem),
    };
    if let Err(problem) = host::wait_until_listening(&dir.socket, Duration::from_secs(60)).await {
        return Ending::Aborted(problem);
    }
    progress(&format!("host {pid} listens on {}", dir.socket.display()));
    let control_options = ClientOptions {
        request_timeout: Some(Duration::from_secs(60)),
        ..ClientOptions::named("panehost-soak control")
    };
    let control = match world.life.connect(&control_options).await {
        Ok(link) => link,
        Err(problem) => return Ending::Aborted(problem),
    };
    match control.client.runtimes().await {
        Ok(runtimes) => {
            for id in ["shell", "fixture"] {
                if !runtimes.iter().any(|runtime| runtime.id == id && runtime.available) {
                    return Ending::Aborted(format!("the host cannot start runtime {id}: {runtimes:?}"));
                }
            }
        }
        Err(error) => return Ending::Aborted(format!("runtimes: {error}")),
    }
    let fds_empty = procfs::fd_count(pid).unwrap_or(0);

    let mut rng = Rng::new(seed, 1);
    let kinds = initial_kinds(options.panes);
    progress(&format!("starting {} panes", kinds.len()));
    let started_at = Instant::now();
    for chunk in kinds.chunks(8) {
        let starts = chunk.iter().map(|kind| {
            let params = kind.start_params(&mut Rng::new(rng.next_u64(), 0));
            let client = control.client.clone();
            async move { (*kind, client.start(params).await) }
        });
        for (kind, started) in futures_util::future::join_all(starts).await {
            match started {
                Ok(summary) => world.book.register(&summary, kind),
                Err(error) => return Ending::Aborted(format!("starting a {} pane failed: {error}", kind.label())),
            }
        }
    }
    progress(&format!("{} panes started in {:.1} s", kinds.len(), started_at.elapsed().as_secs_f64()));
    let fds_with_panes = procfs::fd_count(pid).unwrap_or(0);
    let model = FdModel::calibrate(fds_empty, fds_with_panes, kinds.len());
    report.samples.push(Sample::take("start", &dir, pid, kinds.len(), world.life.open_connections(), &model));
    report.figure(
        "host",
        "fd model",
        format!(
            "{} with no pane, +{} per pane, +{} per connection, +{} slack",
            model.base, model.per_pane, model.per_connection, model.slack
        ),
    );

    let followed = choose_followers(world, options.followers, &mut rng);
    for (pane, _, _) in &followed {
        world.book.set_followed(pane);
    }
    let followers = Arc::new(Followers::new(followed));
    let mut tasks = JoinSet::new();
    for index in 0..followers.records.len() {
        tasks.spawn(followers::run(Arc::clone(world), Arc::clone(&followers), index));
    }
    if !followers.wait_all_connected(0, Duration::from_secs(60)).await {
        world.ledger.fail("followers", "not every follower subscribed within 60 s");
    }
    progress(&format!(
        "{} followers subscribed; starting {} clients, {} storm tasks, {} stalled subscribers for {} s",
        followers.records.len(),
        options.clients,
        options.storms,
        options.stalled,
        options.seconds
    ));
    for index in 0..options.clients {
        tasks.spawn(clients::run(Arc::clone(world), index as u64));
    }
    for index in 0..options.storms {
        tasks.spawn(storm::run(Arc::clone(world), index as u64));
    }
    for index in 0..options.stalled {
        tasks.spawn(stalled::run(Arc::clone(world), index as u64));
    }

    let verified = Arc::new(tokio::sync::Mutex::new(VerifiedRanges::default()));
    tasks.spawn(verify::run_passes(Arc::clone(world), Arc::clone(&followers), Arc::clone(&verified)));
    let load_started = Instant::now();
    let load_ends = load_started + Duration::from_secs(options.seconds);
    let mut restarted = false;
    let mut rss = Vec::new();
    if !options.no_crash {
        let half = load_started + Duration::from_secs(options.seconds) / 2;
        if let Err(problem) = report_progress_until(world, host, load_started, half, &mut rss).await {
            world.stop();
            return Ending::Aborted(problem);
        }
        match crash::crash_and_restart(world, host, &followers, &verified, &model).await {
            Ok(crash) => {
                restarted = true;
                report.figure("restart", "kill to listening", format!("{:.2} s", crash.until_listening.as_secs_f64()));
                report.figure(
                    "restart",
                    "kill to panes restored",
                    format!("{:.2} s", crash.until_restored.as_secs_f64()),
                );
                report.figure("restart", "panes listed after restart", crash.panes_listed);
                report.figure(
                    "restart",
                    "bytes verified in the pass just before the kill",
                    crash.before.bytes_verified,
                );
                report.samples.push(crash.sample);
            }
            Err(problem) => {
                world.ledger.fail("restart", problem.clone());
                world.stop();
                return Ending::Aborted(format!("the restart failed: {problem}"));
            }
        }
    }
    if let Err(problem) = report_progress_until(world, host, load_started, load_ends, &mut rss).await {
        world.stop();
        return Ending::Aborted(problem);
    }
    progress("stopping the load");
    report.figure(
        "host",
        "RSS during the load (s: MiB)",
        rss.iter().map(|(s, kib)| format!("{s}: {:.1}", *kib as f64 / 1024.0)).collect::<Vec<_>>().join(", "),
    );
    world.stop();
    let stop_deadline = Instant::now() + Duration::from_secs(180);
    while !tasks.is_empty() {
        match tokio::time::timeout_at(stop_deadline, tasks.join_next()).await {
            Ok(Some(Ok(()))) | Ok(None) => {}
            Ok(Some(Err(error))) => world.ledger.fail("task", format!("a task ended abnormally: {error}")),
            Err(_) => {
                world.ledger.fail("task", format!("{} task(s) did not stop within 180 s", tasks.len()));
                tasks.abort_all();
                break;
            }
        }
    }
    drop(control);

    progress("checking");
    let pid = lock(host).pid().unwrap_or(pid);
    let listed = end_checks::check_list(world, report).await;
    end_checks::check_followers(world, &followers, &mut *verified.lock().await, report).await;
    report.figure("restart", "starts lost with the host", world.book.starts_lost());
    report.figure("host", "incarnations", lock(host).incarnations());

    let listed_ids: HashSet<String> = listed.iter().map(|(id, _)| id.as_str().to_owned()).collect();
    let orphans = health::orphan_pane_processes(&dir, &listed_ids).await;
    report.checks.push(Check::new(
        "every pane process belongs to a listed pane",
        orphans.is_empty(),
        if orphans.is_empty() { "yes".to_owned() } else { orphans.join("; ") },
    ));
    let pane_pids: Vec<u32> = listed.iter().map(|(_, pid)| *pid).collect();
    let zombies = health::lasting_zombies(&dir, pid, &pane_pids).await;
    report.checks.push(Check::new(
        "no zombie among the host's and keepers' children and pane processes",
        zombies.is_empty(),
        if zombies.is_empty() { "none".to_owned() } else { zombies.join("; ") },
    ));

    let end = health::sample_settled(
        "end",
        &dir,
        pid,
        listed.len(),
        || world.life.open_connections(),
        &model,
        Duration::from_secs(20),
    )
    .await;
    report.samples.push(end);
    let masters = health::pty_masters_settled(pid, listed.len(), Duration::from_secs(30)).await;
    report.checks.push(Check::new(
        "host holds no PTY master beyond its panes",
        masters <= listed.len(),
        format!("{masters} PTY masters open for {} panes listed", listed.len()),
    ));
    let over: Vec<String> = report
        .samples
        .iter()
        .filter(|sample| !sample.within_bound())
        .map(|sample| format!("{}: {} > {}", sample.label, sample.fds, sample.bound))
        .collect();
    report.checks.push(Check::new(
        "host fds within the bound at start, after restart and at end",
        over.is_empty(),
        if over.is_empty() {
            report.samples.iter().map(|s| format!("{} {}/{}", s.label, s.fds, s.bound)).collect::<Vec<_>>().join(", ")
        } else {
            over.join("; ")
        },
    ));
    if !restarted && !options.no_crash {
        report.checks.push(Check::new("host restarted", false, "the crash and restart did not happen"));
    }

    let stopped = lock(host).stop(Duration::from_secs(30));
    let clean = matches!(&stopped, Some((status, true)) if status.success());
    report.checks.push(Check::new(
        "host exits 0 on SIGTERM",
        clean,
        match &stopped {
            Some((status, true)) => format!("{status}"),
            Some((status, false)) => format!("still running after 30 s; SIGKILL ({status})"),
            None => "no host was running".to_owned(),
        },
    ));
    let left = health::leftovers_after_stop(&dir, Duration::from_secs(15)).await;
    report.checks.push(Check::new(
        "no keeper or pane process left after SIGTERM",
        left.is_empty(),
        if left.is_empty() { "none".to_owned() } else { format!("left: {}", left.join("; ")) },
    ));

    end_checks::read_host_log(&dir, report);
    let failures = world.ledger.failure_count();
    let operations = world.ledger.operations();
    let failed_operations: u64 = operations.values().map(|counts| counts.failed).sum();
    report.checks.push(Check::new(
        "every answer as the protocol documents it",
        failed_operations == 0,
        format!("{failed_operations} operation(s) failed"),
    ));
    // A host that refused everything would pass the checks above.
    let never_ok: Vec<&str> = CLIENT_OPERATIONS
        .iter()
        .copied()
        .filter(|kind| operations.get(*kind).is_none_or(|counts| counts.ok == 0))
        .collect();
    report.checks.push(Check::new(
        "every kind of operation succeeded at least once",
        never_ok.is_empty(),
        if never_ok.is_empty() {
            format!("{} kinds", CLIENT_OPERATIONS.len())
        } else {
            format!("never: {}", never_ok.join(", "))
        },
    ));
    let stalled = world.ledger.failures_of(clients::STALLED);
    report.checks.push(Check::new(
        "no operation stalled (the watchdog's limit: ask timeout + request timeout + 15 s)",
        stalled == 0,
        format!("{stalled} stalled"),
    ));
    report.checks.push(Check::new("no failure of any kind", failures == 0, format!("{failures} failure(s) recorded")));
    Ending::Completed
}

/// Waits until `until`, printing a line of progress every 15 s (and
/// noting the host's resident memory then in `rss`); fails when the host
/// exits by itself meanwhile.
async fn report_progress_until(
    world: &World,
    host: &Mutex<SoakHost>,
    load_started: Instant,
    until: Instant,
    rss: &mut Vec<(u64, u64)>,
) -> Result<(), String> {
    let mut next_line = Instant::now() + Duration::from_secs(15);
    while Instant::now() < until {
        tokio::time::sleep_until((Instant::now() + Duration::from_secs(1)).min(until)).await;
        let (exited, pid) = {
            let mut host = lock(host);
            (host.has_exited(), host.pid())
        };
        if let Some(status) = exited {
            let problem = format!("the host exited by itself ({status}) at {} s", load_started.elapsed().as_secs());
            world.ledger.fail("host", problem.clone());
            return Err(problem);
        }
        if Instant::now() >= next_line {
            next_line += Duration::from_secs(15);
            let seconds = load_started.elapsed().as_secs();
            let rss_kib = pid.and_then(procfs::rss_kib).unwrap_or(0);
            let fds = pid.and_then(procfs::fd_count).unwrap_or(0);
            rss.push((seconds, rss_kib));
            let operations: u64 = world.ledger.operations().values().map(|c| c.ok + c.expected_errors + c.failed).sum();
            progress(&format!(
                "{seconds:>4} s: {operations} operations, {} failures, {} panes alive; host {fds} fds, {:.1} MiB",
                world.ledger.failure_count(),
                world.book.alive_count(),
                rss_kib as f64 / 1024.0
            ));
        }
    }
    Ok(())
}

/// The first panes: mostly streams, a tenth bursts, a tenth shells, the
/// rest fixture agents (at least one of each when there are four or more).
fn initial_kinds(panes: usize) -> Vec<PaneKind> {
    if panes < 4 {
        return vec![PaneKind::Stream; panes];
    }
    let burst = (panes / 10).max(1);
    let shell = (panes / 10).max(1);
    let fixture = (panes * 15 / 100).max(1);
    let stream = panes - burst - shell - fixture;
    let mut kinds = Vec::with_capacity(panes);
    for (kind, n) in
        [(PaneKind::Stream, stream), (PaneKind::Burst, burst), (PaneKind::Shell, shell), (PaneKind::Fixture, fixture)]
    {
        kinds.extend(std::iter::repeat_n(kind, n));
    }
    kinds
}

/// Picks the followed panes: a fifth bursts (half of them read slowly), a
/// tenth each shells and fixture agents, the rest streams.
fn choose_followers(world: &World, count: usize, rng: &mut Rng) -> Vec<(PaneId, PaneKind, bool)> {
    let mut by_kind: HashMap<PaneKind, Vec<PaneId>> = HashMap::new();
    let mut entries = world.book.entries();
    entries.sort_by(|a, b| a.id.as_str().cmp(b.id.as_str()));
    for entry in entries {
        by_kind.entry(entry.kind).or_default().push(entry.id);
    }
    let wanted = [
        (PaneKind::Burst, count / 5),
        (PaneKind::Shell, count / 10),
        (PaneKind::Fixture, count / 10),
        (PaneKind::Stream, count),
    ];
    let mut chosen = Vec::new();
    for (kind, n) in wanted {
        let pool = by_kind.entry(kind).or_default();
        let mut taken = 0;
        while taken < n && chosen.len() < count && !pool.is_empty() {
            let pane = pool.swap_remove(rng.index(pool.len()));
            let slow = kind == PaneKind::Burst && taken % 2 == 1;
            chosen.push((pane, kind, slow));
            taken += 1;
        }
    }
    chosen
}
