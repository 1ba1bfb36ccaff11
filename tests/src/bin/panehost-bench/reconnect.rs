//! Reconnect with 1 MiB to replay: a pane has printed 3 MiB of the payload
//! and idles; a new connection (connect, handshake) sends `reconnect` at
//! the pane's end offset minus 1 MiB, and the clock stops when the replay
//! has reached the end offset. 20 samples; the median is reported.
//!
//! tmux has no offset to resume from; what a tmux client does instead is
//! attach a control client and capture the pane's history and screen
//! (`capture-pane -p -e -S -`) of a pane that printed the same 3 MiB. The
//! figure says how many bytes that capture carried. A raw PTY keeps
//! nothing to replay.

use crate::host::{shell_pane, wait_for_panes, wait_for_screen, PanehostHost};
use crate::report::{Better, Figure};
use crate::stats::median;
use crate::tmux::{ControlClient, TmuxServer};
use crate::{progress, shell_quote, Bench, BenchResult};
use panehost_ipc::Event;
use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

/// Bytes the pane prints before the reconnects.
const PRINTED: u64 = 3 * 1024 * 1024;
/// Bytes each reconnect replays.
const REPLAY: u64 = 1024 * 1024;
/// Reconnects measured per system.
const SAMPLES: usize = 20;

pub fn run(bench: &Bench) -> BenchResult<Vec<Figure>> {
    let print = format!("head -c {PRINTED} {}", shell_quote(&bench.payload.path));
    let expected_end = PRINTED + bench.payload.newlines_in_prefix(PRINTED)?;

    let host = bench.start_host(&[])?;
    let panehost = bench.runtime.block_on(panehost(&host, &format!("{print}; exec cat"), expected_end))?;
    host.stop();
    progress(&format!("reconnect: panehost median {:.1} ms", median(&panehost)));

    let tmux = bench.start_tmux(2000)?;
    let (tmux_ms, captured) = tmux_capture(&tmux, &print)?;
    tmux.kill();
    progress(&format!("reconnect: tmux median {:.1} ms", median(&tmux_ms)));

    Ok(vec![Figure::single("reconnect/1MiB-replay", "ms", Better::Lower, median(&panehost), Some(median(&tmux_ms)), None)
        .note(format!("median of {SAMPLES}, including connect and handshake; tmux: control-mode attach + capture-pane of the whole history ({captured} bytes, not 1 MiB)"))])
}

async fn panehost(host: &PanehostHost, command: &str, expected_end: u64) -> BenchResult<Vec<f64>> {
    let control = host.connect().await?;
    let pane = control.start(shell_pane(&["sh", "-c", command])).await?;
    let summary =
        wait_for_panes(&control, std::slice::from_ref(&pane.id), Duration::from_secs(60), |p| p.offset >= expected_end)
            .await?;
    let end = summary[0].offset;
    wait_for_screen(&control, &pane.id, end, Duration::from_secs(60)).await?;
    let mut millis = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        let started = Instant::now();
        let client = host.connect().await?;
        let mut events = client.reconnect(&pane.id, pane.generation, end - REPLAY).await?;
        let mut next = crate::follow::start_offset(events.start());
        if next != end - REPLAY {
            return Err(format!("the reconnect did not replay from {} (it starts at {next})", end - REPLAY).into());
        }
        while next < end {
            match events.next().await {
                Some(Event::Output { offset, data }) => next = offset + data.len() as u64,
                Some(_) => {}
                None => return Err("the subscription ended during the replay".into()),
            }
        }
        millis.push(started.elapsed().as_secs_f64() * 1e3);
        drop(events);
        drop(client);
    }
    control.close(&pane.id).await?;
    Ok(millis)
}

fn tmux_capture(tmux: &TmuxServer, print: &str) -> BenchResult<(Vec<f64>, u64)> {
    let full = format!("{print}; {} wait-for -S printed; exec cat", tmux.inner_tmux());
    tmux.cmd(&["new-session", "-d", "-s", "replay", "-x", "80", "-y", "24", &full])?;
    tmux.cmd(&["wait-for", "printed"])?;
    let mut millis = Vec::with_capacity(SAMPLES);
    let mut captured = 0u64;
    for _ in 0..SAMPLES {
        let started = Instant::now();
        let mut client = ControlClient::attach(tmux, "replay")?;
        client.send("capture-pane -p -e -S - -t replay")?;
        let mut lines = BufReader::new(client.take_stdout());
        let mut line = String::new();
        let mut bytes = 0u64;
        let mut inside = false;
        loop {
            line.clear();
            if lines.read_line(&mut line)? == 0 {
                return Err("the tmux control client ended".into());
            }
            // A client's own command is answered between `%begin ... 1` and
            // `%end ... 1` (flags 1); attaching has its own pair (flags 0).
            if line.starts_with("%begin ") && line.trim_end().ends_with(" 1") {
                inside = true;
            } else if inside && (line.starts_with("%end ") || line.starts_with("%error ")) {
                break;
            } else if inside {
                bytes += line.len() as u64;
            }
        }
        millis.push(started.elapsed().as_secs_f64() * 1e3);
        captured = bytes;
        drop(client);
    }
    Ok((millis, captured))
}
