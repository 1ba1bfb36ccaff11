//! One stalled client while another drains. Each round starts a fresh host,
//! drains the payload on it once unmeasured, then twice measured: with one
//! reading subscriber (solo), and with the reader plus a second connection
//! subscribed from offset 0 that never reads its events (stalled); solo
//! first in odd rounds, stalled first in even ones. That connection
//! buffers one event and then stops reading its socket, so the host sees a
//! peer that has stopped reading once the socket's buffer is full.
//!
//! Figures: the reader's throughput with the stalled client as a share of
//! its solo throughput in the same round; and the memory the stalled client
//! costs the host: how much more the host's resident memory grows during
//! the stalled run than during the solo run, each growth being the run's
//! peak (sampled every 10 ms) above the level just before its pane started.
//! It is set against the ring (4 MiB by default): the pane's own ring and
//! screen model grow the same way in both runs, so what remains is the
//! stalled client's share.
//!
//! tmux, the same way (without the unmeasured drain): a reading
//! control-mode client, alone and with a second control client whose
//! stdout is never read, on a fresh server each round. If tmux held the pane back for the stalled client the run
//! would end after a timeout and the figure would say so.

use crate::follow::follow_to_exit;
use crate::host::{shell_pane, PanehostHost};
use crate::report::{Better, Figure};
use crate::stats::median;
use crate::tmux::{ControlClient, TmuxServer};
use crate::{progress, shell_quote, Bench, BenchResult};
use panehost_tests::procfs;
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The host's default ring, in KiB (host/src/limits.rs).
const RING_KIB: f64 = 4.0 * 1024.0;
/// How long a tmux drain may take before it counts as held back.
const TMUX_TIMEOUT: Duration = Duration::from_secs(120);

/// One drain: the reader's throughput and the process's memory.
#[derive(Debug, Clone, Copy)]
struct Run {
    mb_per_s: f64,
    /// Resident memory just before the pane started.
    base_kib: u64,
    /// Peak resident memory while it drained.
    peak_kib: u64,
    /// Resyncs panehost's reader received.
    resyncs: u64,
}

/// One round of one system: the solo run, then the stalled run.
#[derive(Debug, Clone, Copy)]
struct Round {
    solo: Run,
    stalled: Run,
}

impl Run {
    fn growth_kib(&self) -> f64 {
        self.peak_kib.saturating_sub(self.base_kib) as f64
    }
}

impl Round {
    fn kept_percent(&self) -> f64 {
        self.stalled.mb_per_s / self.solo.mb_per_s * 100.0
    }

    fn solo_growth_kib(&self) -> f64 {
        self.solo.growth_kib()
    }

    /// How much more the stalled run grew than the solo run.
    fn extra_kib(&self) -> f64 {
        self.stalled.growth_kib() - self.solo.growth_kib()
    }
}

pub fn run(bench: &Bench) -> BenchResult<Vec<Figure>> {
    let rounds = bench.options.rounds;
    let (mut panehost_rounds, mut tmux_rounds) = (Vec::new(), Vec::new());
    let mut tmux_held = 0;
    for round in 1..=rounds {
        // Odd rounds measure the solo drain first, even rounds the stalled
        // one, so that neither always runs on memory the other freed.
        let stalled_first = round % 2 == 0;
        let host = bench.start_host(&[])?;
        let p = bench.runtime.block_on(async {
            // Unmeasured: brings the ring, the model and the allocator to
            // their working size before either measured run.
            panehost(bench, &host, false).await?;
            let first = panehost(bench, &host, stalled_first).await?;
            let second = panehost(bench, &host, !stalled_first).await?;
            let (solo, stalled) = if stalled_first { (second, first) } else { (first, second) };
            BenchResult::Ok(Round { solo, stalled })
        })?;
        host.stop();
        let tmux = bench.start_tmux(2000)?;
        let first = tmux_run(bench, &tmux, round, stalled_first)?;
        let second = tmux_run(bench, &tmux, round, !stalled_first)?;
        let (solo, stalled) = if stalled_first { (second, first) } else { (first, second) };
        tmux.kill();
        tmux_held += [solo, stalled].iter().filter(|r| r.mb_per_s.is_nan()).count();
        let t = Round { solo, stalled };
        progress(&format!(
            "stalled round {round}/{rounds}: panehost solo {:.1} MB/s, stalled {:.1} MB/s, +{:.0} KiB; tmux solo {:.1} MB/s, stalled {:.1} MB/s, +{:.0} KiB",
            p.solo.mb_per_s, p.stalled.mb_per_s, p.extra_kib(), t.solo.mb_per_s, t.stalled.mb_per_s, t.extra_kib(),
        ));
        panehost_rounds.push(p);
        tmux_rounds.push(t);
    }
    let each = |rounds: &[Round], f: fn(&Round) -> f64| rounds.iter().map(f).collect::<Vec<_>>();
    let resyncs: u64 = panehost_rounds.iter().map(|r| r.solo.resyncs + r.stalled.resyncs).sum();
    let mut throughput = Figure::from_rounds(
        "stalled/reader-kept",
        "%",
        Better::Higher,
        each(&panehost_rounds, Round::kept_percent),
        Some(each(&tmux_rounds, Round::kept_percent)),
        None,
    )
    .note(format!(
        "reader's throughput with a stalled client / alone, per round; alone: panehost {:.1} MB/s, tmux {:.1} MB/s (control mode)",
        median(&each(&panehost_rounds, |r| r.solo.mb_per_s)),
        median(&each(&tmux_rounds, |r| r.solo.mb_per_s)),
    ))
    .note(format!("panehost's reader was resynced {resyncs} times over all rounds (0: every byte arrived)"));
    if tmux_held > 0 {
        throughput = throughput.note(format!(
            "tmux: in {tmux_held} runs the reader had not finished after {} s: tmux held the pane back",
            TMUX_TIMEOUT.as_secs()
        ));
    }
    let memory = Figure::from_rounds(
        "stalled/extra-memory",
        "KiB",
        Better::Lower,
        each(&panehost_rounds, Round::extra_kib),
        Some(each(&tmux_rounds, Round::extra_kib)),
        None,
    )
    .note(format!(
        "RSS growth of the drain with a stalled client less that of the drain alone, against a ring of {RING_KIB:.0} KiB; the drain alone grew panehost by {:.0} KiB, tmux by {:.0} KiB",
        median(&each(&panehost_rounds, Round::solo_growth_kib)),
        median(&each(&tmux_rounds, Round::solo_growth_kib)),
    ));
    Ok(vec![throughput, memory])
}

async fn settle() {
    tokio::time::sleep(Duration::from_millis(200)).await;
}

/// Samples a process's resident memory every 10 ms until dropped; keeps
/// the peak.
struct PeakRss {
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<u64>>,
}

impl PeakRss {
    fn start(pid: u32) -> PeakRss {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let thread = std::thread::spawn(move || {
            let mut peak = 0;
            while !flag.load(Ordering::Relaxed) {
                peak = peak.max(procfs::rss_kib(pid).unwrap_or(0));
                std::thread::sleep(Duration::from_millis(10));
            }
            peak.max(procfs::rss_kib(pid).unwrap_or(0))
        });
        PeakRss { stop, thread: Some(thread) }
    }

    fn finish(mut self) -> u64 {
        self.stop.store(true, Ordering::Relaxed);
        self.thread.take().map(|t| t.join().unwrap_or(0)).unwrap_or(0)
    }
}

async fn panehost(bench: &Bench, host: &PanehostHost, stalled: bool) -> BenchResult<Run> {
    let control = host.connect().await?;
    let reader = host.connect().await?;
    // One event buffered, then the connection stops reading its socket.
    let staller = host.connect_buffering(1).await?;
    let command = format!("cat {}", shell_quote(&bench.payload.path));
    settle().await;
    let base_kib = host.rss_kib();
    let peak = PeakRss::start(host.pid());
    let started = Instant::now();
    let pane = control.start(shell_pane(&["sh", "-c", &command])).await?;
    let reading = tokio::spawn(follow_to_exit(reader.subscribe(&pane.id, Some(0)).await?));
    // Held, never read, until the reader is done.
    let stalled_events = if stalled { Some(staller.subscribe(&pane.id, Some(0)).await?) } else { None };
    let followed = reading.await??;
    let seconds = (followed.exited_at - started).as_secs_f64();
    let peak_kib = peak.finish();
    drop(stalled_events);
    let expected = bench.payload.terminal_bytes();
    if followed.end != expected || (followed.resyncs == 0 && followed.bytes != expected) {
        return Err(format!("the reader got {} of {} bytes (expected {expected})", followed.bytes, followed.end).into());
    }
    control.close(&pane.id).await?;
    Ok(Run { mb_per_s: bench.payload.len as f64 / 1e6 / seconds, base_kib, peak_kib, resyncs: followed.resyncs })
}

fn tmux_run(bench: &Bench, tmux: &TmuxServer, round: usize, stalled: bool) -> BenchResult<Run> {
    let session = format!("stalled-{round}-{stalled}");
    let go = format!("go-stalled-{round}-{stalled}");
    let command = format!("{} wait-for {go}; cat {}", tmux.inner_tmux(), shell_quote(&bench.payload.path));
    tmux.cmd(&["new-session", "-d", "-s", &session, "-x", "80", "-y", "24", &command])?;
    let mut reader = ControlClient::attach(tmux, &session)?;
    let mut stdout = reader.take_stdout();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        let mut ready = false;
        loop {
            match stdout.read(&mut buf) {
                Ok(0) | Err(_) => break,
                Ok(_) if !ready => {
                    ready = true;
                    let _ = tx.send(None);
                }
                Ok(_) => {}
            }
        }
        let _ = tx.send(Some(Instant::now()));
    });
    // Its stdout is a pipe nobody reads.
    let staller = if stalled { Some(ControlClient::attach(tmux, &session)?) } else { None };
    if !matches!(rx.recv_timeout(Duration::from_secs(10)), Ok(None)) {
        return Err("the tmux control client did not attach".into());
    }
    std::thread::sleep(Duration::from_millis(200));
    let base_kib = tmux.rss_kib();
    let peak = PeakRss::start(tmux.pid());
    let started = Instant::now();
    tmux.cmd(&["wait-for", "-S", &go])?;
    let finished = rx.recv_timeout(TMUX_TIMEOUT);
    let peak_kib = peak.finish();
    drop(staller);
    drop(reader);
    let mb_per_s = match finished {
        Ok(Some(at)) => bench.payload.len as f64 / 1e6 / (at - started).as_secs_f64(),
        _ => f64::NAN,
    };
    Ok(Run { mb_per_s, base_kib, peak_kib, resyncs: 0 })
}
