//! Drain throughput by terminal size: the drain benchmark's ways of
//! draining, at 80x24, 200x50 and 1000x250, round by round.
//!
//! A payload of its own, 16 MiB of the drain payload's mix (or the drain
//! payload's size, when that is smaller), keeps the three sizes within a
//! minute or so. Each round drains it, size by size, with the raw PTY,
//! tmux detached, tmux with one control-mode client, panehost with no
//! client and panehost with one subscriber; the terminal is the given size
//! in each (tmux's panes are checked).

use crate::drain::{panehost_drain, raw_pty, tmux_control_drain, tmux_detached_drain, Drained};
use crate::payload::Payload;
use crate::report::{Better, Figure};
use crate::{progress, Bench, BenchResult};
use panehost_ipc::Size;

/// Rounds when `--rounds` is not given.
const DEFAULT_ROUNDS: usize = 3;

/// The payload's size, at most.
const PAYLOAD_MIB: u64 = 16;

/// The sizes drained, in the order they run in each round.
const SIZES: [Size; 3] = [Size { cols: 80, rows: 24 }, Size { cols: 200, rows: 50 }, Size { cols: 1000, rows: 250 }];

/// One size's throughputs over the rounds, in MB/s.
#[derive(Debug, Default)]
struct Rates {
    raw: Vec<f64>,
    tmux_detached: Vec<f64>,
    tmux_control: Vec<f64>,
    panehost_alone: Vec<f64>,
    panehost_one_client: Vec<f64>,
    /// Resyncs the subscriber received over all rounds.
    resyncs: u64,
}

pub fn run(bench: &Bench) -> BenchResult<Vec<Figure>> {
    let rounds = bench.options.rounds_or(DEFAULT_ROUNDS);
    let mib = PAYLOAD_MIB.min(bench.options.payload_mib);
    let payload = Payload::generate(&bench.dir.join("sizes-payload.txt"), mib * 1024 * 1024)?;
    // Read it once so that every system reads it from the page cache.
    std::fs::read(&payload.path)?;
    let host = bench.start_host(&[])?;
    let tmux = bench.start_tmux(2000)?;
    let mut rates: Vec<Rates> = SIZES.iter().map(|_| Rates::default()).collect();
    for round in 1..=rounds {
        for (size, rates) in SIZES.iter().zip(rates.iter_mut()) {
            let rate = |d: Drained| d.mb_per_s(&payload);
            rates.raw.push(rate(raw_pty(&payload, *size)?));
            rates.tmux_detached.push(rate(tmux_detached_drain(&payload, &tmux, round, *size)?));
            rates.tmux_control.push(rate(tmux_control_drain(&payload, &tmux, round, 1, *size)?));
            rates.panehost_alone.push(rate(bench.runtime.block_on(panehost_drain(&payload, &host, 0, *size))?));
            let followed = bench.runtime.block_on(panehost_drain(&payload, &host, 1, *size))?;
            rates.resyncs += followed.resyncs;
            rates.panehost_one_client.push(rate(followed));
            let last = |values: &[f64]| values[round - 1];
            progress(&format!(
                "drain-sizes round {round}/{rounds}, {}x{}: raw {:.1}, tmux detached {:.1}, control 1 {:.1}, \
                 panehost 0 {:.1}, 1 {:.1} MB/s",
                size.cols,
                size.rows,
                last(&rates.raw),
                last(&rates.tmux_detached),
                last(&rates.tmux_control),
                last(&rates.panehost_alone),
                last(&rates.panehost_one_client),
            ));
        }
    }
    tmux.kill();
    host.stop();

    let mut figures = Vec::new();
    for (size, rates) in SIZES.iter().zip(rates) {
        let name = format!("drain/{}x{}", size.cols, size.rows);
        let mut alone = Figure::from_rounds(
            &format!("{name}/0-clients"),
            "MB/s",
            Better::Higher,
            rates.panehost_alone,
            Some(rates.tmux_detached),
            Some(rates.raw.clone()),
        );
        if figures.is_empty() {
            alone = alone.note(format!(
                "a {mib} MiB payload; as drain/0-clients and drain/1-client, at each size: panehost with no client \
                 against tmux detached, with one subscriber against one control-mode client"
            ));
        }
        figures.push(alone);
        figures.push(
            Figure::from_rounds(
                &format!("{name}/1-client"),
                "MB/s",
                Better::Higher,
                rates.panehost_one_client,
                Some(rates.tmux_control),
                Some(rates.raw),
            )
            .note(format!(
                "the panehost subscriber was resynced {} times over all rounds (0: every byte arrived)",
                rates.resyncs
            )),
        );
    }
    Ok(figures)
}
