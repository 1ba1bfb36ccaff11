//! Durable panes: a host killed with SIGKILL takes its panes back when it
//! restarts, through their keepers; a pane whose keeper is gone comes back
//! through its runtime's native resume; a corrupt record harms no one.

mod support;

use panehost_ipc::{Encoding, PaneId, PaneState, Request, Response, StreamStart};
use support::*;

fn panes(conn: &mut Connection) -> Vec<panehost_ipc::PaneSummary> {
    match conn.ok(Request::List { labels: Default::default() }) {
        Response::Panes { panes } => panes,
        other => panic!("{other:?}"),
    }
}

fn reconnect(conn: &mut Connection, pane: &PaneId, generation: u64, offset: u64) -> panehost_ipc::Subscription {
    match conn.ok(Request::Reconnect { pane: pane.clone(), generation, offset }) {
        Response::Subscribed(subscription) => subscription,
        other => panic!("{other:?}"),
    }
}

#[test]
fn panes_survive_a_killed_host_with_the_same_id_generation_and_pid() {
    let mut host = TestHost::start();
    let mark = host.dir.path().join("written-while-away");
    let go = host.dir.path().join("go");
    let mut conn = host.connect(Encoding::Bincode);
    let fixture = conn.start(start_params("fixture", &[]));
    let sub = conn.subscribe(&fixture.id, Some(0)).subscription;
    let mut seen = Transcript::from(0);
    conn.follow_until_text(sub, &mut seen, "fixture> ");
    conn.type_line(&fixture.id, "before the crash");
    conn.follow_until_text(sub, &mut seen, "answer: hsarc eht erofeb");
    // A process that writes once told to (after the host is gone), and
    // says when it has.
    let script = format!(
        "while [ ! -e {go} ]; do sleep 0.05; done; echo written-while-away; touch {mark}; read line; echo got-$line",
        go = go.display(),
        mark = mark.display()
    );
    let writer = conn.start(start_params("shell", &["sh", "-c", &script]));
    // The host saves each pane's screen, and its exact end, once its
    // output settles; the client has all of it.
    let quiet_end = wait_until_settled(&host, &fixture.id);
    conn.follow_until(sub, &mut seen, |seen| seen.end() >= quiet_end);
    drop(conn);

    host.kill_hard();
    std::fs::write(&go, b"").unwrap();
    let deadline = std::time::Instant::now() + WAIT;
    while !mark.exists() {
        assert!(std::time::Instant::now() < deadline, "the writer never wrote");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(process_exists(fixture.pid) && process_exists(writer.pid), "the processes outlive the host");
    host.restart();

    let mut conn = host.connect(Encoding::Json);
    let listed = panes(&mut conn);
    for before in [&fixture, &writer] {
        let after = listed.iter().find(|pane| pane.id == before.id).expect("the pane is back");
        assert_eq!((after.generation, after.pid, after.restored_by.as_str()), (1, before.pid, "keeper"), "{after:?}");
        assert_eq!(after.state, PaneState::Running);
    }

    // The fixture was quiet when the host died, and its exact end was on
    // disk: its client comes back with the offset it had processed and
    // misses nothing.
    let back = listed.iter().find(|pane| pane.id == fixture.id).unwrap();
    assert_eq!(back.offset, quiet_end, "a quiet pane keeps its offsets across a crash");
    let subscription = reconnect(&mut conn, &fixture.id, 1, seen.end());
    assert_eq!(subscription.start, StreamStart::Replay { from: seen.end() });
    let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: fixture.id.clone() }) else { panic!() };
    assert!(
        detail.screen.text.contains("answer: hsarc eht erofeb"),
        "the saved screen is restored: {}",
        detail.screen.text
    );
    let mut after = Transcript::from(seen.end());
    conn.type_line(&fixture.id, "after the crash");
    conn.follow_until_text(subscription.subscription, &mut after, "answer: hsarc eht retfa");

    // What the writer wrote while no host ran waited in its terminal: the
    // restarted host reads it, and a client that had all the writer's
    // output before the crash receives it as output.
    let writer_sub = reconnect(&mut conn, &writer.id, 1, writer.offset);
    assert_eq!(writer_sub.start, StreamStart::Replay { from: writer.offset });
    let mut written = Transcript::from(writer.offset);
    conn.follow_until_text(writer_sub.subscription, &mut written, "written-while-away");
    conn.type_line(&writer.id, "x");
    conn.follow_until_text(writer_sub.subscription, &mut written, "got-x");

    for pane in [fixture.id, writer.id] {
        conn.ok(Request::Close { pane });
    }
    assert!(!process_exists(fixture.pid));
    host.stop();
}

#[test]
fn a_pane_whose_keeper_is_gone_comes_back_through_native_resume() {
    let mut host = TestHost::start();
    let mut conn = host.connect(Encoding::Bincode);
    let fixture = conn.start(start_params("fixture", &[]));
    let sub = conn.subscribe(&fixture.id, Some(0)).subscription;
    let mut seen = Transcript::from(0);
    conn.follow_until_text(sub, &mut seen, "fixture> ");
    conn.type_line(&fixture.id, "remember me");
    conn.follow_until_text(sub, &mut seen, "answer: em rebmemer");
    let shell = conn.start(start_params("shell", &[]));
    drop(conn);
    wait_for_saved_screen(&host, &fixture.id, seen.end());

    host.kill_hard();
    // A reboot, as far as these panes know: keepers and processes gone.
    for keeper in keeper_pids(&host) {
        kill(keeper);
    }
    for pid in [fixture.pid, shell.pid] {
        kill_pane_process(&host, pid);
    }
    host.restart();

    let mut conn = host.connect(Encoding::Json);
    let listed = panes(&mut conn);
    let restored = listed.iter().find(|pane| pane.id == fixture.id).expect("the fixture pane is back");
    assert_eq!(restored.generation, 2);
    assert_ne!(restored.pid, fixture.pid);
    // The host captured the session's reference from the fixture's output,
    // so it resumes exactly that session.
    assert_eq!(restored.restored_by, "native_reference", "{restored:?}");
    let shell_back = listed.iter().find(|pane| pane.id == shell.id).expect("the shell pane is back");
    assert_eq!(
        (shell_back.generation, shell_back.restored_by.as_str()),
        (2, "fresh"),
        "shell declares HOST_LOSS_RESTARTS_FRESH"
    );

    // A client of the first generation is told the process was replaced.
    let subscription = reconnect(&mut conn, &fixture.id, 1, seen.end());
    let StreamStart::GenerationChanged { previous, snapshot } = subscription.start else {
        panic!("{:?}", subscription.start)
    };
    assert_eq!(previous, 1);
    assert!(snapshot.offset > seen.end(), "offsets continue across generations");
    // The resumed session redraws the earlier conversation.
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: fixture.id.clone() }) else { panic!() };
        if detail.screen.text.contains("prompt: remember me") {
            break;
        }
        assert!(std::time::Instant::now() < deadline, "the earlier conversation never showed: {}", detail.screen.text);
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    for pane in [fixture.id, shell.id] {
        conn.ok(Request::Close { pane });
    }
    host.stop();
}

#[test]
fn a_corrupt_record_is_reported_and_skipped() {
    let mut host = TestHost::start();
    let mut conn = host.connect(Encoding::Bincode);
    let pane = conn.start(start_params("shell", &[])).id;
    drop(conn);
    host.kill_hard();
    let records = host.state_dir.join("panes");
    std::fs::write(records.join("pbroken.json"), b"{\"version\": 1, \"id\": tor").unwrap();
    std::fs::write(records.join("pother.json"), b"").unwrap();
    host.restart();
    let mut conn = host.connect(Encoding::Json);
    assert!(panes(&mut conn).iter().any(|p| p.id == pane), "the good pane is back");
    assert!(records.join("pbroken.json.corrupt").exists());
    conn.ok(Request::Close { pane });
    let log = host.stop();
    assert!(log.contains("unreadable pane record"), "reported in the log");
}

/// Waits until the pane's record holds a screen at or after `offset`.
fn wait_for_saved_screen(host: &TestHost, pane: &PaneId, offset: u64) {
    let path = host.state_dir.join("panes").join(format!("{pane}.json"));
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let saved = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
            .and_then(|record| record["screen"]["offset"].as_u64());
        if saved.is_some_and(|saved| saved >= offset) {
            return;
        }
        assert!(std::time::Instant::now() < deadline, "no screen saved for {pane}");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn an_upgrade_hands_the_panes_to_the_next_host() {
    let mut host = TestHost::start();
    let mut conn = host.connect(Encoding::Bincode);
    let shell = conn.start(start_params("shell", &[]));
    drop(conn);
    // SIGQUIT: the host exits and leaves its panes to their keepers.
    host.signal_and_wait("-QUIT");
    assert!(process_exists(shell.pid));
    host.restart();
    let mut conn = host.connect(Encoding::Json);
    let back = panes(&mut conn).into_iter().find(|pane| pane.id == shell.id).expect("the pane is back");
    assert_eq!((back.pid, back.generation, back.restored_by.as_str()), (shell.pid, 1, "keeper"));
    conn.ok(Request::Close { pane: shell.id });
    host.stop();
}
