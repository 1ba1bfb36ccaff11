//! What a restarted host does with each pane's promises: the wall-time
//! limit still holds, and a one-shot command is not run a second time
//! unless the start asked for that.

mod support;

use panehost_ipc::{Encoding, Event, PaneState, Request, Response, StartParams, StreamStart};
use support::*;

fn panes(conn: &mut Connection) -> Vec<panehost_ipc::PaneSummary> {
    match conn.ok(Request::List { labels: Default::default() }) {
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
        kill_pane_process(&host, pid);
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

fn reconnect(conn: &mut Connection, pane: &panehost_ipc::PaneId, offset: u64) -> panehost_ipc::Subscription {
    match conn.ok(Request::Reconnect { pane: pane.clone(), generation: 1, offset }) {
        Response::Subscribed(subscription) => subscription,
        other => panic!("{other:?}"),
    }
}

/// The numbers of the `line-N` lines in `text`, in order, complete lines
/// only.
fn line_numbers(text: &str) -> Vec<u64> {
    text.split("\r\n").filter_map(|line| line.strip_prefix("line-")?.parse().ok()).collect()
}

#[test]
fn after_a_crash_a_follower_is_told_exactly_the_gap_and_then_gets_every_byte_the_new_host_holds() {
    let mut host = TestHost::start();
    let counter = host.dir.path().join("counter");
    let mut conn = host.connect(Encoding::Json);
    // A line every 20 ms, and the number of the last one in a file.
    let script = format!(
        "i=0; while :; do i=$((i+1)); echo line-$i; echo $i > {counter}.tmp; mv {counter}.tmp {counter}; sleep 0.02; done",
        counter = counter.display()
    );
    let pane = conn.start(start_params("shell", &["sh", "-c", &script])).id;
    let subscription = conn.subscribe(&pane, Some(0)).subscription;
    let mut seen = Transcript::from(0);
    conn.follow_until_text(subscription, &mut seen, "line-20\r\n");
    drop(conn);

    host.kill_hard();
    // The pane goes on printing while no host runs.
    let written = |counter: &std::path::Path| -> u64 {
        std::fs::read_to_string(counter).ok().and_then(|text| text.trim().parse().ok()).unwrap_or(0)
    };
    let at_crash = written(&counter);
    let deadline = std::time::Instant::now() + WAIT;
    while written(&counter) < at_crash + 10 {
        assert!(std::time::Instant::now() < deadline, "the pane stopped printing");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let while_away = written(&counter);
    host.restart();

    let mut conn = host.connect(Encoding::Json);
    let resumed = reconnect(&mut conn, &pane, seen.end());
    let StreamStart::Snapshot { snapshot, skipped_from } = resumed.start else { panic!("{:?}", resumed.start) };
    // The gap is what no host handed on: from where the follower was to
    // where this host's offsets begin.
    assert_eq!(skipped_from, Some(seen.end()));
    let base = snapshot.offset;
    assert!(base > seen.end());
    // Every byte from there comes as output: the lines written while no
    // host ran among them, in order, none missing.
    let mut after = Transcript::from(base);
    let target = format!("line-{}\r\n", while_away + 5);
    conn.follow_until_text(resumed.subscription, &mut after, &target);
    let numbers = line_numbers(&after.text());
    assert!(numbers.windows(2).all(|pair| pair[1] == pair[0] + 1), "lines missing: {numbers:?}");
    let first = *numbers.first().expect("lines after the restart");
    assert!(first <= at_crash + 10, "lines written while no host ran arrived as output (first {first})");
    // What the follower received is byte for byte what the host holds.
    let replay = conn.subscribe(&pane, Some(base));
    assert_eq!(replay.start, StreamStart::Replay { from: base });
    let mut held = Transcript::from(base);
    conn.follow_until(replay.subscription, &mut held, |held| held.end() >= after.end());
    assert_eq!(held.bytes[..after.bytes.len()], after.bytes[..]);
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn a_quiet_pane_keeps_its_offsets_across_restarts() {
    let mut host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &["sh", "-c", "echo quiet; exec sleep 1000"])).id;
    conn.follow_from_start_until(&pane, "quiet\r\n");
    drop(conn);
    let end = wait_until_settled(&host, &pane);
    for _ in 0..3 {
        host.kill_hard();
        host.restart();
        let Response::Panes { panes } = host.connect(Encoding::Json).ok(Request::List { labels: Default::default() })
        else {
            panic!()
        };
        let summary = panes.iter().find(|summary| summary.id == pane).unwrap();
        assert_eq!(summary.offset, end, "no offset is skipped for a pane that printed nothing");
        assert_eq!(wait_until_settled(&host, &pane), end);
    }
    let mut conn = host.connect(Encoding::Json);
    let resumed = reconnect(&mut conn, &pane, end);
    assert_eq!(resumed.start, StreamStart::Replay { from: end });
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn a_turn_open_at_a_crash_is_open_again_and_ends_by_the_runtimes_own_signal() {
    let mut host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("fixture", &[])).id;
    let (subscription, mut seen) = conn.follow_from_start_until(&pane, "fixture> ");
    conn.type_raw(&pane, "/delay 6000\r");
    conn.follow_until_text(subscription, &mut seen, "delay: 6000");
    conn.type_line(&pane, "slow one");
    conn.follow_until_text(subscription, &mut seen, "working: slow one");
    // The record holds the open turn once it is saved.
    let record = host.state_dir.join("panes").join(format!("{pane}.json"));
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let saved: serde_json::Value = serde_json::from_slice(&std::fs::read(&record).unwrap()).unwrap();
        if saved["open_turn"].is_object() {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the open turn was never saved");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    drop(conn);
    host.kill_hard();
    host.restart();

    let mut conn = host.connect(Encoding::Json);
    let Response::Panes { panes } = conn.ok(Request::List { labels: Default::default() }) else { panic!() };
    let summary = panes.iter().find(|summary| summary.id == pane).unwrap();
    let subscription = conn.subscribe(&pane, Some(summary.offset.min(seen.end()))).subscription;
    // Subscribed from where the new host begins (or a snapshot there): the
    // turn it opened again, then its end from the fixture's own signal.
    let mut events = Vec::new();
    loop {
        let (id, event) = conn.next_event();
        if id != subscription {
            continue;
        }
        let done = matches!(event, Event::TurnCompleted { .. });
        events.push(event);
        if done {
            break;
        }
    }
    let turns: Vec<String> = events
        .iter()
        .filter_map(|event| match event {
            Event::TurnStarted { source, .. } => Some(format!("started({source})")),
            Event::TurnCompleted { source, .. } => Some(format!("completed({source})")),
            _ => None,
        })
        .collect();
    assert_eq!(turns, ["started(restored)", "completed(terminal_notification)"]);
    let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: pane.clone() }) else { panic!() };
    assert_eq!(detail.pane.activity, "idle");
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn a_start_the_last_host_did_not_finish_is_undone() {
    let mut host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &["sh", "-c", "exec sleep 1000"]));
    drop(conn);
    // As if the host had died between the keeper starting the process and
    // the record being written: the keeper holds a process no record names.
    host.kill_hard();
    std::fs::remove_file(host.state_dir.join("panes").join(format!("{}.json", pane.id))).unwrap();
    host.restart();

    let Response::Panes { panes } = host.connect(Encoding::Json).ok(Request::List { labels: Default::default() })
    else {
        panic!()
    };
    assert!(panes.is_empty(), "{panes:?}");
    let deadline = std::time::Instant::now() + WAIT;
    while process_exists(pane.pid) {
        assert!(std::time::Instant::now() < deadline, "the unrecorded process was left running");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let socket = host.state_dir.join("panes").join("keepers").join(format!("{}.sock", pane.id));
    while socket.exists() {
        assert!(std::time::Instant::now() < deadline, "its keeper never let it go");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(host.log().contains("a start the last host did not finish is undone"), "{}", host.log());
    host.stop();
}
