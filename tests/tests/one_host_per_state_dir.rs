//! One host per state directory: a second host on the same state
//! directory, whatever its socket, exits at once naming the first, and
//! takes nothing of the first host's panes; a client that worked out
//! another socket reaches the state directory's host.
//!
//! Before the lock, a second host on another socket took copies of the
//! first host's panes, removed their records and closed them on SIGTERM:
//! after the first host's restart, panes were gone and some processes ran
//! on under their old keeper, invisible to `ls`.

mod support;

use panehost_ipc::{Encoding, Request, Response};
use std::collections::BTreeSet;
use support::command::Cli;
use support::{process_exists, start_params, TestHost};

fn listed(host: &TestHost) -> BTreeSet<String> {
    let Response::Panes { panes } = host.connect(Encoding::Json).ok(Request::List { labels: Default::default() })
    else {
        panic!("list answers panes")
    };
    panes.into_iter().map(|pane| pane.id.to_string()).collect()
}

#[test]
fn a_second_host_on_the_state_directory_is_refused_and_nothing_of_the_first_is_lost() {
    let mut host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let mut pids = Vec::new();
    for _ in 0..3 {
        let pane = conn.start(start_params("shell", &["sleep", "600"]));
        pids.push(pane.pid);
    }
    let before = listed(&host);
    assert_eq!(before.len(), 3);

    // The same state directory, another socket: what a shell without
    // XDG_RUNTIME_DIR works out beside one with it.
    let other_socket = host.dir.path().join("run2").join("host.sock");
    let elsewhere = Cli { socket: other_socket.clone(), state_dir: host.state_dir.clone(), home: host.home.clone() };
    let second = elsewhere.run(&["host"]);
    assert_eq!(second.code(), Some(1), "the second host exits at once: {second:?}");
    let expected = format!("another host (pid {}) already uses the state directory", host.pid());
    assert!(second.stderr.contains(&expected), "{}", second.stderr);
    assert!(second.stderr.contains(&host.socket.display().to_string()), "names its socket: {}", second.stderr);
    assert!(!other_socket.exists(), "the second host never listened");

    // Nothing of the first host's was touched.
    assert_eq!(listed(&host), before);
    for pid in &pids {
        assert!(process_exists(*pid), "pane process {pid} runs on");
    }
    for id in &before {
        assert!(host.state_dir.join("panes").join(format!("{id}.json")).exists(), "record of {id} kept");
    }

    // A client given the other socket finds the state directory's host
    // instead of starting a second one.
    let through_state = elsewhere.run(&["ls", "--json"]);
    assert!(through_state.status.success(), "{through_state:?}");
    let answer: serde_json::Value = serde_json::from_str(&through_state.stdout).unwrap();
    let ids: BTreeSet<String> =
        answer["panes"].as_array().unwrap().iter().map(|pane| pane["id"].as_str().unwrap().to_owned()).collect();
    assert_eq!(ids, before);
    assert!(through_state.stderr.contains(&host.socket.display().to_string()), "{}", through_state.stderr);
    assert!(!other_socket.exists(), "no second host was started");

    // And the first host, killed and restarted, has every pane back.
    host.kill_hard();
    host.restart();
    assert_eq!(listed(&host), before);
    for pid in &pids {
        assert!(process_exists(*pid), "pane process {pid} runs on after the restart");
    }
    host.stop();
}

#[test]
fn a_killed_host_leaves_no_lock_behind() {
    let mut host = TestHost::start();
    host.kill_hard();
    // The lock file is still there, naming a host that is gone; the
    // kernel let its lock go with the process.
    assert!(host.state_dir.join("host.lock").exists());
    host.restart();
    let claim = panehost_ipc::HostClaim::read(&host.state_dir).expect("the new host's claim");
    assert_eq!(claim.pid, host.pid());
    assert_eq!(claim.socket, host.socket);
    host.stop();
}

/// A host started right after `kill -9` of the last one, before the kernel
/// has ended it (a supervisor restarting it at once does this): the lock is
/// still the dying host's for a moment, and the new host waits for it
/// rather than exiting with "another host already uses the state
/// directory" (which it did every time when started from a shell on the
/// next line).
#[test]
fn a_host_started_while_the_killed_one_is_still_dying_takes_over() {
    let mut host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &["sh", "-c", "exec sleep 1000"])).id.to_string();
    drop(conn);
    for round in 0..5 {
        host.kill_hard_and_restart_at_once();
        // The socket answered may have been the dying host's: the new one
        // is the state directory's once its claim is in the lock file.
        support::command::wait_for("the new host to hold the state directory", || {
            if !process_exists(host.pid()) {
                panic!("round {round}: the new host gave up; log:\n{}", host.log());
            }
            let claim = panehost_ipc::HostClaim::read(&host.state_dir).map(|claim| claim.pid);
            (claim == Some(host.pid())).then_some(()).ok_or(format!("the claim names {claim:?}"))
        });
        support::command::wait_for("the pane to be back", || {
            // The dying host is gone by now: a socket that answers is the
            // new host's.
            std::os::unix::net::UnixStream::connect(&host.socket).map_err(|err| err.to_string())?;
            let panes = listed(&host);
            panes.contains(&pane).then_some(()).ok_or(format!("{panes:?}"))
        });
    }
    host.stop();
}
