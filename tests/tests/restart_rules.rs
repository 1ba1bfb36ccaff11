//! What a restarted host does with each pane's promises: the wall-time
//! limit still holds, and a one-shot command is not run a second time
//! unless the start asked for that.

mod support;

use panehost_ipc::{Encoding, Event, PaneState, Request, Response, StartParams};
use support::*;

fn panes(conn: &mut Connection) -> Vec<panehost_ipc::PaneSummary> {
    match conn.ok(Request::List {}) {
        Response::Panes { panes } => panes,
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_wall_time_limit_still_holds_after_a_host_restart() {
    let mut host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let mut start = start_params("shell", &["sh", "-c", "echo up; exec sleep 1000"]);
    start.max_wall_ms = Some(1500);
    let pane = conn.start(start).id;
    drop(conn);
    host.kill_hard();
    host.restart();

    let mut conn = host.connect(Encoding::Json);
    let subscription = conn.subscribe(&pane, None).subscription;
    // The limit closes the pane, as it would have without the restart.
    loop {
        let (id, event) = conn.next_event();
        if id == subscription && matches!(event, Event::Exited { .. }) {
            break;
        }
    }
    let listed = panes(&mut conn);
    let closed = listed.iter().find(|summary| summary.id == pane).expect("a pane past its wall time stays listed");
    assert!(matches!(closed.state, PaneState::Exited(_)), "{closed:?}");
    host.stop();
}

/// A pane running `sh -c` that appends a line to `ran` each time it runs.
fn counting_command(ran: &std::path::Path, rerun: bool) -> StartParams {
    let script = format!("echo ran >> {}; exec sleep 1000", ran.display());
    StartParams { rerun_after_host_loss: rerun, ..start_params("shell", &["sh", "-c", &script]) }
}

fn runs(ran: &std::path::Path) -> usize {
    std::fs::read_to_string(ran).unwrap_or_default().lines().count()
}

fn wait_for_runs(ran: &std::path::Path, count: usize) {
    let deadline = std::time::Instant::now() + WAIT;
    while runs(ran) < count {
        assert!(std::time::Instant::now() < deadline, "the command ran {} times, not {count}", runs(ran));
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_command_is_not_run_a_second_time_after_its_keeper_is_lost_unless_asked() {
    let mut host = TestHost::start();
    let once = host.dir.path().join("once");
    let again = host.dir.path().join("again");
    let mut conn = host.connect(Encoding::Json);
    let one_shot = conn.start(counting_command(&once, false));
    let rerun = conn.start(counting_command(&again, true));
    let interactive = conn.start(start_params("shell", &[]));
    wait_for_runs(&once, 1);
    wait_for_runs(&again, 1);
    drop(conn);

    host.kill_hard();
    // A reboot, as far as these panes know: keepers and processes gone.
    for keeper in keeper_pids(&host) {
        kill(keeper);
    }
    for pid in [one_shot.pid, rerun.pid, interactive.pid] {
        kill(pid);
    }
    host.restart();

    let mut conn = host.connect(Encoding::Json);
    let listed = panes(&mut conn);
    assert!(listed.iter().all(|summary| summary.id != one_shot.id), "{listed:?}");
    let back = listed.iter().find(|summary| summary.id == rerun.id).expect("asked to run again");
    assert_eq!((back.generation, back.restored_by.as_str()), (2, "fresh"));
    let shell = listed.iter().find(|summary| summary.id == interactive.id).expect("an interactive shell restarts");
    assert_eq!(shell.restored_by, "fresh");
    wait_for_runs(&again, 2);
    assert_eq!(runs(&once), 1, "the one-shot command ran once");

    // A client of the pane that did not come back is told why.
    let error = conn.call(Request::Inspect { pane: one_shot.id.clone() }).unwrap_err();
    assert_eq!(error.code, "UNKNOWN_PANE");
    assert!(error.message.contains("not run a second time"), "{}", error.message);
    assert!(error.message.contains("rerun_after_host_loss"), "{}", error.message);
    for pane in [rerun.id, interactive.id] {
        conn.ok(Request::Close { pane });
    }
    host.stop();
}

#[test]
fn a_closed_pane_is_reported_as_closed() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Bincode);
    let pane = conn.start(start_params("shell", &[])).id;
    conn.ok(Request::Close { pane: pane.clone() });
    let error = conn.call(Request::Inspect { pane: pane.clone() }).unwrap_err();
    assert_eq!(error.code, "UNKNOWN_PANE");
    assert_eq!(error.message, format!("pane {pane} was closed"));
    let never = conn.call(Request::Inspect { pane: "p00000000".into() }).unwrap_err();
    assert_eq!(never.message, "no pane p00000000");
    host.stop();
}
