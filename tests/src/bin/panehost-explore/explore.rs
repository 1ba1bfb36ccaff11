//! One schedule, from a fresh host to its end: the host in a directory of
//! its own, the activity watcher, the clients on their connections, the
//! faults at their times, then every check.

use crate::checks;
use crate::faults;
use crate::host::{self, ExploreHost, HostDir};
use crate::life::{HostLife, SharedConnection};
use crate::ops;
use crate::schedule::{FaultKind, Schedule};
use crate::watcher;
use crate::world::{lock, Failure, World};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinSet;
use tokio::time::Instant;

/// What a schedule came to.
#[derive(Debug)]
pub struct Outcome {
    /// Every failed check.
    pub failures: Vec<Failure>,
    /// The counts.
    pub counts: BTreeMap<String, u64>,
    /// Why it could not run to its end, if it could not.
    pub aborted: Option<String>,
    /// The host's directory (kept when the schedule failed).
    pub dir: PathBuf,
}

impl Outcome {
    /// True when every check held.
    pub fn passed(&self) -> bool {
        self.failures.is_empty() && self.aborted.is_none()
    }
}

/// Runs `schedule` against a fresh host started from `program`, which
/// delays itself at its jitter points by up to `jitter_ms` (drawn from the
/// schedule's seed; 0: not at all).
pub async fn run(schedule: &Schedule, program: &Path, root: &Path, verbose: bool, jitter_ms: u64) -> Outcome {
    let _ = std::fs::remove_dir_all(root);
    let mut outcome = Outcome { failures: Vec::new(), counts: BTreeMap::new(), aborted: None, dir: root.to_path_buf() };
    let dir = match HostDir::create(root) {
        Ok(dir) => dir,
        Err(error) => {
            outcome.aborted = Some(format!("cannot create {}: {error}", root.display()));
            return outcome;
        }
    };
    // Ends the host and whatever it left, by pid, however this ends.
    let jitter = (jitter_ms > 0).then(|| format!("{}:{jitter_ms}", schedule.seed));
    let host = Mutex::new(ExploreHost::new(dir.clone(), program.to_path_buf(), jitter));
    if let Err(problem) = lock(&host).spawn() {
        outcome.aborted = Some(problem);
        return outcome;
    }
    if let Err(problem) = host::wait_until_listening(&dir.socket, Duration::from_secs(30)).await {
        outcome.aborted = Some(problem);
        return outcome;
    }
    let world = Arc::new(World::new(HostLife::new(dir.socket.clone()), schedule.panes, verbose));
    let watch_task = tokio::spawn(watcher::run(Arc::clone(&world)));
    let connections: Vec<Arc<SharedConnection>> =
        (0..schedule.connections).map(|n| Arc::new(SharedConnection::new(format!("explore connection {n}")))).collect();
    let mut clients = JoinSet::new();
    for (index, plan) in schedule.clients.iter().enumerate() {
        let connection = Arc::clone(&connections[plan.connection]);
        clients.spawn(ops::run(Arc::clone(&world), index, plan.clone(), connection));
    }
    let began = Instant::now();
    let faults = async {
        for fault in &schedule.faults {
            tokio::time::sleep_until(began + Duration::from_millis(fault.at_ms)).await;
            match fault.kind {
                FaultKind::KillHost => faults::kill_host(&world, &host).await?,
                FaultKind::KillKeeper { pick } => faults::kill_keeper(&world, &host, pick),
            }
        }
        Ok::<(), String>(())
    };
    tokio::pin!(faults);
    let mut faults_done = false;
    let mut faulted = Ok(());
    while !(faults_done && clients.is_empty()) {
        tokio::select! {
            result = &mut faults, if !faults_done => {
                faults_done = true;
                if let Err(problem) = result {
                    // No host to go on with: the clients stop here.
                    faulted = Err(problem);
                    clients.abort_all();
                }
            }
            Some(joined) = clients.join_next(), if !clients.is_empty() => {
                if let Err(error) = joined {
                    if !error.is_cancelled() {
                        world.fail("client", format!("a client task ended abnormally: {error}"));
                    }
                }
            }
        }
    }
    if let Err(problem) = faulted {
        world.fail("restart", problem.clone());
        outcome.aborted = Some(problem);
    } else {
        for connection in &connections {
            connection.drop_connection().await;
        }
        checks::settle(&world).await;
        checks::compare_with_replays(&world).await;
        checks::compare_observed(&world);
        checks::check_markers(&world);
        checks::finish(&world, &host).await;
    }
    world.stop();
    let _ = tokio::time::timeout(Duration::from_secs(5), watch_task).await;
    let leftovers = lock(&host).end_everything();
    for what in leftovers {
        world.fail("end", format!("had to end: {what}"));
    }
    outcome.failures = world.failures();
    if !outcome.failures.is_empty() {
        // What each follower received, for whoever looks into the failure.
        for (id, entry) in world.book().panes.iter() {
            let record = lock(&entry.record).clone();
            let mut text = Vec::new();
            for segment in &record.segments {
                text.extend_from_slice(format!("\n=== from offset {} ===\n", segment.start).as_bytes());
                text.extend_from_slice(&segment.bytes);
            }
            let _ = std::fs::write(root.join(format!("{id}.output")), text);
        }
    }
    outcome.counts = world.counts();
    outcome
}
