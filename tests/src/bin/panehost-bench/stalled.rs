//! One stalled client while another drains. Each round runs the payload
//! drain twice on a fresh host: once with one reading subscriber (solo),
//! once with the reader plus a second connection subscribed from offset 0
//! that never reads its events. The client library buffers a bounded
//! number of events per subscription and then stops reading the socket, so
//! the host sees a peer that has stopped reading.
//!
//! Figures: the reader's throughput with the stalled client as a share of
//! its solo throughput in the same round, and the host's peak resident
//! memory during each run above its level before the pane started
//! (sampled every 10 ms): the growth with the stalled client, less the
//! growth of the solo run, set against the ring (4 MiB by default).
//!
//! tmux, the same way: a reading control-mode client, alone and then with
//! a second control client whose stdout is never read, on a fresh server
//! each time. If tmux holds the pane back for the stalled client the run
//! ends after a timeout and the figure says so.

use crate::drain::Drained;
use crate::follow::follow_to_exit;
use crate::host::{shell_pane, PanehostHost};
use crate::procfs;
use crate::report::{Better, Figure};
use crate::stats::{median, ratios};
use crate::tmux::{ControlClient, TmuxServer};
use crate::{progress, shell_quote, Bench, BenchResult};
use std::io::Read;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The host's default ring, in KiB (host/src/limits.rs).
const RING_KIB: f64 = 4.0 * 1024.0;
/// How long a tmux drain may take before it counts as held back.
const TMUX_TIMEOUT: Duration = Duration::from_secs(60);

/// One run: the reader's throughput and the process's peak growth.
#[derive(Debug, Clone, Copy)]
struct Run {
    mb_per_s: f64,
    growth_kib: f64,
    /// Resyncs panehost's reader received.
    resyncs: u64,
}

pub fn run(bench: &Bench) -> BenchResult<Vec<Figure>> {
    let rounds = bench.options.rounds;
    let (mut ph_solo, mut ph_stalled, mut tm_solo, mut tm_stalled) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let mut tmux_held = 0;
    for round in 1..=rounds {
        for (stalled, runs) in [(false, &mut ph_solo), (true, &mut ph_stalled)] {
            let host = bench.start_host(&[])?;
            let run = bench.runtime.block_on(panehost(bench, &host, stalled))?;
            host.stop();
            runs.push(run);
        }
        for (stalled, runs) in [(false, &mut tm_solo), (true, &mut tm_stalled)] {
            let tmux = bench.start_tmux(2000)?;
            let run = tmux_run(bench, &tmux, round, stalled)?;
            tmux.kill();
            if run.mb_per_s.is_nan() {
                tmux_held += 1;
            }
            runs.push(run);
        }
        let last = |runs: &Vec<Run>| runs[round - 1];
        progress(&format!(
            "stalled round {round}/{rounds}: panehost solo {:.1} MB/s +{:.0} KiB, stalled {:.1} MB/s +{:.0} KiB; tmux solo {:.1} MB/s +{:.0} KiB, stalled {:.1} MB/s +{:.0} KiB",
            last(&ph_solo).mb_per_s, last(&ph_solo).growth_kib, last(&ph_stalled).mb_per_s, last(&ph_stalled).growth_kib,
            last(&tm_solo).mb_per_s, last(&tm_solo).growth_kib, last(&tm_stalled).mb_per_s, last(&tm_stalled).growth_kib,
        ));
    }
    let rates = |runs: &[Run]| runs.iter().map(|r| r.mb_per_s).collect::<Vec<_>>();
    let growths = |runs: &[Run]| runs.iter().map(|r| r.growth_kib).collect::<Vec<_>>();
    let kept = |stalled: &[Run], solo: &[Run]| {
        ratios(&rates(stalled), &rates(solo)).into_iter().map(|r| r * 100.0).collect::<Vec<_>>()
    };
    let extra = |stalled: &[Run], solo: &[Run]| {
        median(&growths(stalled).iter().zip(growths(solo)).map(|(s, o)| s - o).collect::<Vec<_>>())
    };
    let resyncs: u64 = ph_solo.iter().chain(&ph_stalled).map(|r| r.resyncs).sum();
    let mut throughput = Figure::from_rounds("stalled/reader-kept", "%", Better::Higher, kept(&ph_stalled, &ph_solo), Some(kept(&tm_stalled, &tm_solo)), None)
        .note(format!(
            "reader's throughput with a stalled client / alone, per round; alone: panehost {:.1} MB/s, tmux {:.1} MB/s (control mode)",
            median(&rates(&ph_solo)),
            median(&rates(&tm_solo))
        ))
        .note(format!("panehost's reader was resynced {resyncs} times over all rounds (0: every byte arrived)"));
    if tmux_held > 0 {
        throughput = throughput.note(format!(
            "tmux: in {tmux_held} of {rounds} rounds the reader had not finished after {} s: tmux held the pane back for the stalled client",
            TMUX_TIMEOUT.as_secs()
        ));
    }
    let memory = Figure::from_rounds("stalled/peak-growth", "KiB", Better::Lower, growths(&ph_stalled), Some(growths(&tm_stalled)), None)
        .note(format!(
            "peak RSS growth during the drain with a stalled client; alone: panehost {:.0} KiB, tmux {:.0} KiB",
            median(&growths(&ph_solo)),
            median(&growths(&tm_solo)),
        ))
        .note(format!(
            "growth the stalled client adds (median of per-round differences): panehost {:.0} KiB against a ring of {RING_KIB:.0} KiB, tmux {:.0} KiB",
            extra(&ph_stalled, &ph_solo),
            extra(&tm_stalled, &tm_solo),
        ));
    Ok(vec![throughput, memory])
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
    let staller = host.connect().await?;
    let command = format!("cat {}", shell_quote(&bench.payload.path));
    tokio::time::sleep(Duration::from_millis(200)).await;
    let before = host.rss_kib();
    let peak = PeakRss::start(host.pid());
    let started = Instant::now();
    let pane = control.start(shell_pane(&["sh", "-c", &command])).await?;
    let reading = tokio::spawn(follow_to_exit(reader.subscribe(&pane.id, Some(0)).await?));
    // Held, never read, until the reader is done.
    let stalled_events = if stalled { Some(staller.subscribe(&pane.id, Some(0)).await?) } else { None };
    let followed = reading.await??;
    let drained = Drained { seconds: (followed.exited_at - started).as_secs_f64(), resyncs: followed.resyncs };
    let peak = peak.finish();
    drop(stalled_events);
    let expected = bench.payload.terminal_bytes();
    if followed.end != expected || (followed.resyncs == 0 && followed.bytes != expected) {
        return Err(format!("the reader got {} of {} bytes (expected {expected})", followed.bytes, followed.end).into());
    }
    control.close(&pane.id).await?;
    Ok(Run {
        mb_per_s: drained.mb_per_s(bench),
        growth_kib: peak.saturating_sub(before) as f64,
        resyncs: followed.resyncs,
    })
}

fn tmux_run(bench: &Bench, tmux: &TmuxServer, round: usize, stalled: bool) -> BenchResult<Run> {
    let session = format!("stalled-{round}");
    let go = format!("go-stalled-{round}");
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
    let before = tmux.rss_kib();
    let peak = PeakRss::start(tmux.pid());
    let started = Instant::now();
    tmux.cmd(&["wait-for", "-S", &go])?;
    let finished = rx.recv_timeout(TMUX_TIMEOUT);
    let peak = peak.finish();
    drop(staller);
    drop(reader);
    let mb_per_s = match finished {
        Ok(Some(at)) => bench.payload.len as f64 / 1e6 / (at - started).as_secs_f64(),
        _ => f64::NAN,
    };
    Ok(Run { mb_per_s, growth_kib: peak.saturating_sub(before) as f64, resyncs: 0 })
}
