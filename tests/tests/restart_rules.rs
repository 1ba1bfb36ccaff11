//! What a restarted host does with each pane's promises: the wall-time
//! limit still holds, and a one-shot command is not run a second time
//! unless the start asked for that.

mod support;

use panehost_ipc::{Encoding, Event, PaneState, Request, Response, StartParams, StreamStart};
use support::command::wait_for;
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

/// The most bytes one read of a quiet pane's PTY takes (the reader's
/// buffer while output is slow): a host killed with such a read in hand
/// lost it, and the next host leaves a hole of at most this for it.
const QUIET_READ: u64 = 4096;

#[test]
fn after_a_crash_a_follower_resumes_where_it_was_and_gets_every_line() {
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
    // The new host holds every byte the old one had read, at the same
    // offsets: the follower goes on where it was. Only a read the old host
    // had in hand when it was killed is gone, announced as a gap no larger
    // than that read.
    let base = match &resumed.start {
        StreamStart::Replay { from } => *from,
        StreamStart::Snapshot { snapshot, skipped_from: Some(skipped) } => {
            assert_eq!(*skipped, seen.end());
            assert!(snapshot.offset - skipped <= QUIET_READ, "a gap of more than one read: {:?}", resumed.start);
            snapshot.offset
        }
        other => panic!("{other:?}"),
    };
    assert!(base >= seen.end());
    let mut after = Transcript::from(base);
    let target = format!("line-{}\r\n", while_away + 5);
    conn.follow_until_text(resumed.subscription, &mut after, &target);
    let mut all = seen.text();
    all.push_str(&after.text());
    let numbers = line_numbers(&all);
    let missing = numbers.windows(2).filter(|pair| pair[1] != pair[0] + 1).count();
    if base == seen.end() {
        assert_eq!(missing, 0, "every line once, in order: {numbers:?}");
    }
    assert!(numbers.windows(2).all(|pair| pair[1] > pair[0]), "no line twice: {numbers:?}");
    // What the follower received is byte for byte what the host holds.
    let replay = conn.subscribe(&pane, Some(base));
    assert_eq!(replay.start, StreamStart::Replay { from: base });
    let mut held = Transcript::from(base);
    conn.follow_until(replay.subscription, &mut held, |held| held.end() >= after.end());
    assert_eq!(held.bytes[..after.bytes.len()], after.bytes[..]);
    // And what was printed before the crash is still there to replay.
    let from_start = conn.subscribe(&pane, Some(0));
    assert_eq!(from_start.start, StreamStart::Replay { from: 0 });
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

/// What a follower of numbered lines was handed: every line number in
/// order, and every gap the host announced (at a reconnect or mid-stream).
#[derive(Default)]
struct Numbered {
    numbers: Vec<u64>,
    /// Bytes of the line being received.
    partial: Vec<u8>,
    gaps: Vec<(u64, u64)>,
    cursor: u64,
}

impl Numbered {
    fn take(&mut self, event: Event) {
        match event {
            Event::Output { offset, data } => {
                assert_eq!(offset, self.cursor, "output goes on exactly where it left off");
                self.cursor += data.len() as u64;
                for byte in data.as_slice() {
                    if *byte == b'\n' {
                        let line = String::from_utf8_lossy(&self.partial).trim_end().to_owned();
                        if let Some(number) = line.strip_prefix("n-").and_then(|n| n.parse().ok()) {
                            self.numbers.push(number);
                        }
                        self.partial.clear();
                    } else {
                        self.partial.push(*byte);
                    }
                }
            }
            Event::Resync { skipped_from, snapshot } => self.gap(skipped_from, snapshot.offset),
            _ => {}
        }
    }

    fn gap(&mut self, from: u64, to: u64) {
        assert_eq!(from, self.cursor);
        self.gaps.push((from, to));
        self.cursor = to;
        self.partial.clear();
    }

    fn last(&self) -> u64 {
        self.numbers.last().copied().unwrap_or(0)
    }
}

/// A follower from offset 0 of a pane printing 20,000 numbered lines, the
/// host killed with SIGKILL three times while they flow: the stream
/// resumes with a replay at the offset the follower had reached, offsets go
/// on where they were, and every line arrives once, in order. Before the
/// ring outlived the host, every restart began with a snapshot and a gap
/// up to the next reserved offset (about 1 MiB further), though nothing
/// was lost. Only a read the killed host had in hand may be gone: it is
/// announced as a gap no larger than that read (64 KiB at most), and no
/// line outside a gap is missing. What was printed before the restarts can
/// still be replayed from offset 0.
#[test]
fn a_follower_sees_every_line_once_across_three_killed_hosts() {
    let mut host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    // The last 500 lines wait for the test (for `go`): printed before the
    // last kill, they could all be in the read that host had in hand, and
    // with them the gap would swallow the end the follower waits for (a
    // loaded machine once: 20 s with no event).
    let go = host.home.join("go");
    let script = format!(
        "i=0; while [ $i -lt 20000 ]; do i=$((i+1)); echo n-$i; \
         if [ $i -eq 19500 ]; then while [ ! -e '{}' ]; do sleep 0.02; done; fi; done; \
         echo all-printed; exec sleep 1000",
        go.display()
    );
    let pane = conn.start(start_params("shell", &["sh", "-c", &script])).id;
    let mut subscription = conn.subscribe(&pane, Some(0)).subscription;
    let mut seen = Numbered::default();
    let follow = |conn: &mut Connection, subscription: u64, seen: &mut Numbered, until: u64| {
        while seen.last() < until {
            let (id, event) = conn.next_event();
            if id == subscription {
                seen.take(event);
            }
        }
    };
    for kill_after in [2_000, 7_000, 12_000] {
        follow(&mut conn, subscription, &mut seen, kill_after);
        drop(conn);
        host.kill_hard();
        host.restart();
        conn = host.connect(Encoding::Json);
        let resumed = reconnect(&mut conn, &pane, seen.cursor);
        match &resumed.start {
            StreamStart::Replay { from } => assert_eq!(*from, seen.cursor),
            StreamStart::Snapshot { snapshot, skipped_from: Some(skipped) } => seen.gap(*skipped, snapshot.offset),
            other => panic!("{other:?}"),
        }
        subscription = resumed.subscription;
    }
    std::fs::write(&go, "").unwrap();
    follow(&mut conn, subscription, &mut seen, 20_000);

    let numbers = &seen.numbers;
    assert!(numbers.windows(2).all(|pair| pair[1] > pair[0]), "no line twice, none out of order");
    for (from, to) in &seen.gaps {
        assert!(to - from <= 64 * 1024, "a gap larger than one read: {:?}", seen.gaps);
    }
    // Lines are missing only where a gap was announced, no more than its
    // bytes could hold (a line is at least 5 bytes).
    let missing = 20_000 - numbers.len() as u64;
    let gap_bytes: u64 = seen.gaps.iter().map(|(from, to)| to - from).sum();
    assert!(missing * 5 <= gap_bytes + 20, "{missing} lines missing across gaps {:?}", seen.gaps);
    if seen.gaps.is_empty() {
        assert_eq!(missing, 0);
    }
    // What was printed before the restarts is still held (a ring keeps one
    // hole at a time: what came before an older one went with it).
    let held_from = if seen.gaps.len() >= 2 { seen.gaps[seen.gaps.len() - 2].1 } else { 0 };
    let from_start = conn.subscribe(&pane, Some(held_from));
    assert_eq!(from_start.start, StreamStart::Replay { from: held_from });
    if held_from == 0 {
        let mut first = Transcript::from(0);
        conn.follow_until_text(from_start.subscription, &mut first, "n-3\r\n");
        assert!(first.text().starts_with("n-1\r\nn-2\r\n"), "{}", first.text());
    }
    conn.ok(Request::Close { pane });
    host.stop();
}

/// A record torn at a crash (cut short, as a full disk leaves it): the next
/// host moves it aside and still takes the pane back from its keeper, with
/// its process, its output and its screen, instead of ending it as a start
/// no record names.
#[test]
fn a_pane_whose_record_was_torn_is_taken_back_from_its_keeper() {
    let mut host = TestHost::start_with_env(&[("SHELL", "/bin/bash")]);
    std::fs::write(host.home.join(".bashrc"), "PS1='ready> '\n").unwrap();
    let mut conn = host.connect(Encoding::Json);
    let started = conn.start(start_params("shell", &[]));
    let pane = started.id.clone();
    conn.type_line(&pane, "echo before-the-tear");
    conn.follow_from_start_until(&pane, "before-the-tear\r\n");
    drop(conn);
    let end = wait_until_settled(&host, &pane);
    host.kill_hard();
    let record = host.state_dir.join("panes").join(format!("{pane}.json"));
    let bytes = std::fs::read(&record).unwrap();
    std::fs::write(&record, &bytes[..bytes.len() / 3]).unwrap();
    host.restart();

    let mut conn = host.connect(Encoding::Json);
    let summary = panes(&mut conn).into_iter().find(|summary| summary.id == pane).expect("the pane is taken back");
    assert_eq!(summary.pid, started.pid, "the same process");
    assert_eq!(summary.runtime, "shell", "the runtime read from what is left of the record");
    assert!(process_exists(started.pid));
    assert!(summary.offset >= end, "offsets go on from the ring's end");
    let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: pane.clone() }) else { panic!() };
    assert!(
        detail.screen.text.contains("before-the-tear"),
        "the screen is rebuilt from the output:\n{}",
        detail.screen.text
    );
    // What was printed before is still there to replay, and the pane works.
    let from_start = conn.subscribe(&pane, Some(0));
    assert_eq!(from_start.start, StreamStart::Replay { from: 0 });
    conn.type_line(&pane, "echo after-the-tear");
    let mut transcript = Transcript::from(0);
    conn.follow_until_text(from_start.subscription, &mut transcript, "after-the-tear\r\n");
    assert!(
        host.state_dir.join("panes").join(format!("{pane}.json.corrupt")).exists(),
        "the torn record is kept aside"
    );
    conn.ok(Request::Close { pane });
    host.stop();
}

/// Whether the pane's record says a close began.
fn record_says_closing(host: &TestHost, pane: &panehost_ipc::PaneId) -> Result<(), String> {
    let path = host.state_dir.join("panes").join(format!("{pane}.json"));
    let text = std::fs::read_to_string(&path).map_err(|err| format!("{}: {err}", path.display()))?;
    let record: serde_json::Value = serde_json::from_str(&text).map_err(|err| err.to_string())?;
    if record["closing"] == serde_json::Value::Bool(true) {
        Ok(())
    } else {
        Err(format!("the record does not say closing: {text}"))
    }
}

#[test]
fn a_close_a_killed_host_had_begun_is_finished_by_the_next_host() {
    let mut host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    // A process that ignores SIGHUP and SIGTERM: the close waits before
    // its SIGKILL, and the host is killed in that wait.
    let pane = conn.start(start_params("shell", &["sh", "-c", "trap '' HUP TERM; echo ready; exec sleep 1000"]));
    let subscription = conn.subscribe(&pane.id, Some(0)).subscription;
    let mut seen = Transcript::from(0);
    conn.follow_until_text(subscription, &mut seen, "ready");
    let mut closer = host.connect(Encoding::Json);
    closer.send(Request::Close { pane: pane.id.clone() });
    wait_for("the record to say the close began", || record_says_closing(&host, &pane.id));
    host.kill_hard();
    assert!(process_exists(pane.pid), "the process ended before the host was killed; the test proves nothing");
    host.restart();

    // The new host finishes the close: a follower resuming sees the pane
    // end `closed`, its process is gone, and it is not listed.
    let mut conn = host.connect(Encoding::Json);
    match conn.call(Request::Reconnect { pane: pane.id.clone(), generation: pane.generation, offset: seen.end() }) {
        Ok(Response::Subscribed(resumed)) => {
            let reason = loop {
                let (id, event) = conn.next_event();
                assert_eq!(id, resumed.subscription);
                if let Event::Ended { reason } = event {
                    break reason;
                }
            };
            assert_eq!(reason, "closed");
        }
        Ok(other) => panic!("{other:?}"),
        // The close may be over before the follower is back.
        Err(error) => assert_eq!(error.code, "UNKNOWN_PANE", "{error:?}"),
    }
    wait_for("the pane's process to end", || {
        if process_exists(pane.pid) {
            Err(format!("process {} still runs", pane.pid))
        } else {
            Ok(())
        }
    });
    wait_for("the pane to be gone from the list", || {
        let listed = panes(&mut conn);
        if listed.iter().any(|summary| summary.id == pane.id) {
            Err(format!("still listed: {listed:?}"))
        } else {
            Ok(())
        }
    });
    let error = conn.call(Request::Inspect { pane: pane.id.clone() }).unwrap_err();
    assert_eq!(error.message, format!("pane {} was closed", pane.id));
    host.stop();
}
