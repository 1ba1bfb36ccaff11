//! Reconnect, exactly: replay from the ring, snapshot past it, and a
//! changed generation, each checked byte for byte.

mod support;

use panehost_ipc::{Encoding, Event, Request, Response, StreamStart};
use support::*;

/// Starts a fixture agent and has it print `lines` lines, then waits for
/// the pane's output to settle at the prompt. Returns the pane and the
/// whole output so far.
fn pane_with_output(conn: &mut Connection, flood_bytes: u64) -> (panehost_ipc::PaneId, Transcript) {
    let pane = conn.start(start_params("fixture", &[])).id;
    let (sub, mut transcript) = conn.follow_from_start_until(&pane, "fixture> ");
    conn.type_line(&pane, &format!("/flood {flood_bytes}"));
    conn.follow_until(sub, &mut transcript, |t| t.text().ends_with("flood done\r\nfixture> "));
    conn.ok(Request::Unsubscribe { subscription: sub });
    (pane, transcript)
}

#[test]
fn reconnect_inside_the_ring_replays_exactly_the_missing_bytes() {
    let host = TestHost::start();
    let mut first = host.connect(Encoding::Bincode);
    let (pane, full) = pane_with_output(&mut first, 200_000);
    assert!(full.start == 0 && full.bytes.len() > 200_000);

    // A client that processed output up to an arbitrary offset, then lost
    // its connection, reconnects from there.
    let processed = 123_457u64;
    drop(first);
    let mut second = host.connect(Encoding::Json);
    let Response::Subscribed(subscription) =
        second.ok(Request::Reconnect { pane: pane.clone(), generation: 1, offset: processed })
    else {
        panic!()
    };
    assert_eq!(subscription.start, StreamStart::Replay { from: processed });
    let mut replay = Transcript::from(processed);
    second.follow_until(subscription.subscription, &mut replay, |t| t.end() == full.end());
    assert_eq!(replay.bytes, full.bytes[processed as usize..], "no gap, no duplicate");

    // Live output continues seamlessly after the replay.
    second.type_line(&pane, "after reconnect");
    second.follow_until_text(subscription.subscription, &mut replay, "answer: tcennocer retfa");
    second.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn reconnect_older_than_the_ring_gets_a_snapshot_and_an_explicit_gap() {
    let host = TestHost::start_with_env(&[("PANEHOST_RING_BYTES", "65536")]);
    let mut conn = host.connect(Encoding::Bincode);
    let (pane, full) = pane_with_output(&mut conn, 300_000);
    let Response::Subscribed(subscription) =
        conn.ok(Request::Reconnect { pane: pane.clone(), generation: 1, offset: 10 })
    else {
        panic!()
    };
    let StreamStart::Snapshot { snapshot, skipped_from } = subscription.start else {
        panic!("{:?}", subscription.start)
    };
    assert_eq!(skipped_from, Some(10));
    // With so small a ring even the first subscriber may have been resynced:
    // `full` holds the output from `full.start` on.
    assert!(snapshot.offset >= full.start && snapshot.offset <= full.end());
    // The screen describes its own offset, which may trail the end.
    assert!(snapshot.text.contains("flood 0"), "{}", snapshot.text);
    // Output after the snapshot is exactly the original bytes from its offset.
    let mut rest = Transcript::from(snapshot.offset);
    conn.follow_until(subscription.subscription, &mut rest, |t| t.end() == full.end());
    assert_eq!(rest.bytes, full.bytes[(snapshot.offset - full.start) as usize..]);
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn reconnect_to_another_generation_is_told_so() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    let Response::Subscribed(subscription) =
        conn.ok(Request::Reconnect { pane: pane.clone(), generation: 7, offset: 0 })
    else {
        panic!()
    };
    assert_eq!(subscription.generation, 1);
    assert!(
        matches!(subscription.start, StreamStart::GenerationChanged { previous: 7, .. }),
        "{:?}",
        subscription.start
    );
    let err = conn.call(Request::Events { pane: pane.clone(), from: Some(1 << 40) }).unwrap_err();
    assert_eq!(err.code, "OFFSET_OUT_OF_RANGE");
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn two_clients_on_one_pane_see_the_same_bytes() {
    let host = TestHost::start();
    let mut a = host.connect(Encoding::Bincode);
    let mut b = host.connect(Encoding::Bincode);
    let pane = a.start(start_params("fixture", &[])).id;
    let sub_a = a.subscribe(&pane, Some(0)).subscription;
    let sub_b = b.subscribe(&pane, Some(0)).subscription;
    let (mut out_a, mut out_b) = (Transcript::from(0), Transcript::from(0));
    a.follow_until_text(sub_a, &mut out_a, "fixture> ");
    b.type_line(&pane, "/flood 500000");
    a.follow_until_text(sub_a, &mut out_a, "flood done\r\nfixture> ");
    b.follow_until_text(sub_b, &mut out_b, "flood done\r\nfixture> ");
    assert_eq!(out_a.bytes, out_b.bytes);
    a.ok(Request::Close { pane });
    b.follow_to_end(sub_b, &mut out_b);
    assert!(matches!(out_b.events.last(), Some(Event::Ended { .. })));
    host.stop();
}

#[test]
fn json_and_bincode_clients_see_identical_event_sequences() {
    let host = TestHost::start();
    let mut json = host.connect(Encoding::Json);
    let mut bincode = host.connect(Encoding::Bincode);
    let pane =
        json.start(start_params("shell", &["sh", "-c", "printf 'caf\\303\\251 \\033[31mred\\033[0m\\n'; exit 3"])).id;
    let sub_json = json.subscribe(&pane, Some(0)).subscription;
    let sub_bincode = bincode.subscribe(&pane, Some(0)).subscription;
    let (mut seen_json, mut seen_bincode) = (Transcript::from(0), Transcript::from(0));
    json.follow_to_end(sub_json, &mut seen_json);
    bincode.follow_to_end(sub_bincode, &mut seen_bincode);
    assert!(seen_json.text().contains("café"));
    // Output may be split into events differently; everything else is identical.
    let shape = |t: &Transcript| -> Vec<Event> {
        t.events.iter().filter(|e| !matches!(e, Event::Output { .. })).cloned().collect()
    };
    assert_eq!(seen_json.bytes, seen_bincode.bytes);
    assert_eq!(shape(&seen_json), shape(&seen_bincode));
    json.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn a_ring_smaller_than_one_read_still_takes_a_flood() {
    // A 1 KiB ring is smaller than the reader's buffer, idle or grown: a
    // read may bring more than the ring holds, and the reader must not
    // wait for the terminal model to parse bytes that do not exist yet.
    let host = TestHost::start_with_env(&[("PANEHOST_RING_BYTES", "1024")]);
    let mut conn = host.connect(Encoding::Json);
    let script = "head -c 300000 /dev/zero | tr '\\0' x; echo; echo flood-end; read x";
    let pane = conn.start(start_params("shell", &["sh", "-c", script])).id;
    support::command::wait_for("the screen to show the flood's end", || {
        match conn.ok(Request::Inspect { pane: pane.clone() }) {
            Response::Inspected(detail) if detail.screen.text.contains("flood-end") => Ok(()),
            Response::Inspected(detail) => Err(detail.screen.text),
            other => panic!("inspect answered {other:?}"),
        }
    });
    conn.ok(Request::Close { pane });
    host.stop();
}
