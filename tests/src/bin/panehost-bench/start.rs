//! Starting a pane from a script: the time of a whole command, from its
//! spawn to its exit, that starts a pane running `true` and returns.
//!
//! - panehost: `panehost start shell -- true` against a running host;
//! - tmux: `tmux new-session -d true` and `tmux new-window -d true` against
//!   a running server;
//! - raw: spawning `true` itself and waiting for it, the floor of any of
//!   them.
//!
//! The commands take turns, one run each; the first 5 of each are a
//! warm-up. Each panehost pane is closed (and each tmux window ends with
//! `true`) outside the clock.

use crate::report::{Better, Figure};
use crate::stats::percentile;
use crate::{progress, Bench, BenchResult};
use panehost_ipc::PaneId;
use std::process::{Command, Stdio};
use std::time::Instant;

/// Runs taken and dropped before the measured ones.
const WARMUP: usize = 5;

pub fn run(bench: &Bench) -> BenchResult<Vec<Figure>> {
    let runs = (bench.options.samples / 10).max(20);
    let host = bench.start_host(&[])?;
    let client = bench.runtime.block_on(host.connect())?;
    let tmux = bench.start_tmux(2000)?;

    let (mut panehost_ms, mut session_ms, mut window_ms, mut raw_ms) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
    for i in 0..WARMUP + runs {
        let started = Instant::now();
        let output = Command::new(&bench.panehost_bin)
            .arg("--socket")
            .arg(&host.socket)
            .args(["start", "shell", "--", "true"])
            .stdin(Stdio::null())
            .stderr(Stdio::inherit())
            .output()?;
        let p = started.elapsed().as_secs_f64() * 1e3;
        if !output.status.success() {
            return Err(format!("panehost start failed: {}", output.status).into());
        }
        let pane = PaneId(String::from_utf8_lossy(&output.stdout).trim().to_owned());

        let started = Instant::now();
        let status = tmux.command().args(["new-session", "-d", "true"]).stdin(Stdio::null()).status()?;
        let s = started.elapsed().as_secs_f64() * 1e3;
        let started = Instant::now();
        let window = tmux.command().args(["new-window", "-d", "-t", "keep", "true"]).stdin(Stdio::null()).status()?;
        let w = started.elapsed().as_secs_f64() * 1e3;
        if !status.success() || !window.success() {
            return Err("tmux could not start a pane".into());
        }
        let started = Instant::now();
        Command::new("true").status()?;
        let r = started.elapsed().as_secs_f64() * 1e3;

        bench.runtime.block_on(client.close(&pane))?;
        if i >= WARMUP {
            panehost_ms.push(p);
            session_ms.push(s);
            window_ms.push(w);
            raw_ms.push(r);
        }
    }
    progress(&format!(
        "start: p50 panehost {:.1} ms, tmux new-session {:.1} ms, new-window {:.1} ms, true {:.1} ms",
        percentile(&panehost_ms, 50.0),
        percentile(&session_ms, 50.0),
        percentile(&window_ms, 50.0),
        percentile(&raw_ms, 50.0)
    ));
    host.stop();
    tmux.kill();
    let figure = |name: &str, tmux_ms: &[f64]| {
        Figure::single(
            name,
            "ms",
            Better::Lower,
            percentile(&panehost_ms, 50.0),
            Some(percentile(tmux_ms, 50.0)),
            Some(percentile(&raw_ms, 50.0)),
        )
    };
    Ok(vec![
        figure("start/vs-new-window", &window_ms).note(format!(
            "p50 of {runs} runs each, taken in turns: `panehost start shell -- true` against \
             `tmux new-window -d true`; raw: spawning `true` and waiting for it"
        )),
        figure("start/vs-new-session", &session_ms).note("against `tmux new-session -d true`".to_owned()),
    ])
}
