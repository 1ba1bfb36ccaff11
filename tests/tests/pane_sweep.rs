//! Everything a pane started ends when the pane's program is terminated or
//! the pane is closed: a worker that leaves its process group, a
//! double-fork daemon, and a process that leads a session of its own, each
//! started in a shell pane, are gone after `interrupt` with `terminate`
//! and after `close`, and the answers say what was ended. Each case runs
//! twice: with the pane's own control group (where this machine lets the
//! host make one; the case says so and ends early where it does not), and
//! with control groups turned off (the process tree alone).

mod support;

use panehost_ipc::{Encoding, PaneId, PaneSweep, Request, Response};
use std::path::{Path, PathBuf};
use support::command::wait_for;
use support::*;

/// Starts the process trees the tests end, and writes each process's pid
/// (one line each) to the file it is given once that process is ready.
/// Every process of it ignores SIGHUP and SIGTERM.
///
/// - `leaver`: the interrupt's reproduction. A parent that exits on
///   SIGINT, and a worker that leaves the process group on SIGINT.
/// - `leaver-now`: the same, but the worker leaves the group at once.
/// - `daemon`: a double-fork daemon (fork, setsid, fork; the middle one
///   exits), then the parent waits in the foreground.
/// - `escaper`: a child in a session of its own (setsid), and the parent
///   waits in the foreground.
const TREE: &str = r#"
import os, signal, sys, time
mode, pids = sys.argv[1], sys.argv[2]
signal.signal(signal.SIGHUP, signal.SIG_IGN)
signal.signal(signal.SIGTERM, signal.SIG_IGN)
def ready():
    with open(pids, "a") as f:
        f.write(f"{os.getpid()}\n")
def forever():
    while True:
        time.sleep(1)
if mode in ("leaver", "leaver-now"):
    if os.fork():
        signal.signal(signal.SIGINT, lambda *a: os._exit(0))
        ready()
        forever()
    if mode == "leaver-now":
        os.setpgid(0, 0)
    signal.signal(signal.SIGINT, lambda *a: os.setpgid(0, 0))
    ready()
    forever()
elif mode == "daemon":
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            ready()
            forever()
        os._exit(0)
    os.wait()
    ready()
    forever()
elif mode == "escaper":
    if os.fork() == 0:
        os.setsid()
        ready()
        forever()
    ready()
    forever()
"#;

/// How the host is to tell the pane's processes from others.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Method {
    /// The pane's own control group.
    Cgroup,
    /// Its session and process tree (control groups turned off).
    ProcessTree,
}

impl Method {
    fn name(self) -> &'static str {
        match self {
            Method::Cgroup => "cgroup",
            Method::ProcessTree => "process_tree",
        }
    }

    /// A host that uses this method, or `None` (said on stderr) where this
    /// machine does not let the host make control groups.
    fn host(self) -> Option<TestHost> {
        match self {
            Method::Cgroup if !cgroups_available() => {
                eprintln!("no control group the host may make here (cgroup v2, root or a delegated subtree): not run");
                None
            }
            Method::Cgroup => Some(TestHost::start()),
            Method::ProcessTree => Some(TestHost::start_with_env(&[("PANEHOST_PANE_CGROUPS", "off")])),
        }
    }
}

/// Whether a host started by this test can give panes control groups of
/// their own: a group can be made in this process's own cgroup v2 group
/// (which the host inherits), and has `cgroup.kill`.
fn cgroups_available() -> bool {
    let own = std::fs::read_to_string("/proc/self/cgroup").unwrap_or_default();
    let Some(path) = own.lines().find_map(|line| line.strip_prefix("0::")) else { return false };
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").unwrap_or_default();
    let mount = mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        let fields: Vec<&str> = before.split_whitespace().collect();
        (after.starts_with("cgroup2 ") && fields.get(3) == Some(&"/")).then(|| PathBuf::from(fields[4]))
    });
    let Some(mount) = mount else { return false };
    let probe = mount.join(path.trim_start_matches('/')).join(format!("panehost-probe-{}", std::process::id()));
    let made = std::fs::create_dir(&probe).is_ok();
    let can_kill = made && probe.join("cgroup.kill").is_file();
    if made {
        std::fs::remove_dir(&probe).unwrap();
    }
    can_kill
}

/// A shell pane running one tree, and the pids of the tree's processes.
struct Tree {
    host: TestHost,
    pane: PaneId,
    pids: Vec<u32>,
    _scratch: tempfile::TempDir,
}

impl Tree {
    /// Starts a host that uses `method` and a shell pane, runs `mode` of
    /// [`TREE`] in it and waits until its `processes` processes are ready;
    /// `None` where the method is not available.
    fn start(method: Method, mode: &str, processes: usize) -> Option<Tree> {
        let host = method.host()?;
        let scratch = tempfile::tempdir().unwrap();
        let script = scratch.path().join("tree.py");
        std::fs::write(&script, TREE).unwrap();
        let pid_file = scratch.path().join("pids");
        let mut conn = host.connect(Encoding::Json);
        let pane = conn.start(start_params("shell", &[])).id;
        conn.type_line(&pane, &format!("/usr/bin/python3 {} {mode} {}", script.display(), pid_file.display()));
        let pids = wait_for("the tree's processes", || read_pids(&pid_file, processes));
        Some(Tree { host, pane, pids, _scratch: scratch })
    }

    /// Waits until none of the tree's processes exists.
    fn wait_all_gone(&self) {
        wait_for("every process of the tree to end", || {
            let left: Vec<u32> = self.pids.iter().copied().filter(|&pid| process_exists(pid)).collect();
            if left.is_empty() {
                Ok(())
            } else {
                Err(format!("{left:?} still run"))
            }
        });
    }

    fn terminate(&self) -> panehost_ipc::InterruptReport {
        let mut conn = self.host.connect(Encoding::Json);
        let Response::Interrupted(report) = conn.ok(Request::Interrupt { pane: self.pane.clone(), terminate: true })
        else {
            panic!("not an interrupt's answer")
        };
        report
    }

    fn close(&self) -> Option<PaneSweep> {
        let mut conn = self.host.connect(Encoding::Json);
        let Response::Closed { sweep, .. } = conn.ok(Request::Close { pane: self.pane.clone() }) else {
            panic!("not a close's answer")
        };
        sweep
    }
}

impl Drop for Tree {
    /// Ends, by pid, whatever of the tree a failed test left running (only
    /// processes that still carry this host's socket in their environment,
    /// as every process of its panes does).
    fn drop(&mut self) {
        for &pid in &self.pids {
            kill_pane_process(&self.host, pid);
        }
    }
}

fn read_pids(file: &Path, processes: usize) -> Result<Vec<u32>, String> {
    let text = std::fs::read_to_string(file).unwrap_or_default();
    let pids: Vec<u32> = text.lines().filter_map(|line| line.parse().ok()).collect();
    if pids.len() >= processes {
        Ok(pids)
    } else {
        Err(format!("{} of {processes} ready", pids.len()))
    }
}

/// The sweep, by `method`, reported ended processes and no survivor.
fn assert_swept_clean(method: Method, sweep: Option<&PaneSweep>, at_least: usize, answer: &dyn std::fmt::Debug) {
    let sweep = sweep.unwrap_or_else(|| panic!("no sweep in the answer: {answer:?}"));
    assert_eq!(sweep.method, method.name(), "{answer:?}");
    assert!(sweep.survivors.is_empty(), "{answer:?}");
    assert!(sweep.ended as usize >= at_least, "{answer:?}");
}

fn terminate_ends(method: Method, mode: &str, processes: usize, strays: usize) {
    let Some(tree) = Tree::start(method, mode, processes) else { return };
    let report = tree.terminate();
    tree.wait_all_gone();
    assert_eq!(report.outcome, "foreground_ended", "{report:?}");
    assert_swept_clean(method, report.sweep.as_ref(), strays, &report);
    // The shell runs on.
    let mut conn = tree.host.connect(Encoding::Json);
    let sub = conn.subscribe(&tree.pane, Some(0)).subscription;
    conn.type_line(&tree.pane, "echo shell-$((6*7))-lives");
    conn.follow_until_text(sub, &mut Transcript::from(0), "shell-42-lives");
}

fn close_ends(method: Method, mode: &str, processes: usize) {
    let Some(tree) = Tree::start(method, mode, processes) else { return };
    let group = pane_group(tree.pids[0]);
    assert_eq!(group.is_some(), method == Method::Cgroup, "the pane's own group: {group:?}");
    let sweep = tree.close();
    tree.wait_all_gone();
    assert_swept_clean(method, sweep.as_ref(), 1, &sweep);
    if let Some(group) = group {
        assert!(!group.exists(), "the closed pane's group {} is left", group.display());
    }
}

/// The directory of the control group a pane made for process `pid`, if
/// it is in one (`.../panehost/<state>/<pane>.<generation>`).
fn pane_group(pid: u32) -> Option<PathBuf> {
    let groups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    let path = groups.lines().find_map(|line| line.strip_prefix("0::"))?;
    let mountinfo = std::fs::read_to_string("/proc/self/mountinfo").ok()?;
    let mount = mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        after.starts_with("cgroup2 ").then(|| before.split_whitespace().nth(4).map(PathBuf::from))?
    })?;
    let dir = mount.join(path.trim_start_matches('/'));
    (dir.parent()?.parent()?.file_name()? == "panehost").then_some(dir)
}

#[test]
fn terminate_ends_a_worker_that_leaves_the_process_group() {
    terminate_ends(Method::Cgroup, "leaver", 2, 1);
}

#[test]
fn terminate_ends_a_worker_that_leaves_the_process_group_by_its_tree() {
    terminate_ends(Method::ProcessTree, "leaver", 2, 1);
}

#[test]
fn terminate_ends_a_double_fork_daemon() {
    terminate_ends(Method::Cgroup, "daemon", 2, 1);
}

#[test]
fn terminate_ends_a_double_fork_daemon_by_its_tree() {
    terminate_ends(Method::ProcessTree, "daemon", 2, 1);
}

#[test]
fn terminate_ends_a_process_in_a_session_of_its_own() {
    terminate_ends(Method::Cgroup, "escaper", 2, 1);
}

#[test]
fn terminate_ends_a_process_in_a_session_of_its_own_by_its_tree() {
    terminate_ends(Method::ProcessTree, "escaper", 2, 1);
}

#[test]
fn close_ends_a_worker_that_left_the_process_group() {
    close_ends(Method::Cgroup, "leaver-now", 2);
}

#[test]
fn close_ends_a_worker_that_left_the_process_group_by_its_tree() {
    close_ends(Method::ProcessTree, "leaver-now", 2);
}

#[test]
fn close_ends_a_double_fork_daemon() {
    close_ends(Method::Cgroup, "daemon", 2);
}

#[test]
fn close_ends_a_double_fork_daemon_by_its_tree() {
    close_ends(Method::ProcessTree, "daemon", 2);
}

#[test]
fn close_ends_a_process_in_a_session_of_its_own() {
    close_ends(Method::Cgroup, "escaper", 2);
}

#[test]
fn close_ends_a_process_in_a_session_of_its_own_by_its_tree() {
    close_ends(Method::ProcessTree, "escaper", 2);
}

/// The sweep never ends a process outside the pane: another pane's
/// double-fork daemon, adopted by the same keeper as this pane's, lives on
/// when this pane is closed (it carries the other pane's token, and is in
/// the other pane's group).
#[test]
fn close_leaves_the_processes_of_other_panes() {
    close_leaves_the_processes_of_other_panes_by(Method::Cgroup);
}

#[test]
fn close_leaves_the_processes_of_other_panes_by_their_tree() {
    close_leaves_the_processes_of_other_panes_by(Method::ProcessTree);
}

fn close_leaves_the_processes_of_other_panes_by(method: Method) {
    let Some(tree) = Tree::start(method, "daemon", 2) else { return };
    let other = Tree::start_in(&tree.host, "daemon", 2);
    let keepers = keeper_pids(&tree.host);
    let adopted_by = |pids: &[u32]| {
        wait_for("a daemon adopted by a keeper", || {
            pids.iter()
                .find_map(|&pid| parent_of(pid).filter(|parent| keepers.contains(parent)))
                .ok_or_else(|| format!("parents {:?}", pids.iter().map(|&pid| parent_of(pid)).collect::<Vec<_>>()))
        })
    };
    assert_eq!(adopted_by(&tree.pids), adopted_by(&other.pids), "both daemons are the same keeper's");
    let sweep = tree.close();
    tree.wait_all_gone();
    assert_swept_clean(method, sweep.as_ref(), 1, &sweep);
    assert!(other.pids.iter().all(|&pid| process_exists(pid)), "the other pane's processes were ended");
    let sweep = other.close();
    assert_swept_clean(method, sweep.as_ref(), 1, &sweep);
    wait_for("the other pane's processes to end", || {
        if other.pids.iter().any(|&pid| process_exists(pid)) {
            Err("still running".into())
        } else {
            Ok(())
        }
    });
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat.rsplit_once(") ")?.1.split_whitespace().nth(1)?.parse().ok()
}

/// A second pane's tree in an existing host.
struct OtherTree {
    pane: PaneId,
    pids: Vec<u32>,
    socket: PathBuf,
    _scratch: tempfile::TempDir,
}

impl Tree {
    fn start_in(host: &TestHost, mode: &str, processes: usize) -> OtherTree {
        let scratch = tempfile::tempdir().unwrap();
        let script = scratch.path().join("tree.py");
        std::fs::write(&script, TREE).unwrap();
        let pid_file = scratch.path().join("pids");
        let mut conn = host.connect(Encoding::Json);
        let pane = conn.start(start_params("shell", &[])).id;
        conn.type_line(&pane, &format!("/usr/bin/python3 {} {mode} {}", script.display(), pid_file.display()));
        let pids = wait_for("the tree's processes", || read_pids(&pid_file, processes));
        OtherTree { pane, pids, socket: host.socket.clone(), _scratch: scratch }
    }
}

impl OtherTree {
    fn close(&self) -> Option<PaneSweep> {
        let mut conn = support::Connection::open(&self.socket, Encoding::Json);
        let Response::Closed { sweep, .. } = conn.ok(Request::Close { pane: self.pane.clone() }) else {
            panic!("not a close's answer")
        };
        sweep
    }
}

impl Drop for OtherTree {
    fn drop(&mut self) {
        let needle = format!("PANEHOST_SOCKET={}", self.socket.display());
        for &pid in &self.pids {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            if environ.split(|&byte| byte == 0).any(|entry| entry == needle.as_bytes()) {
                kill(pid);
            }
        }
    }
}
