//! A pane's own drawing cannot make its answers or its record too big.
//!
//! A 1000x250 pane whose program draws every cell with a different
//! true-colour pen and a letter with nine combining marks: its screen
//! redraws in about 16 MB. Before the bound, `inspect` got its connection
//! closed (the snapshot was over the frame limit), the record grew to 21 MB
//! (over its 16 MiB limit), and at the next restart the record was moved
//! aside and the pane's process killed as an unfinished start.

mod support;

use panehost_ipc::{Encoding, PaneId, Request, Response, Size};
use support::command::wait_for;
use support::{process_exists, start_params, Connection, TestHost};

const DRAWING: &str = r#"import sys,time
A="\x1b[38;2;255;255;255;48;2;254;254;254;1;3;4;7m";B="\x1b[38;2;253;253;253;48;2;252;252;252;22;23;24;27m";c="\U0001D400"+"\u0301"*9
sys.stdout.write("".join("\x1b[%d;1H"%(r+1)+"".join((A if (r+i)%2==0 else B)+c for i in range(1000)) for r in range(250)));sys.stdout.write("\x1b[1;1Hdrawn");sys.stdout.flush();time.sleep(1e6)"#;

fn inspect(conn: &mut Connection, pane: &PaneId) -> panehost_ipc::PaneDetail {
    match conn.ok(Request::Inspect { pane: pane.clone() }) {
        Response::Inspected(detail) => detail,
        other => panic!("{other:?}"),
    }
}

/// The saved screen's offset in the pane's record, and the record's size.
fn recorded(host: &TestHost, pane: &PaneId) -> Option<(u64, u64)> {
    let path = host.state_dir.join("panes").join(format!("{pane}.json"));
    let bytes = std::fs::read(&path).ok()?;
    let record: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    Some((record["screen"]["offset"].as_u64()?, bytes.len() as u64))
}

#[test]
fn a_screen_too_big_to_redraw_in_a_frame_is_answered_trimmed_recorded_within_bounds_and_kept_at_restart() {
    let mut host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let mut params = start_params("shell", &["python3", "-c", DRAWING]);
    params.size = Some(Size { cols: 1000, rows: 250 });
    let started = conn.start(params);
    let pane = started.id.clone();

    // The whole drawing parsed: the screen shows its last word. Fifteen
    // megabytes for a screen this size take a loaded machine longer than
    // one wait; what must not happen is the parse standing still.
    let mut last = (0, std::time::Instant::now());
    let detail = loop {
        let detail = inspect(&mut conn, &pane);
        if detail.screen.text.starts_with("drawn") && detail.screen.offset == detail.pane.offset {
            break detail;
        }
        if detail.screen.offset != last.0 {
            last = (detail.screen.offset, std::time::Instant::now());
        }
        assert!(
            last.1.elapsed() < support::WAIT,
            "the screen stood at {} of {} for {:?}",
            detail.screen.offset,
            detail.pane.offset,
            support::WAIT
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    // Answered, not a closed connection; marked as trimmed, within bounds.
    assert!(detail.screen.trimmed);
    assert!(detail.screen.formatted.len() <= panehost_ipc::screen::MAX_SNAPSHOT_FORMATTED_LEN);
    assert!(detail.screen.text.len() <= panehost_ipc::screen::MAX_SNAPSHOT_TEXT_LEN);
    // The same connection goes on serving.
    assert!(matches!(conn.ok(Request::List { labels: Default::default() }), Response::Panes { .. }));
    // The bincode encoding carries it too.
    let mut binary = host.connect(Encoding::Bincode);
    assert!(inspect(&mut binary, &pane).screen.trimmed);

    // The record saves that screen, within the record's bound.
    let end = detail.pane.offset;
    let (_, size) = wait_for("the record to save the drawn screen", || match recorded(&host, &pane) {
        Some((offset, size)) if offset == end => Ok((offset, size)),
        other => Err(format!("{other:?}")),
    });
    assert!(size < 16 * 1024 * 1024, "record of {size} bytes");

    // A restart takes the pane back from its keeper: same pid, still running.
    host.kill_hard();
    host.restart();
    let mut conn = host.connect(Encoding::Json);
    let after = inspect(&mut conn, &pane);
    assert_eq!((after.pane.pid, after.pane.restored_by.as_str()), (started.pid, "keeper"));
    assert!(process_exists(started.pid));
    assert!(!host.log().contains("unreadable pane record"), "{}", host.log());
    conn.ok(Request::Close { pane });
    host.stop();
}
