//! Many panes on one host: start `--panes` (default 1,000) interactive
//! shells at 80x24 through one connection, one `start` request after the
//! other, and wait until every one has printed its prompt. Against tmux:
//! one client runs a file of as many `new-window -d` commands
//! (`source-file`), and the bench waits until every pane's cursor has left
//! column 0 (the prompt is out).
//!
//! Figures: wall time from the first request to the last prompt, the host
//! process's (tmux server's) resident memory and open file descriptors
//! with every pane running. Where the host keeps its panes' PTYs in keeper
//! processes, the keepers' memory (Pss) is added to the host's, and
//! their descriptors are counted in a note; another note gives the host's
//! memory once the panes have idled as long as the memory benchmark lets
//! them.

use crate::host::{shell_pane, wait_for_panes, PanehostHost};
use crate::memory::{wait_for_tmux_panes, SETTLE as IDLE_SETTLE};
use crate::report::{Better, Figure};
use crate::tmux::TmuxServer;
use crate::{progress, Bench, BenchResult};
use panehost_tests::procfs;
use std::time::{Duration, Instant};

/// What one system came to with every pane running.
#[derive(Debug, Clone)]
struct ManyPanes {
    seconds: f64,
    rss_mib: f64,
    fds: f64,
    fd_kinds: String,
    /// panehost's pane keepers, where it has them: how many, their memory
    /// (MiB of Pss) and their descriptors.
    keepers: (usize, f64, usize),
    /// The host process's resident memory once the panes have idled (MiB).
    idle_host_mib: Option<f64>,
}

pub fn run(bench: &Bench) -> BenchResult<Vec<Figure>> {
    let panes = bench.options.panes;
    let host = bench.start_host(&[])?;
    let ph = bench.runtime.block_on(panehost(&host, panes))?;
    progress(&format!("panes: panehost {panes} in {:.1} s, {:.0} MiB, {} fds", ph.seconds, ph.rss_mib, ph.fds));
    let stop_started = Instant::now();
    host.stop();
    let ph_stop = stop_started.elapsed().as_secs_f64();
    let tmux = bench.start_tmux(2000)?;
    let tm = tmux_windows(bench, &tmux, panes)?;
    tmux.kill();
    progress(&format!("panes: tmux {panes} in {:.1} s, {:.0} MiB, {} fds", tm.seconds, tm.rss_mib, tm.fds));

    let name = |what: &str| format!("panes-{panes}/{what}");
    Ok(vec![
        Figure::single(&name("start"), "s", Better::Lower, ph.seconds, Some(tm.seconds), None)
            .note(format!("all {panes} shells running with a prompt; stopping the host (SIGTERM, which closes every pane) then took {ph_stop:.1} s")),
        Figure::single(&name("rss"), "MiB", Better::Lower, ph.rss_mib, Some(tm.rss_mib), None)
            .note(keeper_memory(&ph))
            .note(idle_memory(&ph)),
        Figure::single(&name("fds"), "fds", Better::Lower, ph.fds, Some(tm.fds), None)
            .note(format!("the host's own; panehost: {}; tmux: {}", ph.fd_kinds, tm.fd_kinds))
            .note(keeper_fds(&ph)),
    ])
}

fn keeper_memory(ph: &ManyPanes) -> String {
    match ph.keepers {
        (0, ..) => "panehost: the host process alone (it holds the PTYs itself; no keeper processes)".to_owned(),
        (n, mib, _) => {
            format!("panehost: host VmRSS {:.1} MiB + {n} pane keeper processes {mib:.1} MiB (Pss)", ph.rss_mib - mib)
        }
    }
}

fn idle_memory(ph: &ManyPanes) -> String {
    match ph.idle_host_mib {
        Some(mib) => format!(
            "after the panes idled {} s: host VmRSS {mib:.1} MiB (their screen models asleep)",
            IDLE_SETTLE.as_secs()
        ),
        None => "not measured idle".to_owned(),
    }
}

fn keeper_fds(ph: &ManyPanes) -> String {
    match ph.keepers {
        (0, ..) => "panehost has no keeper processes".to_owned(),
        (n, _, fds) => format!("panehost's {n} pane keeper processes hold {fds} more"),
    }
}

async fn panehost(host: &PanehostHost, count: usize) -> BenchResult<ManyPanes> {
    let client = host.connect().await?;
    let started = Instant::now();
    let mut panes = Vec::with_capacity(count);
    for i in 0..count {
        match client.start(shell_pane(&[])).await {
            Ok(pane) => panes.push(pane.id),
            Err(error) => return Err(format!("pane {} of {count} did not start: {error}", i + 1).into()),
        }
    }
    wait_for_panes(&client, &panes, Duration::from_secs(600), |p| p.offset > 0).await?;
    let seconds = started.elapsed().as_secs_f64();
    let fd_kinds = procfs::fd_kinds(host.pid());
    let keepers = (host.keepers().len(), host.keepers_pss_kib() as f64 / 1024.0, host.keepers_fd_count());
    let rss_mib = host.rss_kib() as f64 / 1024.0 + keepers.1;
    let fds = host.fd_count() as f64;
    tokio::time::sleep(IDLE_SETTLE).await;
    let idle_host_mib = Some(host.rss_kib() as f64 / 1024.0);
    Ok(ManyPanes { seconds, rss_mib, fds, fd_kinds, keepers, idle_host_mib })
}

fn tmux_windows(bench: &Bench, tmux: &TmuxServer, count: usize) -> BenchResult<ManyPanes> {
    let started = Instant::now();
    tmux.source(&bench.dir, &vec!["new-window -d -t keep:".to_owned(); count])?;
    wait_for_tmux_panes(tmux, "#{cursor_x}", &|x| x > 0, count)?;
    let seconds = started.elapsed().as_secs_f64();
    let fd_kinds = procfs::fd_kinds(tmux.pid());
    Ok(ManyPanes {
        seconds,
        rss_mib: tmux.rss_kib() as f64 / 1024.0,
        fds: tmux.fd_count() as f64,
        fd_kinds,
        keepers: (0, 0.0, 0),
        idle_host_mib: None,
    })
}
