//! Panes share keeper processes: a host gives each keeper a bounded number
//! of panes, a keeper ends once its panes are closed and it takes no more,
//! and a restarted host takes its panes back from every keeper but starts
//! new panes in keepers of its own. A killed keeper takes its group with
//! it, and the host goes on serving those panes' processes directly. A
//! host runs the keeper it started with, whatever replaces the file. A
//! keeper slow to answer holds up no other start.

mod support;

use panehost_ipc::{Encoding, Event, PaneId, Request, Response, StreamStart};
use support::*;

/// The parent of a process, from `/proc/PID/stat`.
fn parent(pid: u32) -> u32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    stat.rsplit_once(") ").unwrap().1.split(' ').nth(1).unwrap().parse().unwrap()
}

/// Waits until the host's keepers are exactly `expected` (in any order).
fn wait_for_keepers(host: &TestHost, expected: &[u32]) {
    let mut expected = expected.to_vec();
    expected.sort_unstable();
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let mut keepers = keeper_pids(host);
        keepers.sort_unstable();
        if keepers == expected {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "keepers {keepers:?}, expected {expected:?}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn each_keeper_holds_a_bounded_group_and_ends_after_it() {
    let mut host = TestHost::start_with_env(&[("PANEHOST_PANES_PER_KEEPER", "2")]);
    let mut conn = host.connect(Encoding::Bincode);
    let panes: Vec<_> = (0..5).map(|_| conn.start(start_params("shell", &[]))).collect();
    let keepers: Vec<u32> = panes.iter().map(|pane| parent(pane.pid)).collect();
    // Panes go to keepers in order, two each.
    assert_eq!(keepers[0], keepers[1]);
    assert_eq!(keepers[2], keepers[3]);
    let distinct = [keepers[0], keepers[2], keepers[4]];
    assert!(distinct[0] != distinct[1] && distinct[1] != distinct[2] && distinct[0] != distinct[2], "{keepers:?}");
    wait_for_keepers(&host, &distinct);
    drop(conn);

    // A restarted host takes every pane back from its keeper, and starts a
    // new pane in a keeper of its own: the old ones take no more panes.
    host.kill_hard();
    host.restart();
    let mut conn = host.connect(Encoding::Json);
    for pane in &panes {
        let subscription = conn.subscribe(&pane.id, None);
        let StreamStart::Snapshot { snapshot, .. } = subscription.start else { panic!("{:?}", subscription.start) };
        conn.type_line(&pane.id, "echo back-$((40+2))");
        conn.follow_until_text(subscription.subscription, &mut Transcript::from(snapshot.offset), "back-42");
    }
    let late = conn.start(start_params("shell", &[]));
    let late_keeper = parent(late.pid);
    assert!(!distinct.contains(&late_keeper), "a new keeper for a new host's pane");

    // Closing a group's panes ends its keeper; the keeper the host still
    // gives panes to stays for the next.
    let close = |conn: &mut Connection, pane: &PaneId| {
        conn.ok(Request::Close { pane: pane.clone() });
    };
    close(&mut conn, &panes[0].id);
    wait_for_keepers(&host, &[distinct[0], distinct[1], distinct[2], late_keeper]);
    close(&mut conn, &panes[1].id);
    wait_for_keepers(&host, &[distinct[1], distinct[2], late_keeper]);
    for pane in &panes[2..] {
        close(&mut conn, &pane.id);
    }
    wait_for_keepers(&host, &[late_keeper]);
    close(&mut conn, &late.id);
    assert!(process_exists(late_keeper), "the open keeper waits for the host's next pane");

    // The host's end is the end of its open keeper's intake.
    host.stop();
    let deadline = std::time::Instant::now() + WAIT;
    while process_exists(late_keeper) {
        assert!(std::time::Instant::now() < deadline, "the last keeper outlived its host");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_killed_keeper_takes_its_group_and_the_host_serves_their_processes_directly() {
    let host = TestHost::start_with_env(&[("PANEHOST_PANES_PER_KEEPER", "2")]);
    let mut conn = host.connect(Encoding::Bincode);
    let panes: Vec<_> = (0..3).map(|_| conn.start(start_params("shell", &[]))).collect();
    let keeper = parent(panes[0].pid);
    assert_eq!(parent(panes[1].pid), keeper);
    assert_ne!(parent(panes[2].pid), keeper);
    // One connection per pane: a connection's test reader follows one
    // subscription at a time.
    let mut followers: Vec<_> = panes
        .iter()
        .map(|pane| {
            let mut follower = host.connect(Encoding::Bincode);
            let subscription = follower.subscribe(&pane.id, Some(0)).subscription;
            (follower, subscription, Transcript::from(0))
        })
        .collect();

    kill(keeper);
    // The processes outlive their keeper; the host still holds their
    // terminals, so every pane goes on working, the group's as the other.
    for (pane, (follower, subscription, transcript)) in panes.iter().zip(&mut followers) {
        assert!(process_exists(pane.pid));
        follower.type_line(&pane.id, "echo alive-$((40+2))");
        follower.follow_until_text(*subscription, transcript, "alive-42");
    }
    // An exit is still noticed, through the process itself; how it ended
    // only the keeper could have said.
    let (follower, subscription, transcript) = &mut followers[0];
    follower.type_line(&panes[0].id, "exit 3");
    follower.follow_to_end(*subscription, transcript);
    let status = transcript.events.iter().find_map(|event| match event {
        Event::Exited { status, .. } => Some(status.clone()),
        _ => None,
    });
    assert_eq!(status.map(|status| status.code), Some(255), "exit status unknown without the keeper");
    for pane in &panes {
        conn.ok(Request::Close { pane: pane.id.clone() });
    }
    host.stop();
}

#[test]
fn a_host_runs_its_own_keeper_after_an_upgrade_replaces_the_file() {
    // The host (which is its keeper too), copied where the test may replace it.
    let bin = tempfile::tempdir().unwrap();
    let program = bin.path().join("panehost");
    std::fs::copy(panehost_bin(), &program).unwrap();
    let host = TestHost::start_program(&program, &[("PANEHOST_PANES_PER_KEEPER", "1")]);
    let mut conn = host.connect(Encoding::Bincode);
    let before = conn.start(start_params("shell", &[]));

    // An upgrade installs a program that would not understand this host
    // (as an installer does: a new file renamed over the old one).
    let replacement = bin.path().join("panehost.new");
    std::fs::write(&replacement, "#!/bin/sh\necho error not the keeper this host started with\nexit 1\n").unwrap();
    std::fs::set_permissions(&replacement, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    std::fs::rename(&replacement, &program).unwrap();

    // One pane per keeper: this pane needs a new keeper process, which is
    // the executable the host started from.
    let after = conn.start(start_params("shell", &[]));
    let new_keeper = parent(after.pid);
    assert_ne!(new_keeper, parent(before.pid));
    let name = std::fs::read_to_string(format!("/proc/{new_keeper}/comm")).unwrap();
    assert_eq!(name.trim_end(), "panehost-keeper");
    for pane in [before, after] {
        conn.ok(Request::Close { pane: pane.id });
    }
    host.stop();
}

/// Sends `signal` (`STOP`, `CONT`) to `pid`.
fn signal(pid: u32, signal: &str) {
    let status = std::process::Command::new("kill").arg(format!("-{signal}")).arg(pid.to_string()).status().unwrap();
    assert!(status.success(), "kill -{signal} {pid}");
}

/// Lets a stopped process go on when dropped, however the test ends.
struct GoesOn(u32);

impl Drop for GoesOn {
    fn drop(&mut self) {
        signal(self.0, "CONT");
    }
}

/// What the host logs when it gives up on a keeper that does not answer.
const GAVE_UP_ON_A_KEEPER: &str = "the keeper stopped answering";

#[test]
fn a_keeper_slow_to_answer_holds_up_no_other_start() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Bincode);
    let first = conn.start(start_params("shell", &[]));
    let stopped = parent(first.pid);
    // The keeper that takes the next pane stops (as a keeper stuck in a
    // fork would): the start given it waits for its answer.
    signal(stopped, "STOP");
    let goes_on = GoesOn(stopped);
    let starts =
        [conn.send(Request::Start(start_params("shell", &[]))), conn.send(Request::Start(start_params("shell", &[])))];
    let (answered, answer) = conn.next_answer();
    let Ok(Response::Started(quick)) = answer else { panic!("{answer:?}") };
    assert_ne!(parent(quick.pid), stopped, "the quick start was made in another keeper");
    assert!(
        !host.log().contains(GAVE_UP_ON_A_KEEPER),
        "the quick start was answered while the other still waited for the stopped keeper, not after the host gave up on it"
    );
    // The keeper goes on and answers the start that waited for it.
    drop(goes_on);
    let (waited, answer) = conn.next_answer();
    let Ok(Response::Started(slow)) = answer else { panic!("{answer:?}") };
    assert_eq!(parent(slow.pid), stopped, "the waiting start was made in the keeper that stopped");
    let mut answers = [answered, waited];
    answers.sort_unstable();
    assert_eq!(answers, starts);
    assert!(!host.log().contains(GAVE_UP_ON_A_KEEPER), "no keeper was given up on");
    for pane in [first, quick, slow] {
        conn.ok(Request::Close { pane: pane.id });
    }
}
