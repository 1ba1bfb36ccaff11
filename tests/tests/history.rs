//! `history`: a pane's older lines, re-parsed from the output its ring
//! holds (the live terminal model keeps no scrollback).

mod support;

use panehost_ipc::{Encoding, PaneHistory, PaneState, Request, Response};
use support::command::{wait_for, Cli};
use support::*;

fn history(conn: &mut Connection, pane: &panehost_ipc::PaneId, lines: Option<u32>) -> PaneHistory {
    match conn.ok(Request::History { pane: pane.clone(), lines }) {
        Response::History(history) => history,
        other => panic!("history answered {other:?}"),
    }
}

/// Starts `seq 1 COUNT` in an 80x24 pane and waits until it has exited
/// (every byte of its output is in the ring by then).
fn finished_seq(conn: &mut Connection, count: u32) -> panehost_ipc::PaneId {
    let pane = conn.start(start_params("shell", &["seq", "1", &count.to_string()])).id;
    wait_for("the pane to exit", || {
        let Response::Panes { panes } = conn.ok(Request::List { labels: Default::default() }) else {
            panic!("list answered otherwise")
        };
        match panes.iter().find(|summary| summary.id == pane) {
            Some(summary) if matches!(summary.state, PaneState::Exited(_)) => Ok(()),
            other => Err(format!("{other:?}")),
        }
    });
    pane
}

#[test]
fn lines_that_scrolled_off_come_back_in_order() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = finished_seq(&mut conn, 3000);

    let all = history(&mut conn, &pane, Some(5000));
    let expected: Vec<String> = (1..=3000).map(|n| n.to_string()).collect();
    assert_eq!(all.text.lines().collect::<Vec<_>>(), expected);
    assert_eq!(all.from, 0);
    assert!(!all.truncated, "the ring holds every byte and every line was asked for");

    // 100 lines from above the screen, then the screen (23 lines and the
    // empty row the last newline left).
    let some = history(&mut conn, &pane, Some(100));
    let expected: Vec<String> = (2878..=3000).map(|n| n.to_string()).collect();
    assert_eq!(some.text.lines().collect::<Vec<_>>(), expected);
    assert!(some.truncated);
    assert_eq!(some.to, all.to);
    host.stop();
}

#[test]
fn a_ring_that_dropped_output_says_so() {
    let host = TestHost::start_with_env(&[("PANEHOST_RING_BYTES", "4096")]);
    let mut conn = host.connect(Encoding::Bincode);
    let pane = finished_seq(&mut conn, 3000);
    let held = history(&mut conn, &pane, None);
    assert!(held.truncated);
    assert!(held.from > 0);
    assert_eq!(held.to - held.from, 4096);
    assert_eq!(held.text.lines().last(), Some("3000"));
    host.stop();
}

#[test]
fn history_of_an_unknown_pane_is_refused() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let err = conn.call(Request::History { pane: panehost_ipc::PaneId("p00000000".into()), lines: None }).unwrap_err();
    assert_eq!(err.code, "UNKNOWN_PANE");
    host.stop();
}

#[test]
fn the_command_prints_the_history() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = finished_seq(&mut conn, 500);
    let cli = Cli::for_host(&host);
    let text = cli.ok(&["history", pane.as_str(), "--lines", "1000"]);
    let expected: Vec<String> = (1..=500).map(|n| n.to_string()).collect();
    assert_eq!(text.lines().collect::<Vec<_>>(), expected);
    let answer: PaneHistory = cli.answer(&["history", pane.as_str(), "--json"]);
    assert_eq!((&answer.pane, answer.from, answer.truncated), (&pane, 0, false));
    assert_eq!(answer.text.lines().collect::<Vec<_>>(), expected);
    // --lines cut them: every line is still held, and the note says so.
    let cut = cli.run(&["history", pane.as_str(), "--lines", "5"]);
    assert!(cut.status.success(), "{cut:?}");
    assert!(!cut.stderr.contains("not held"), "{cut:?}");
    assert!(cut.stderr.contains("left out: 5 lines above the screen were asked for"), "{cut:?}");
    host.stop();
}

#[test]
fn the_command_says_when_the_ring_no_longer_holds_older_lines() {
    let host = TestHost::start_with_env(&[("PANEHOST_RING_BYTES", "4096")]);
    let mut conn = host.connect(Encoding::Json);
    let pane = finished_seq(&mut conn, 3000);
    let outcome = Cli::for_host(&host).run(&["history", pane.as_str()]);
    assert!(outcome.status.success(), "{outcome:?}");
    assert!(outcome.stderr.contains("older lines are not held"), "{outcome:?}");
    host.stop();
}
