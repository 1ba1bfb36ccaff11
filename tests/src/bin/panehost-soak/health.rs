//! The host's health as the kernel sees it: open file descriptors against
//! a bound derived from the panes and connections it holds, resident
//! memory, zombies among its children and its panes' processes, and what
//! is left once it is told to stop.

use crate::host::HostDir;
use panehost_tests::procfs;
use std::collections::{BTreeSet, HashSet};
use std::time::Duration;
use tokio::time::Instant;

/// How long a zombie may stay before it counts: a process that just
/// exited is a zombie until its parent reaps it.
const ZOMBIE_GRACE: Duration = Duration::from_secs(5);

/// How the host's open descriptors should scale: measured on the fresh
/// host (with no pane, then with the first panes), plus room for what is
/// in flight.
#[derive(Debug, Clone, Copy)]
pub struct FdModel {
    /// Descriptors of the host with no pane and one connection.
    pub base: usize,
    /// Descriptors per pane (its PTY, its keeper's socket, a share of
    /// its keeper's pipes...), rounded up.
    pub per_pane: usize,
    /// Descriptors per open connection allowed for.
    pub per_connection: usize,
    /// Room for what is in flight (connections being accepted or closed,
    /// files being written).
    pub slack: usize,
}

impl FdModel {
    /// Calibrates from the host's descriptors with no pane (`empty`) and
    /// with `panes` panes (`with_panes`).
    pub fn calibrate(empty: usize, with_panes: usize, panes: usize) -> FdModel {
        let per_pane = with_panes.saturating_sub(empty).div_ceil(panes.max(1)).max(1);
        FdModel { base: empty, per_pane, per_connection: 2, slack: 32 }
    }

    /// The most descriptors a host holding `panes` panes and `connections`
    /// connections should have open.
    pub fn bound(&self, panes: usize, connections: u64) -> usize {
        self.base + self.per_pane * panes + self.per_connection * connections as usize + self.slack
    }
}

/// The host measured at one moment.
#[derive(Debug, Clone)]
pub struct Sample {
    /// When (`start`, `after restart`, `end`).
    pub label: String,
    /// Open descriptors.
    pub fds: usize,
    /// Resident memory, KiB.
    pub rss_kib: u64,
    /// Panes listed at the time.
    pub panes: usize,
    /// Connections the soak held open.
    pub connections: u64,
    /// The bound for those panes and connections.
    pub bound: usize,
    /// Keeper processes of the host's directory (every incarnation's).
    pub keepers: usize,
    /// The descriptors by kind.
    pub kinds: String,
}

impl Sample {
    /// Measures `pid` (whose directory is `dir`) now.
    pub fn take(label: &str, dir: &HostDir, pid: u32, panes: usize, connections: u64, model: &FdModel) -> Sample {
        Sample {
            keepers: dir.keepers().len(),
            label: label.to_owned(),
            fds: procfs::fd_count(pid).unwrap_or(0),
            rss_kib: procfs::rss_kib(pid).unwrap_or(0),
            panes,
            connections,
            bound: model.bound(panes, connections),
            kinds: procfs::fd_kinds(pid),
        }
    }

    /// True when the descriptors are within the bound.
    pub fn within_bound(&self) -> bool {
        self.fds <= self.bound
    }
}

/// Measures until the descriptors are within the bound (connections just
/// dropped take a moment to close on the host's side), at most `timeout`.
pub async fn sample_settled(
    label: &str,
    dir: &HostDir,
    pid: u32,
    panes: usize,
    connections: impl Fn() -> u64,
    model: &FdModel,
    timeout: Duration,
) -> Sample {
    let deadline = Instant::now() + timeout;
    loop {
        let sample = Sample::take(label, dir, pid, panes, connections(), model);
        if sample.within_bound() || Instant::now() > deadline {
            return sample;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

/// Zombies that stay: among the children of the host `host_pid`, its keepers' children,
/// and the processes `pane_pids` (when their parent is the host or one of
/// its keepers). Each as `pid (parent ppid): what`.
pub async fn lasting_zombies(dir: &HostDir, host_pid: u32, pane_pids: &[u32]) -> Vec<String> {
    let keepers: BTreeSet<u32> = dir.keepers().into_iter().collect();
    let parents: BTreeSet<u32> = keepers.iter().copied().chain([host_pid]).collect();
    let find = || {
        let mut zombies = BTreeSet::new();
        for process in procfs::all() {
            if process.is_zombie() && parents.contains(&process.ppid) {
                zombies.insert(process.pid);
            }
        }
        for pid in pane_pids {
            if let Some(process) = procfs::stat(*pid) {
                if process.is_zombie() && parents.contains(&process.ppid) {
                    zombies.insert(process.pid);
                }
            }
        }
        zombies
    };
    let first = find();
    if first.is_empty() {
        return Vec::new();
    }
    let deadline = Instant::now() + ZOMBIE_GRACE;
    let mut lasting = first;
    while !lasting.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        let now = find();
        lasting = lasting.intersection(&now).copied().collect();
    }
    lasting
        .into_iter()
        .map(|pid| {
            let parent = procfs::stat(pid).map(|s| s.ppid).unwrap_or(0);
            let whose = if parent == host_pid { "the host's child" } else { "a keeper's child" };
            let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
            format!("{pid} {} (parent {parent}, {whose})", name.trim())
        })
        .collect()
}

/// Waits until no keeper or pane process of the host is left (zombies
/// count as gone); describes what is left after `timeout`.
pub async fn leftovers_after_stop(dir: &HostDir, timeout: Duration) -> Vec<String> {
    let deadline = Instant::now() + timeout;
    loop {
        let left: Vec<u32> = dir
            .keepers()
            .into_iter()
            .chain(dir.pane_processes())
            .filter(|pid| procfs::stat(*pid).is_some_and(|s| !s.is_zombie()))
            .collect();
        if left.is_empty() || Instant::now() > deadline {
            return left.into_iter().map(procfs::describe).collect();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Pane processes (and their children) of the host's directory that
/// belong to no pane in `listed`, by the pane id in their environment,
/// still there after a grace period: processes no host will ever close.
pub async fn orphan_pane_processes(dir: &HostDir, listed: &HashSet<String>) -> Vec<String> {
    let find = || -> BTreeSet<u32> {
        dir.pane_processes()
            .into_iter()
            .filter(|pid| procfs::stat(*pid).is_some_and(|s| !s.is_zombie()))
            .filter(|pid| {
                procfs::environment_variable(*pid, "PANEHOST_PANE").is_none_or(|pane| !listed.contains(&pane))
            })
            .collect()
    };
    let mut orphans = find();
    let deadline = Instant::now() + ZOMBIE_GRACE;
    while !orphans.is_empty() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
        orphans = orphans.intersection(&find()).copied().collect();
    }
    orphans
        .into_iter()
        .map(|pid| {
            let pane = procfs::environment_variable(pid, "PANEHOST_PANE").unwrap_or_default();
            format!("pane {pane}: {}", procfs::describe(pid))
        })
        .collect()
}

/// The PTY masters (`/dev/ptmx`) `pid` holds open, once at most `panes`
/// of them are left or after `timeout` (a closed pane's master is let go
/// a few seconds after its close is answered).
pub async fn pty_masters_settled(pid: u32, panes: usize, timeout: Duration) -> usize {
    let deadline = Instant::now() + timeout;
    loop {
        let masters = procfs::open_files_named(pid, "/dev/ptmx");
        if masters <= panes || Instant::now() > deadline {
            return masters;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
