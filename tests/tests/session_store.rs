//! Session references captured from a CLI's own session store (qwen's here,
//! played by a stand-in that writes its store as the real one does), and
//! the restore that resumes exactly that session after a reboot. Two panes
//! that recorded the same session resume neither by it.

mod support;

use panehost_ipc::{Encoding, PaneSummary, Request, Response};
use support::*;

/// A stand-in for qwen: prints its argv, writes a session file named by a
/// new id (when `writes_session`), shows qwen's ready marker (its input
/// box's placeholder), then echoes its input.
fn stand_in(writes_session: bool) -> String {
    let write = if writes_session {
        "dir=\"$HOME/.qwen/projects/-work/chats\"; mkdir -p \"$dir\"; : > \"$dir/$(cat /proc/sys/kernel/random/uuid).jsonl\""
    } else {
        ":"
    };
    format!(
        "case \"$1\" in --version) echo 0.24.4; exit 0;; esac\necho \"qwen argv: [$*]\"\n{write}\necho 'ready; Type your message'\nwhile read line; do echo \"got $line\"; done"
    )
}

fn panes(conn: &mut Connection) -> Vec<PaneSummary> {
    match conn.ok(Request::List { labels: Default::default() }) {
        Response::Panes { panes } => panes,
        other => panic!("{other:?}"),
    }
}

/// The session reference the pane's record holds, once it holds one.
fn wait_for_recorded_reference(host: &TestHost, pane: &PaneSummary) -> String {
    let path = host.state_dir.join("panes").join(format!("{}.json", pane.id));
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let recorded = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
            .and_then(|record| record["native_reference"].as_str().map(str::to_owned));
        if let Some(reference) = recorded {
            return reference;
        }
        assert!(std::time::Instant::now() < deadline, "no reference recorded for {}: {}", pane.id, host.log());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// Kills the host, every keeper and every pane's process: a reboot.
fn reboot(host: &mut TestHost, started: &[PaneSummary]) {
    host.kill_hard();
    for keeper in keeper_pids(host) {
        kill(keeper);
    }
    for pane in started {
        kill_pane_process(host, pane.pid);
    }
    host.restart();
}

fn screen_shows(conn: &mut Connection, pane: &PaneSummary, wanted: &str) -> String {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: pane.id.clone() }) else { panic!() };
        if detail.screen.text.contains(wanted) {
            return detail.screen.text;
        }
        assert!(std::time::Instant::now() < deadline, "never showed {wanted:?}: {}", detail.screen.text);
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn a_reference_from_the_session_store_resumes_that_session_after_a_reboot() {
    let fake = FakeBin::new();
    fake.agent("qwen", &format!("#!/bin/sh\n{}", stand_in(true)));
    let mut host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("qwen", &[]));
    screen_shows(&mut conn, &pane, "ready");
    let reference = wait_for_recorded_reference(&host, &pane);
    let files: Vec<String> = std::fs::read_dir(host.home.join(".qwen/projects/-work/chats"))
        .unwrap()
        .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(files, [format!("{reference}.jsonl")], "the reference is the session the CLI wrote");
    drop(conn);

    reboot(&mut host, std::slice::from_ref(&pane));
    let mut conn = host.connect(Encoding::Json);
    let back = panes(&mut conn)
        .into_iter()
        .find(|listed| listed.id == pane.id)
        .unwrap_or_else(|| panic!("the pane is not back: {}", host.log()));
    assert_eq!((back.generation, back.restored_by.as_str()), (2, "native_reference"), "{back:?}");
    screen_shows(&mut conn, &back, &format!("--resume {reference}"));
    conn.ok(Request::Close { pane: back.id });
    host.stop();
}

#[test]
fn two_panes_that_recorded_one_session_resume_neither_by_it() {
    let fake = FakeBin::new();
    fake.agent("qwen", &format!("#!/bin/sh\n{}", stand_in(false)));
    let mut host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    let mut conn = host.connect(Encoding::Json);
    let first = conn.start(start_params("qwen", &[]));
    let second = conn.start(start_params("qwen", &[]));
    for pane in [&first, &second] {
        screen_shows(&mut conn, pane, "ready");
    }
    // One session appears in the store; neither pane can tell whose it is.
    let chats = host.home.join(".qwen/projects/-work/chats");
    std::fs::create_dir_all(&chats).unwrap();
    std::fs::write(chats.join("0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d.jsonl"), b"").unwrap();
    for pane in [&first, &second] {
        conn.type_line(&pane.id, "hello");
        screen_shows(&mut conn, pane, "got hello");
        assert_eq!(wait_for_recorded_reference(&host, pane), "0b1c2d3e-4f50-4a6b-8c7d-9e0f1a2b3c4d");
    }
    drop(conn);

    reboot(&mut host, &[first.clone(), second.clone()]);
    let mut conn = host.connect(Encoding::Json);
    let listed = panes(&mut conn);
    for pane in [&first, &second] {
        let back = listed.iter().find(|listed| listed.id == pane.id).expect("the pane is back");
        assert_eq!(back.restored_by, "provider_selection", "{back:?}");
        screen_shows(&mut conn, back, "--continue");
        conn.ok(Request::Close { pane: back.id.clone() });
    }
    let log = host.stop();
    assert!(log.contains("recorded by another pane too"), "the refusal is logged");
}
