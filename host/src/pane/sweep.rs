//! Ending every process a pane started, wherever it went: the sweep that
//! follows a `close` and an `interrupt` with `terminate`.
//!
//! A process the pane started can leave its process group (`setpgid`),
//! its session (`setsid`) and, once its parent ends, the pane's process
//! tree; signals sent to process groups then miss it. The sweep finds the
//! pane's processes by what they cannot shed:
//!
//! - the pane's own control group, where it has one (`cgroups.rs`):
//!   nothing the pane starts can leave it, and a close ends it whole with
//!   `cgroup.kill`, which no process can outrun by forking (method
//!   `cgroup`);
//! - the pane's session (its process leads one of its own), and descent
//!   from the pane's process (a process never chooses its parent);
//! - adoption by the pane's keeper, a child subreaper: an orphan of the
//!   pane becomes the keeper's child, and is the pane's when its
//!   environment carries the pane's notify token (a keeper holds several
//!   panes; every process of a pane inherits the token unless its
//!   environment was replaced);
//! - descent from a process already found.
//!
//! Each process found is pinned by a pidfd as it is found, after which it
//! is checked again, and signalled only through the pidfd: a pid the kernel
//! gives to another process meanwhile is never signalled. Found processes
//! get SIGTERM and [`SWEEP_GRACE`]; then, in rounds, every one still there
//! is stopped (SIGSTOP, so none can start another), the stopped ones'
//! children are found and stopped too, and all get SIGKILL; until none is
//! left or [`SWEEP_ROUNDS`] have passed.

use crate::control_group;
use crate::limits::{SWEEP_CGROUP_LOOK, SWEEP_GRACE, SWEEP_KILL_WAIT, SWEEP_ROUNDS, SWEEP_STOP_PASSES};
use crate::process_stat::ProcessStat;
use panehost_ipc::response::sweep_method;
use panehost_ipc::{PaneSweep, MAX_SWEEP_SURVIVORS};
use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::{Pid, PidfdFlags, Signal};
use std::collections::{BTreeMap, HashMap, HashSet};
use std::os::fd::{AsFd, OwnedFd};
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// The name the sweep reports for how it told the pane's processes apart,
/// without a control group of the pane's.
pub(super) const METHOD: &str = sweep_method::PROCESS_TREE;
/// …and with one.
const METHOD_CGROUP: &str = sweep_method::CGROUP;

/// What tells a pane's processes from any other.
#[derive(Debug, Clone)]
pub(super) struct PaneIdentity {
    /// The pane's process: the leader of its session.
    pub pane_pid: u32,
    /// The pane's keeper, which adopts the pane's orphans.
    pub keeper_pid: u32,
    /// `PANEHOST_NOTIFY_TOKEN=<the pane's token>`, as it appears in an
    /// environment.
    pub token_entry: Vec<u8>,
    /// When the pane's process started (`/proc/<pid>/stat`'s start time),
    /// if the host saw it running: a process of that pid that started at
    /// another time is not the pane's (the pid was given again).
    pub pane_started: Option<u64>,
    /// The pane's own control group, if it has one.
    pub cgroup: Option<PathBuf>,
}

impl PaneIdentity {
    /// Whether the pane's session and process tree still say whose a
    /// process is. Yes while the pane's process is the one that started
    /// then; and yes when no process holds its pid: the kernel gives no
    /// process a pid that is still some process's session id, so whatever
    /// is in that session now was in it from the start.
    fn tree_is_the_panes(&self) -> bool {
        match start_time(self.pane_pid) {
            None => true,
            Some(started) => Some(started) == self.pane_started,
        }
    }
}

/// Which of the pane's processes a sweep ends. The pane's own process is
/// never among them: the signals to its process group end it, and its
/// keeper reports how.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Reach {
    /// Every process of the pane (a close).
    Pane,
    /// One program the pane's process started (an interrupt's terminate):
    /// the processes pinned as its own when it began, everything that
    /// descends from them, and the pane's processes that have left the
    /// pane's process tree (orphans, which no shell's job control ends).
    Program,
}

/// A sweep in progress: the processes found so far, each pinned.
#[derive(Debug)]
pub(crate) struct Sweep {
    identity: PaneIdentity,
    reach: Reach,
    pinned: BTreeMap<u32, OwnedFd>,
}

/// One row of the process table.
#[derive(Debug, Clone, Copy)]
struct Row {
    pid: u32,
    stat: ProcessStat,
}

impl Sweep {
    pub(super) fn new(identity: PaneIdentity, reach: Reach) -> Sweep {
        Sweep { identity, reach, pinned: BTreeMap::new() }
    }

    /// Pins every process in process group `group` (the program in the
    /// terminal's foreground, when an interrupt begins), so that those
    /// that leave the group later are still found. Blocking (reads `/proc`).
    pub(super) fn pin_group(&mut self, group: u32) {
        for row in process_table() {
            if row.stat.group == group && !row.stat.zombie && row.pid != self.identity.pane_pid {
                self.pin(row);
            }
        }
    }

    /// Finds and pins the processes of the sweep's reach not pinned yet,
    /// while their parents and sessions still say whose they are (before
    /// any signal). Blocking (reads `/proc`).
    pub(super) fn find(&mut self) {
        self.discover();
    }

    /// Ends every process pinned or found from now on: SIGTERM, the grace,
    /// then rounds of SIGSTOP and SIGKILL. Says how many ended and which
    /// survived. Blocking: run it off the async threads.
    pub(super) fn end(mut self) -> PaneSweep {
        self.discover();
        let live = self.live();
        if !live.is_empty() {
            self.signal(&live, Signal::TERM);
            // A stopped process acts on SIGTERM only once continued.
            self.signal(&live, Signal::CONT);
            self.wait_gone(SWEEP_GRACE);
        }
        for _ in 0..SWEEP_ROUNDS {
            if self.kill_cgroup() {
                self.wait_cgroup_empty(SWEEP_KILL_WAIT);
            }
            self.signal(&self.live(), Signal::STOP);
            for _ in 0..SWEEP_STOP_PASSES {
                let found = self.discover();
                if found.is_empty() {
                    break;
                }
                self.signal(&found, Signal::STOP);
            }
            let live = self.live();
            if live.is_empty() {
                break;
            }
            self.signal(&live, Signal::KILL);
            self.wait_gone(SWEEP_KILL_WAIT);
        }
        // Whatever the last round's SIGKILL left: found once more, so that
        // what it started after the last look is reported, not hidden.
        self.discover();
        let mut survivors = self.live();
        // Of a whole pane, whatever its group still holds survived too (its
        // own process aside, which the close reports by its exit).
        if let (Some(dir), Reach::Pane) = (&self.identity.cgroup, self.reach) {
            let members = control_group::members(dir).unwrap_or_default();
            survivors.extend(members.into_iter().filter(|&pid| pid != self.identity.pane_pid));
            survivors.sort_unstable();
            survivors.dedup();
        }
        if !survivors.is_empty() {
            tracing::error!(pane = self.identity.pane_pid, ?survivors, "processes of the pane survived the sweep");
        }
        let survived_of_pinned = survivors.iter().filter(|pid| self.pinned.contains_key(pid)).count();
        PaneSweep {
            method: if self.identity.cgroup.is_some() { METHOD_CGROUP } else { METHOD }.to_owned(),
            ended: (self.pinned.len() - survived_of_pinned) as u32,
            survivors: survivors.into_iter().take(MAX_SWEEP_SURVIVORS).collect(),
        }
    }

    /// Finds the processes of the sweep's reach that are not pinned yet
    /// and pins them; gives their pids.
    fn discover(&mut self) -> Vec<u32> {
        let table = process_table();
        let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
        for row in &table {
            children.entry(row.stat.parent).or_default().push(row.pid);
        }
        let pane_pid = self.identity.pane_pid;
        let trusted = self.identity.tree_is_the_panes();
        let in_pane_tree = if trusted { descendants(&children, [pane_pid]) } else { HashSet::new() };
        let in_session = |row: &Row| trusted && row.stat.session == pane_pid;
        let in_cgroup: HashSet<u32> = match &self.identity.cgroup {
            Some(dir) => control_group::members(dir).unwrap_or_default().into_iter().collect(),
            None => HashSet::new(),
        };
        let mut roots: Vec<u32> = self.pinned.keys().copied().collect();
        for row in &table {
            let of_the_pane = in_session(row) || self.adopted(row) || in_cgroup.contains(&row.pid);
            let left_the_tree = !in_pane_tree.contains(&row.pid) && of_the_pane;
            let in_reach = match self.reach {
                Reach::Pane => of_the_pane || in_pane_tree.contains(&row.pid),
                Reach::Program => left_the_tree,
            };
            if in_reach {
                roots.push(row.pid);
            }
        }
        let members = descendants(&children, roots);
        let by_pid: HashMap<u32, Row> = table.iter().map(|row| (row.pid, *row)).collect();
        let mut found = Vec::new();
        for pid in members {
            if self.pinned.contains_key(&pid) || !self.may_end(pid) {
                continue;
            }
            if let Some(row) = by_pid.get(&pid) {
                if !row.stat.zombie && self.pin(*row) {
                    found.push(pid);
                }
            }
        }
        found
    }

    /// With the pane's control group, and for a whole pane: SIGKILL to
    /// everything in the group at once (`cgroup.kill`). Not when the group
    /// holds the keeper or the host (a keeper that could not leave it): it
    /// is never ended. Says whether it was sent.
    fn kill_cgroup(&self) -> bool {
        let Some(dir) = &self.identity.cgroup else { return false };
        if self.reach != Reach::Pane {
            return false;
        }
        let Ok(members) = control_group::members(dir) else { return false };
        if members.is_empty() || members.iter().any(|&pid| !self.may_end(pid) && pid != self.identity.pane_pid) {
            return false;
        }
        control_group::kill_all(dir).is_ok()
    }

    /// Waits until the pane's group holds no process (the pane's own
    /// aside), at most `limit`. The kernel says so by no event this sweep
    /// can wait on cheaply, so it looks every few milliseconds.
    fn wait_cgroup_empty(&self, limit: Duration) {
        let Some(dir) = &self.identity.cgroup else { return };
        let deadline = Instant::now() + limit;
        loop {
            let members = control_group::members(dir).unwrap_or_default();
            if members.iter().all(|&pid| pid == self.identity.pane_pid) || Instant::now() >= deadline {
                return;
            }
            std::thread::sleep(SWEEP_CGROUP_LOOK);
        }
    }

    /// An orphan of this pane: adopted by its keeper, with the pane's
    /// token in its environment.
    fn adopted(&self, row: &Row) -> bool {
        row.stat.parent == self.identity.keeper_pid && environment_holds(row.pid, &self.identity.token_entry)
    }

    /// Never the pane's own process, its keeper, the host, or init.
    fn may_end(&self, pid: u32) -> bool {
        pid > 1 && pid != self.identity.pane_pid && pid != self.identity.keeper_pid && pid != std::process::id()
    }

    /// Pins `row`'s process with a pidfd, if it is still the process the
    /// row describes (same parent and session, running) once pinned.
    fn pin(&mut self, row: Row) -> bool {
        let Some(pid) = i32::try_from(row.pid).ok().and_then(Pid::from_raw) else { return false };
        let Ok(pidfd) = rustix::process::pidfd_open(pid, PidfdFlags::empty()) else { return false };
        let same = ProcessStat::read(row.pid)
            .is_some_and(|now| !now.zombie && now.parent == row.stat.parent && now.session == row.stat.session);
        if !same || has_exited(&pidfd) {
            return false;
        }
        self.pinned.insert(row.pid, pidfd);
        true
    }

    /// The pinned processes that have not exited.
    fn live(&self) -> Vec<u32> {
        self.pinned.iter().filter(|(_, pidfd)| !has_exited(pidfd)).map(|(&pid, _)| pid).collect()
    }

    fn signal(&self, pids: &[u32], signal: Signal) {
        for pid in pids {
            if let Some(pidfd) = self.pinned.get(pid) {
                let _ = rustix::process::pidfd_send_signal(pidfd, signal);
            }
        }
    }

    /// Waits until every pinned process has exited, at most `limit`.
    fn wait_gone(&self, limit: Duration) {
        let deadline = Instant::now() + limit;
        loop {
            let live: Vec<&OwnedFd> = self.pinned.values().filter(|pidfd| !has_exited(pidfd)).collect();
            let left = deadline.saturating_duration_since(Instant::now());
            if live.is_empty() || left.is_zero() {
                return;
            }
            // Any one exiting wakes the poll; the rest are looked at again.
            let mut fds: Vec<PollFd<'_>> =
                live.iter().map(|pidfd| PollFd::from_borrowed_fd(pidfd.as_fd(), PollFlags::IN)).collect();
            let timeout = Timespec { tv_sec: left.as_secs() as i64, tv_nsec: i64::from(left.subsec_nanos()) };
            let _ = rustix::event::poll(&mut fds, Some(&timeout));
        }
    }
}

/// Every pid in `roots` and every process that descends from one of them.
fn descendants(children: &HashMap<u32, Vec<u32>>, roots: impl IntoIterator<Item = u32>) -> HashSet<u32> {
    let mut seen = HashSet::new();
    let mut todo: Vec<u32> = roots.into_iter().collect();
    while let Some(pid) = todo.pop() {
        if seen.insert(pid) {
            todo.extend(children.get(&pid).into_iter().flatten().copied());
        }
    }
    seen
}

/// Every process this namespace shows in `/proc`, as it is now.
fn process_table() -> Vec<Row> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter_map(|pid| Some(Row { pid, stat: ProcessStat::read(pid)? }))
        .collect()
}

/// Whether process `pid`'s environment (as it was when it executed its
/// program) holds exactly `entry`.
fn environment_holds(pid: u32, entry: &[u8]) -> bool {
    std::fs::read(format!("/proc/{pid}/environ"))
        .is_ok_and(|environ| environ.split(|&byte| byte == 0).any(|variable| variable == entry))
}

/// When process `pid` started, in clock ticks since boot (the 22nd field
/// of `/proc/<pid>/stat`); `None` when there is no such process.
pub(super) fn start_time(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(") ")?;
    rest.split_whitespace().nth(19)?.parse().ok()
}

/// Whether the process a pidfd pins has exited (its pidfd is readable).
fn has_exited(pidfd: &OwnedFd) -> bool {
    let mut fds = [PollFd::from_borrowed_fd(pidfd.as_fd(), PollFlags::IN)];
    let now = Timespec { tv_sec: 0, tv_nsec: 0 };
    matches!(rustix::event::poll(&mut fds, Some(&now)), Ok(ready) if ready > 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::CommandExt;
    use std::process::{Command, Stdio};

    fn identity_of_this_process() -> PaneIdentity {
        PaneIdentity {
            pane_pid: std::process::id(),
            keeper_pid: std::os::unix::process::parent_id(),
            token_entry: b"PANEHOST_NOTIFY_TOKEN=none-such".to_vec(),
            pane_started: start_time(std::process::id()),
            cgroup: None,
        }
    }

    #[test]
    fn a_program_that_left_its_group_and_its_parent_is_ended() {
        // A parent in its own group whose child leaves the group; the
        // parent is pinned, then exits: the child is still found, by the
        // pin it got while its parent lived.
        let mut parent = Command::new("sh")
            .args(["-c", "setsid sh -c 'trap \"\" TERM; echo $$; exec sleep 60' & wait"])
            .stdout(Stdio::piped())
            .process_group(0)
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufRead::read_line(&mut std::io::BufReader::new(parent.stdout.take().unwrap()), &mut line).unwrap();
        let child: u32 = line.trim().parse().unwrap();
        let mut sweep = Sweep::new(identity_of_this_process(), Reach::Program);
        sweep.pin_group(parent.id());
        sweep.find();
        assert!(sweep.pinned.contains_key(&child), "the child in its own session is found by descent");
        let _ = parent.kill();
        let _ = parent.wait();
        let report = sweep.end();
        assert_eq!(report.survivors, Vec::<u32>::new());
        assert!(report.ended >= 1, "{report:?}");
        assert!(ProcessStat::read(child).is_none_or(|stat| stat.zombie), "the child still runs");
    }

    #[test]
    fn a_pid_given_again_is_not_the_panes_process() {
        let mut identity = identity_of_this_process();
        assert!(identity.tree_is_the_panes());
        identity.pane_started = identity.pane_started.map(|started| started + 1);
        assert!(!identity.tree_is_the_panes(), "another start time: another process");
    }

    #[test]
    fn the_pane_process_and_its_keeper_are_never_ended() {
        let identity = identity_of_this_process();
        let sweep = Sweep::new(identity.clone(), Reach::Pane);
        assert!(!sweep.may_end(identity.pane_pid));
        assert!(!sweep.may_end(identity.keeper_pid));
        assert!(!sweep.may_end(1));
    }
}
