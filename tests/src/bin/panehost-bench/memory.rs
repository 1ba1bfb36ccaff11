//! Host memory per pane: 100 idle shells, then 100 panes that have each
//! printed 2,000 lines of 80 columns and idle in `cat`; panehost's host
//! process against a tmux server (`history-limit` 2000, its default).
//!
//! Each measurement gets a fresh host or server. One pane of the same kind
//! is started first and waited for, so one-time costs (thread pools,
//! allocator arenas, the first spawn) fall before the baseline. Then 100
//! panes start, the bench waits until every one has printed what it will
//! print and (panehost) its screen model has parsed it, lets the process
//! idle for 10 seconds, and divides the growth of its resident memory
//! (VmRSS) by 100. Where the host keeps its panes' PTYs in keeper
//! processes, the keepers' memory is added: the growth of the sum of
//! their proportional set sizes (Pss), so that the pages they share count
//! once. Resident memory is what the process costs the machine;
//! allocator caching makes it coarse, hence 100 panes.

use crate::host::{shell_pane, wait_for_panes, wait_for_screen, PanehostHost};
use crate::report::{Better, Figure};
use crate::tmux::TmuxServer;
use crate::{progress, Bench, BenchResult};
use panehost_ipc::{PaneId, PaneSummary};
use std::time::{Duration, Instant};

/// Panes per measurement.
const PANES: usize = 100;
/// Lines each scrollback pane prints.
const LINES: u64 = 2000;
/// What those lines come to on the terminal: 80 columns and `\r\n`.
const SCROLLBACK_OUTPUT: u64 = LINES * 82;
/// How long panes may take to become ready.
const READY_TIMEOUT: Duration = Duration::from_secs(120);
/// How long a process is left to idle before its memory is read: longer
/// than the host's screen-model sleep (5 s after the last output or use,
/// and `inspect`, which the bench waits with, is a use) plus the trim that
/// follows it (within 2 s), so that an idle pane is measured as it idles.
pub const SETTLE: Duration = Duration::from_secs(10);

pub fn run(bench: &Bench) -> BenchResult<Vec<Figure>> {
    let scrollback = bench.script("scrollback.sh", &format!("seq -f '%080.0f' 1 {LINES}\nexec cat\n"))?;
    let scrollback = scrollback.to_str().ok_or("non-UTF-8 temp path")?.to_owned();

    let host = bench.start_host(&[])?;
    let ph_idle = bench.runtime.block_on(panehost_per_pane(&host, &[], &|p| p.offset > 0))?;
    host.stop();
    progress(&format!("memory: panehost idle pane {:.0} KiB", ph_idle.total()));
    let host = bench.start_host(&[])?;
    let ph_full =
        bench.runtime.block_on(panehost_per_pane(&host, &["sh", &scrollback], &|p| p.offset >= SCROLLBACK_OUTPUT))?;
    host.stop();
    progress(&format!("memory: panehost scrollback pane {:.0} KiB", ph_full.total()));

    let tmux = bench.start_tmux(2000)?;
    let tm_idle = tmux_per_pane(bench, &tmux, None, "#{cursor_x}", &|v| v > 0)?;
    tmux.kill();
    progress(&format!("memory: tmux idle pane {tm_idle:.0} KiB"));
    let tmux = bench.start_tmux(2000)?;
    let tm_full =
        tmux_per_pane(bench, &tmux, Some(&format!("sh {scrollback}")), "#{history_size}", &|v| v >= LINES - 24)?;
    tmux.kill();
    progress(&format!("memory: tmux scrollback pane {tm_full:.0} KiB"));

    Ok(vec![
        Figure::single("memory/idle-pane", "KiB", Better::Lower, ph_idle.total(), Some(tm_idle), None)
            .note(format!("host VmRSS growth / {PANES} interactive sh panes at 80x24; tmux: server VmRSS growth / {PANES} windows"))
            .note(ph_idle.split()),
        Figure::single("memory/scrollback-pane", "KiB", Better::Lower, ph_full.total(), Some(tm_full), None)
            .note(format!(
                "each pane printed {LINES} lines of 80 columns (panehost: default ring, no parsed scrollback; tmux: history-limit 2000)"
            ))
            .note(ph_full.split()),
    ])
}

/// panehost's memory per pane: the host process's, and its pane keepers'
/// where it has them.
#[derive(Debug, Clone, Copy)]
struct PerPane {
    host_kib: f64,
    keepers_kib: f64,
    keepers: usize,
}

impl PerPane {
    fn total(&self) -> f64 {
        self.host_kib + self.keepers_kib
    }

    fn split(&self) -> String {
        if self.keepers == 0 {
            "panehost: the host process alone (it holds the PTYs itself; no keeper processes)".to_owned()
        } else {
            format!(
                "panehost: host process {:.1} KiB + its pane keeper processes {:.1} KiB (Pss, {} keepers)",
                self.host_kib, self.keepers_kib, self.keepers
            )
        }
    }
}

async fn panehost_per_pane(
    host: &PanehostHost,
    command: &[&str],
    ready: &dyn Fn(&PaneSummary) -> bool,
) -> BenchResult<PerPane> {
    let client = host.connect().await?;
    let warmup = client.start(shell_pane(command)).await?.id;
    settle_panehost(&client, &[warmup], ready).await?;
    tokio::time::sleep(SETTLE).await;
    let (host_before, keepers_before) = (host.rss_kib(), host.keepers_pss_kib());
    let mut panes = Vec::new();
    for _ in 0..PANES {
        panes.push(client.start(shell_pane(command)).await?.id);
    }
    settle_panehost(&client, &panes, ready).await?;
    tokio::time::sleep(SETTLE).await;
    let (host_after, keepers_after) = (host.rss_kib(), host.keepers_pss_kib());
    let per_pane = |after: u64, before: u64| after.saturating_sub(before) as f64 / PANES as f64;
    Ok(PerPane {
        host_kib: per_pane(host_after, host_before),
        keepers_kib: per_pane(keepers_after, keepers_before),
        keepers: host.keepers().len(),
    })
}

/// Waits until every pane is ready and its screen model has parsed all of
/// its output.
async fn settle_panehost(
    client: &panehost_client::Client,
    panes: &[PaneId],
    ready: &dyn Fn(&PaneSummary) -> bool,
) -> BenchResult<()> {
    let summaries = wait_for_panes(client, panes, READY_TIMEOUT, ready).await?;
    for pane in summaries {
        wait_for_screen(client, &pane.id, pane.offset, READY_TIMEOUT).await?;
    }
    Ok(())
}

/// Windows in the server's `keep` session running `command` (the shell
/// when `None`); ready when `format` evaluates to a number `ready` accepts.
fn tmux_per_pane(
    bench: &Bench,
    tmux: &TmuxServer,
    command: Option<&str>,
    format: &str,
    ready: &dyn Fn(u64) -> bool,
) -> BenchResult<f64> {
    let line = match command {
        Some(command) => format!("new-window -d -t keep: \"{command}\""),
        None => "new-window -d -t keep:".to_owned(),
    };
    tmux.source(&bench.dir, std::slice::from_ref(&line))?;
    wait_for_tmux_panes(tmux, format, ready, 1)?;
    std::thread::sleep(SETTLE);
    let before = tmux.rss_kib();
    tmux.source(&bench.dir, &vec![line; PANES])?;
    wait_for_tmux_panes(tmux, format, ready, 1 + PANES)?;
    std::thread::sleep(SETTLE);
    let after = tmux.rss_kib();
    Ok(after.saturating_sub(before) as f64 / PANES as f64)
}

/// Polls `list-panes` until `count` panes pass `ready`.
pub fn wait_for_tmux_panes(
    tmux: &TmuxServer,
    format: &str,
    ready: &dyn Fn(u64) -> bool,
    count: usize,
) -> BenchResult<()> {
    let deadline = Instant::now() + READY_TIMEOUT;
    loop {
        let listed = tmux.cmd(&["list-panes", "-a", "-F", format])?;
        let done = listed.lines().filter_map(|l| l.trim().parse::<u64>().ok()).filter(|v| ready(*v)).count();
        if done >= count {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!("only {done} of {count} tmux panes were ready after {READY_TIMEOUT:?}").into());
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}
