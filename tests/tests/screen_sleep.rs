//! A quiet pane's terminal model sleeps (it is dropped) and is rebuilt
//! exactly from the ring when it is needed again.

mod support;

use panehost_ipc::{Encoding, Event, PaneId, Request, Response, ScreenSnapshot};
use support::command::wait_for;
use support::*;

fn inspect(conn: &mut Connection, pane: &PaneId) -> ScreenSnapshot {
    match conn.ok(Request::Inspect { pane: pane.clone() }) {
        Response::Inspected(detail) => detail.screen,
        other => panic!("inspect answered {other:?}"),
    }
}

fn screen_showing(conn: &mut Connection, pane: &PaneId, text: &str) -> ScreenSnapshot {
    wait_for(&format!("the screen to show {text:?}"), || {
        let screen = inspect(conn, pane);
        if screen.text.contains(text) {
            Ok(screen)
        } else {
            Err(screen.text)
        }
    })
}

fn logged(host: &TestHost, pane: &PaneId, what: &str) -> usize {
    host.log().lines().filter(|line| line.contains(what) && line.contains(pane.as_str())).count()
}

fn wait_until_asleep(host: &TestHost, pane: &PaneId, times: usize) {
    wait_for("the terminal model to sleep", || {
        let count = logged(host, pane, "terminal model asleep");
        if count >= times {
            Ok(())
        } else {
            Err(format!("asleep {count} times"))
        }
    });
}

#[test]
fn a_woken_screen_is_the_screen_that_fell_asleep() {
    let host = TestHost::start_with_env(&[("PANEHOST_SCREEN_SLEEP_MS", "100")]);
    let mut conn = host.connect(Encoding::Bincode);
    let script =
        r#"printf '\033]2;T1\007\033[31m\033[1;1HTOP\033[?2004h\033[m'; read x; printf '\033[5;1Hafter'; read y"#;
    let pane = conn.start(start_params("shell", &["sh", "-c", script])).id;
    let before = screen_showing(&mut conn, &pane, "TOP");

    wait_until_asleep(&host, &pane, 1);
    let woken = inspect(&mut conn, &pane);
    assert_eq!(woken, before, "the rebuilt screen is exactly the one that slept");
    assert!(logged(&host, &pane, "terminal model woken") >= 1);

    // It goes on from there.
    wait_until_asleep(&host, &pane, 2);
    conn.type_line(&pane, "");
    let after = screen_showing(&mut conn, &pane, "after");
    assert_eq!(after.text.lines().next(), Some("TOP"));
    assert_eq!(after.title, "T1");
    assert!(after.modes.bracketed_paste);
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn output_that_would_push_out_what_rebuilds_a_sleeping_screen_wakes_it_first() {
    let host = TestHost::start_with_env(&[("PANEHOST_SCREEN_SLEEP_MS", "100"), ("PANEHOST_RING_BYTES", "4096")]);
    let mut conn = host.connect(Encoding::Json);
    // After the Enter (not echoed), one write (cat of a file) of 90 rows
    // of 80 zeros, each drawn on row 10, so nothing scrolls and TOP, drawn
    // before the sleep, must stay. The host's first read of it fills the
    // ring at once.
    let script = r#"stty -echo; f=$(mktemp); printf '\033[10;1H%080d' $(seq 90) > "$f"; printf '\033[1;1HTOP'; read x; cat "$f"; rm "$f"; printf '\033[11;1Hdone'; read y"#;
    let pane = conn.start(start_params("shell", &["sh", "-c", script])).id;
    let top = screen_showing(&mut conn, &pane, "TOP");
    // Follow the output without asking for the screen, which would wake it.
    let subscription = conn.subscribe(&pane, Some(top.offset));
    let mut transcript = Transcript::from(top.offset);
    wait_until_asleep(&host, &pane, 1);
    // Raw input: a submitted line would look at the screen's modes first,
    // which wakes the model.
    conn.type_raw(&pane, "\n");
    // The ring holds less than the cat writes: the follower may fall
    // behind and be given the screen instead of the bytes it missed.
    conn.follow_until(subscription.subscription, &mut transcript, |t| {
        t.text().contains("done")
            || t.events.iter().any(|e| matches!(e, Event::Resync { snapshot, .. } if snapshot.text.contains("done")))
    });
    let screen = inspect(&mut conn, &pane);
    assert_eq!(screen.text.lines().next(), Some("TOP"), "screen:\n{}", screen.text);
    assert!(!conn_ring_holds_start(&mut conn, &pane), "the ring has moved past the model's origin");
    conn.ok(Request::Close { pane });
    host.stop();
}

/// Whether the ring still holds the pane's first output byte.
fn conn_ring_holds_start(conn: &mut Connection, pane: &PaneId) -> bool {
    match conn.ok(Request::History { pane: pane.clone(), lines: Some(1) }) {
        Response::History(history) => history.from == 0,
        other => panic!("history answered {other:?}"),
    }
}
