//! Drain throughput: `cat` of the payload in a raw PTY, in tmux (detached,
//! and with control-mode clients reading), and in panehost (with 0, 1 and 4
//! subscribers), round by round, so that every round compares the systems
//! under the same conditions. This benchmark drains at 80x24; each way of
//! draining takes the payload and the terminal size, and `drain_sizes`
//! runs them at larger sizes.

use crate::follow::{follow_to_exit, Followed};
use crate::host::{has_exited, sized_shell_pane, wait_for_screen, PanehostHost};
use crate::payload::Payload;
use crate::raw_pty::RawPty;
use crate::report::{Better, Figure};
use crate::stats::ratios;
use crate::tmux::{ControlClient, TmuxServer};
use crate::{progress, shell_quote, Bench, BenchResult};
use panehost_ipc::Size;
use std::io::Read;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// How long one drain may take before the bench gives up on it.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(300);

/// One drain: how long it took, and whether every byte arrived.
#[derive(Debug, Clone, Copy)]
pub struct Drained {
    pub seconds: f64,
    /// Resyncs panehost's subscribers received, summed.
    pub resyncs: u64,
}

impl Drained {
    /// Payload megabytes (10^6 bytes) per second.
    pub fn mb_per_s(&self, payload: &Payload) -> f64 {
        payload.len as f64 / 1e6 / self.seconds
    }
}

pub fn run(bench: &Bench) -> BenchResult<Vec<Figure>> {
    let host = bench.start_host(&[])?;
    let tmux = bench.start_tmux(2000)?;
    let rounds = bench.options.rounds;
    let mut raw = Vec::new();
    let mut tmux_detached = Vec::new();
    let mut tmux_control = [Vec::new(), Vec::new()];
    let mut panehost = [Vec::new(), Vec::new(), Vec::new()];
    let mut resyncs = [0u64; 3];
    for round in 1..=rounds {
        let payload = &bench.payload;
        let size = Size::DEFAULT;
        let rate = |d: Drained| d.mb_per_s(payload);
        raw.push(rate(raw_pty(payload, size)?));
        tmux_detached.push(rate(tmux_detached_drain(payload, &tmux, round, size)?));
        for (i, clients) in [1, 4].into_iter().enumerate() {
            tmux_control[i].push(rate(tmux_control_drain(payload, &tmux, round, clients, size)?));
        }
        for (i, clients) in [0, 1, 4].into_iter().enumerate() {
            let drained = bench.runtime.block_on(panehost_drain(payload, &host, clients, size))?;
            resyncs[i] += drained.resyncs;
            panehost[i].push(rate(drained));
        }
        progress(&format!(
            "drain round {round}/{rounds}: raw {:.1}, tmux detached {:.1}, control 1 {:.1}, control 4 {:.1}, panehost 0 {:.1}, 1 {:.1}, 4 {:.1} MB/s",
            raw[round - 1],
            tmux_detached[round - 1],
            tmux_control[0][round - 1],
            tmux_control[1][round - 1],
            panehost[0][round - 1],
            panehost[1][round - 1],
            panehost[2][round - 1],
        ));
    }
    tmux.kill();
    host.stop();

    let [ph0, ph1, ph4] = panehost;
    let [tc1, tc4] = tmux_control;
    let resync_note =
        |n: u64| format!("panehost subscribers were resynced {n} times over all rounds (0: every byte arrived)");
    let figures = vec![
        Figure::from_rounds("drain/0-clients", "MB/s", Better::Higher, ph0.clone(), Some(tmux_detached), Some(raw.clone()))
            .note("panehost: until list shows the exit and the screen model has parsed the last byte; tmux: detached, until the pane's command signals wait-for"),
        Figure::from_rounds("drain/1-client", "MB/s", Better::Higher, ph1.clone(), Some(tc1.clone()), Some(raw.clone()))
            .note("tmux: one control-mode client (tmux -C attach) reading every %output line")
            .note(resync_note(resyncs[1])),
        Figure::from_rounds("drain/4-clients", "MB/s", Better::Higher, ph4.clone(), Some(tc4.clone()), Some(raw))
            .note("until the last of 4 subscribers has everything; tmux: 4 control-mode clients")
            .note(resync_note(resyncs[2])),
        Figure::from_rounds("drain/4-clients-slowdown", "x", Better::Lower, ratios(&ph1, &ph4), Some(ratios(&tc1, &tc4)), None)
            .note("time with 4 readers / time with 1, per round"),
    ];
    Ok(figures)
}

/// `cat` in a PTY of `size` whose master the bench reads until EOF.
pub fn raw_pty(payload: &Payload, size: Size) -> BenchResult<Drained> {
    let command = format!("cat {}", shell_quote(&payload.path));
    let started = Instant::now();
    let mut pty = RawPty::spawn_sized(&["sh", "-c", &command], size)?;
    let mut buf = vec![0u8; 64 * 1024];
    let mut total = 0u64;
    loop {
        match pty.reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => total += n as u64,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            // EIO: the slave side is closed and everything has been read.
            Err(_) => break,
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    pty.end();
    let expected = payload.terminal_bytes();
    if total != expected {
        return Err(format!("the raw PTY delivered {total} bytes, expected {expected}").into());
    }
    Ok(Drained { seconds, resyncs: 0 })
}

/// `cat` in a new detached tmux session of `size` (no client attaches, so
/// nothing resizes it); done when the pane's command signals a `wait-for`
/// channel after `cat` ends.
pub fn tmux_detached_drain(payload: &Payload, tmux: &TmuxServer, round: usize, size: Size) -> BenchResult<Drained> {
    let label = format!("{}x{}-{round}", size.cols, size.rows);
    let session = format!("detached-{label}");
    let done = format!("done-{label}");
    let command = format!("cat {}; {} wait-for -S {done}", shell_quote(&payload.path), tmux.inner_tmux());
    let started = Instant::now();
    tmux.new_session(&session, size, &command)?;
    tmux.cmd(&["wait-for", &done])?;
    Ok(Drained { seconds: started.elapsed().as_secs_f64(), resyncs: 0 })
}

enum ControlRead {
    Ready,
    Done { bytes: u64, at: Instant },
}

/// `cat` in a new tmux session of `size` with `clients` control-mode
/// clients attached, each read by a thread of its own. The pane's command
/// waits on a channel until every client is attached; the time runs from
/// signalling it until the last client's stdout ends (the session ends with
/// `cat`, and its clients with it).
pub fn tmux_control_drain(
    payload: &Payload,
    tmux: &TmuxServer,
    round: usize,
    clients: usize,
    size: Size,
) -> BenchResult<Drained> {
    let label = format!("{clients}-{}x{}-{round}", size.cols, size.rows);
    let session = format!("control-{label}");
    let go = format!("go-{label}");
    let command = format!("{} wait-for {go}; cat {}", tmux.inner_tmux(), shell_quote(&payload.path));
    tmux.new_session(&session, size, &command)?;
    let (tx, rx) = mpsc::channel();
    let mut attached = Vec::new();
    for _ in 0..clients {
        let mut client = ControlClient::attach(tmux, &session)?;
        let stdout = client.take_stdout();
        let tx = tx.clone();
        std::thread::spawn(move || read_control_output(stdout, tx));
        attached.push(client);
    }
    drop(tx);
    for _ in 0..clients {
        match rx.recv_timeout(Duration::from_secs(10)) {
            Ok(ControlRead::Ready) => {}
            _ => return Err("a tmux control client did not attach".into()),
        }
    }
    // A control client could have resized the window.
    tmux.check_pane_size(&session, size)?;
    let started = Instant::now();
    tmux.cmd(&["wait-for", "-S", &go])?;
    let mut last = started;
    for _ in 0..clients {
        match rx.recv_timeout(DRAIN_TIMEOUT) {
            Ok(ControlRead::Done { bytes, at }) => {
                if bytes < payload.len {
                    return Err(format!("a tmux control client got only {bytes} bytes").into());
                }
                last = last.max(at);
            }
            _ => return Err("a tmux control client did not finish".into()),
        }
    }
    drop(attached);
    Ok(Drained { seconds: (last - started).as_secs_f64(), resyncs: 0 })
}

fn read_control_output(mut stdout: std::process::ChildStdout, tx: mpsc::Sender<ControlRead>) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut bytes = 0u64;
    let mut ready = false;
    loop {
        match stdout.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                bytes += n as u64;
                if !ready {
                    ready = true;
                    let _ = tx.send(ControlRead::Ready);
                }
            }
        }
    }
    let _ = tx.send(ControlRead::Done { bytes, at: Instant::now() });
}

/// `sh -c 'cat FILE'` in a panehost pane of `size` with `clients`
/// subscribers, each on a connection of its own, subscribed from offset 0
/// right after the start (the ring replays what they missed). With 0
/// subscribers, a separate connection polls `list` every 5 ms until the
/// pane has exited, then `inspect` until the screen model has parsed the
/// last byte.
pub async fn panehost_drain(
    payload: &Payload,
    host: &PanehostHost,
    clients: usize,
    size: Size,
) -> BenchResult<Drained> {
    let control = host.connect().await?;
    let mut readers = Vec::new();
    for _ in 0..clients {
        readers.push(host.connect().await?);
    }
    let command = format!("cat {}", shell_quote(&payload.path));
    let started = Instant::now();
    let pane = control.start(sized_shell_pane(&["sh", "-c", &command], size)).await?;
    let mut followers = Vec::new();
    for reader in &readers {
        let events = reader.subscribe(&pane.id, Some(0)).await?;
        followers.push(tokio::spawn(follow_to_exit(events)));
    }
    let expected = payload.terminal_bytes();
    let mut resyncs = 0;
    let finished = if clients == 0 {
        let deadline = started + DRAIN_TIMEOUT;
        let end = loop {
            let list = control.list().await?;
            if let Some(summary) = list.iter().find(|p| p.id == pane.id && has_exited(p)) {
                break summary.offset;
            }
            if Instant::now() > deadline {
                return Err("the pane did not exit in time".into());
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        };
        wait_for_screen(&control, &pane.id, end, DRAIN_TIMEOUT).await?;
        if end != expected {
            return Err(format!("the pane's output was {end} bytes, expected {expected}").into());
        }
        Instant::now()
    } else {
        let mut last = started;
        for follower in followers {
            let Followed { exited_at, bytes, resyncs: r, end } = follower.await??;
            if end != expected || (r == 0 && bytes != expected) {
                return Err(format!("a subscriber got {bytes} bytes of {end}, expected {expected}").into());
            }
            resyncs += r;
            last = last.max(exited_at);
        }
        last
    };
    let seconds = (finished - started).as_secs_f64();
    control.close(&pane.id).await?;
    Ok(Drained { seconds, resyncs })
}
