//! One budget of memory for large answers, host-wide: clients that ask
//! for many large answers and read none of them hold that budget, not the
//! machine's memory. Every request still gets exactly one answer: its
//! answer once the budget has room, or `BUSY` after a wait.

mod support;

use panehost_ipc::{Encoding, ErrorCode, Request, Response};
use std::collections::HashSet;
use support::command::wait_for;
use support::*;

/// The peak resident memory of process `pid` (VmHWM), in KiB.
fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status.lines().find(|line| line.starts_with("VmHWM:")).expect("a VmHWM line");
    line.split_whitespace().nth(1).unwrap().parse().unwrap()
}

#[test]
fn unread_history_answers_hold_the_budget_not_the_machines_memory() {
    const CONNECTIONS: usize = 3;
    const REQUESTS: usize = 40;
    let host =
        TestHost::start_with_env(&[("PANEHOST_ANSWER_BUDGET_BYTES", "33554432"), ("PANEHOST_RING_BYTES", "1048576")]);
    let mut conn = host.connect(Encoding::Json);
    // The largest pane, its ring full of lines.
    let params = panehost_ipc::StartParams {
        size: Some(panehost_ipc::Size { cols: 1000, rows: 250 }),
        ..start_params("shell", &["sh", "-c", "seq 1 200000; echo filled; exec sleep 1000"])
    };
    let pane = conn.start(params).id;
    wait_for("the ring to fill", || match conn.ok(Request::Inspect { pane: pane.clone() }) {
        Response::Inspected(detail) if detail.screen.text.contains("filled") => Ok(()),
        Response::Inspected(detail) => Err(detail.screen.offset.to_string()),
        other => panic!("{other:?}"),
    });
    let before = host.rss_kib();

    // Each connection asks for every line, many times, and reads nothing.
    let mut clients: Vec<(Connection, HashSet<u64>)> = (0..CONNECTIONS)
        .map(|_| {
            let mut client = host.connect(Encoding::Json);
            let asked = (0..REQUESTS)
                .map(|_| client.send(Request::History { pane: pane.clone(), lines: Some(1_000_000) }))
                .collect();
            (client, asked)
        })
        .collect();
    // The clients read now; every request has exactly one answer.
    let (mut answered, mut busy) = (0, 0);
    for (client, asked) in &mut clients {
        while !asked.is_empty() {
            let (id, answer) = client.next_answer();
            assert!(asked.remove(&id), "an answer to request {id}, which was not asked or was answered already");
            match answer {
                Ok(Response::History(history)) => {
                    assert!(history.text.contains("filled"), "the last lines");
                    answered += 1;
                }
                Err(error) if error.code == ErrorCode::Busy.as_str() => busy += 1,
                other => panic!("{other:?}"),
            }
        }
    }
    assert!(answered > 0, "some were answered ({busy} busy)");
    // A history of this pane builds a scratch model of about 25 MiB: the
    // budget lets one at a time be built and written. Without it the
    // host held all 120 at once (gigabytes).
    let peak = peak_rss_kib(host.pid());
    assert!(
        peak < before + 200 * 1024,
        "peak {peak} KiB against {before} KiB before ({answered} answered, {busy} busy)"
    );
    drop(clients);
    conn.ok(Request::Close { pane });
    host.stop();
}
