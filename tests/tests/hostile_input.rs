//! Inputs that once ended the host or froze a pane, each a test named after
//! what it guards: a client's frame, a size, a pane's output, a record on
//! disk, or a count without a limit. After each the host answers and every
//! other pane still runs.

mod support;

use panehost_ipc::{Encoding, ErrorBody, PaneId, PaneState, Request, Response, ServerMessage, Size};
use support::*;

/// A host with one running pane, and a check that both are still fine.
struct Witness {
    host: TestHost,
    pane: PaneId,
}

impl Witness {
    fn new(env: &[(&str, &str)]) -> Witness {
        let host = TestHost::start_with_env(env);
        let pane = host.connect(Encoding::Bincode).start(start_params("shell", &[])).id;
        Witness { host, pane }
    }

    fn assert_serving(&self) {
        let mut conn = self.host.connect(Encoding::Json);
        let Response::Panes { panes } = conn.ok(Request::List { labels: Default::default() }) else { panic!() };
        assert!(panes.iter().any(|pane| pane.id == self.pane && pane.state == PaneState::Running), "{panes:?}");
    }
}

fn code(result: Result<Response, ErrorBody>) -> String {
    result.expect_err("an error answer").code
}

#[test]
fn a_bincode_frame_claiming_a_huge_string_is_malformed_and_the_host_lives() {
    let witness = Witness::new(&[]);
    let mut conn = witness.host.connect(Encoding::Bincode);
    // id 1, `start`, a runtime string whose varint length claims 2^62 bytes.
    let huge_runtime: &[u8] = &[0x01, 0x00, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0x40];
    // id 1, `send` to pane "p", a text claiming 2^40 bytes.
    let huge_send: &[u8] = &[0x01, 0x01, 0x01, b'p', 0xfd, 0, 0, 0, 0, 0, 0x01, 0, 0, 0];
    for payload in [huge_runtime, huge_send] {
        write_frame(&mut conn.stream, payload);
        match conn.read() {
            ServerMessage::Error { id, error } => assert_eq!((id, error.code.as_str()), (Some(1), "MALFORMED_REQUEST")),
            other => panic!("{other:?}"),
        }
    }
    conn.ok(Request::List { labels: Default::default() });
    witness.assert_serving();
    witness.host.stop();
}

#[test]
fn sizes_out_of_bounds_are_refused_by_start_login_and_resize() {
    let witness = Witness::new(&[]);
    let mut conn = witness.host.connect(Encoding::Json);
    for size in [(65535, 65535), (2000, 2000), (1001, 10), (1000, 251), (1, 5), (80, 1), (0, 24)] {
        let size = Size { cols: size.0, rows: size.1 };
        let resize = conn.call(Request::Resize { pane: witness.pane.clone(), size });
        assert_eq!(code(resize), "INVALID_ARGUMENT", "resize to {size}");
        let mut start = start_params("shell", &[]);
        start.size = Some(size);
        assert_eq!(code(conn.call(Request::Start(start))), "INVALID_ARGUMENT", "start at {size}");
        let login = conn.call(Request::Login { runtime: "shell".into(), cwd: None, size: Some(size) });
        assert!(login.is_err(), "login at {size}");
    }
    // The largest sizes are taken, and cost what a model of that size costs.
    for size in [Size { cols: 1000, rows: 250 }, Size { cols: 500, rows: 500 }, Size::MIN] {
        let Response::Resized { size: resized, .. } = conn.ok(Request::Resize { pane: witness.pane.clone(), size })
        else {
            panic!()
        };
        assert_eq!(resized, size);
    }
    let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: witness.pane.clone() }) else { panic!() };
    assert_eq!(detail.pane.size, Size::MIN);
    assert!(witness.host.rss_kib() < 512 * 1024, "host at {} KiB", witness.host.rss_kib());
    witness.assert_serving();
    witness.host.stop();
}

#[test]
fn wide_characters_in_the_narrowest_pane_neither_freeze_it_nor_end_the_host() {
    let witness = Witness::new(&[]);
    let mut conn = witness.host.connect(Encoding::Json);
    // Wide characters, some at the right edge, some that scroll, then a
    // line that must still arrive.
    let script = "for i in 1 2 3 4 5 6 7 8 9 10; do printf '\\346\\274\\242a\\346\\274\\242\\r\\n'; done; \
                  printf '\\346\\274\\242'; echo; echo still-flowing";
    let mut start = start_params("shell", &["sh", "-c", script]);
    start.size = Some(Size::MIN);
    let pane = conn.start(start).id;
    let (_, transcript) = conn.follow_from_start_until(&pane, "still-flowing");
    assert!(transcript.text().contains("still-flowing"));
    conn.ok(Request::Inspect { pane: pane.clone() });
    let Response::History(history) = conn.ok(Request::History { pane: pane.clone(), lines: None }) else { panic!() };
    assert!(history.text.contains("flowing"), "{history:?}");
    witness.assert_serving();
    let log = witness.host.stop();
    assert!(!log.contains("failed; contained"), "the 2x2 model failed:\n{log}");
}

#[test]
fn a_host_holds_at_most_its_pane_limit_and_a_connection_its_subscription_limit() {
    let witness = Witness::new(&[("PANEHOST_MAX_PANES", "2"), ("PANEHOST_MAX_SUBSCRIPTIONS", "3")]);
    let mut conn = witness.host.connect(Encoding::Json);
    let second = conn.start(start_params("shell", &[])).id;
    let refused = conn.call(Request::Start(start_params("shell", &[]))).unwrap_err();
    assert_eq!(refused.code, "LIMIT_REACHED");
    assert!(refused.message.contains("PANEHOST_MAX_PANES"), "{}", refused.message);
    let login = conn.call(Request::Login { runtime: "shell".into(), cwd: None, size: None });
    assert!(login.is_err());
    conn.ok(Request::Close { pane: second });
    conn.start(start_params("shell", &[]));

    for _ in 0..3 {
        conn.subscribe(&witness.pane, None);
    }
    let refused = conn.call(Request::Events { pane: witness.pane.clone(), from: None }).unwrap_err();
    assert_eq!(refused.code, "LIMIT_REACHED");
    assert!(refused.message.contains("PANEHOST_MAX_SUBSCRIPTIONS"), "{}", refused.message);
    let refused = conn.call(Request::Reconnect { pane: witness.pane.clone(), generation: 1, offset: 0 }).unwrap_err();
    assert_eq!(refused.code, "LIMIT_REACHED");
    // Another connection has a limit of its own.
    witness.host.connect(Encoding::Bincode).subscribe(&witness.pane, None);
    conn.ok(Request::Unsubscribe { subscription: 1 });
    conn.subscribe(&witness.pane, None);
    witness.assert_serving();
    witness.host.stop();
}

/// The record file of `pane`, as JSON.
fn record_path(host: &TestHost, pane: &PaneId) -> std::path::PathBuf {
    host.state_dir.join("panes").join(format!("{pane}.json"))
}

#[test]
fn a_record_with_a_huge_size_is_repaired_and_bad_records_are_moved_aside_on_restart() {
    let mut witness = Witness::new(&[]);
    let mut conn = witness.host.connect(Encoding::Json);
    let sized = conn.start(start_params("shell", &[])).id;
    drop(conn);
    // Leave the panes with their keepers, as an upgrade does.
    witness.host.signal_and_wait("-QUIT");

    // A size an older host accepted, which would not fit in memory.
    let path = record_path(&witness.host, &sized);
    let mut record: serde_json::Value = serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    record["size"] = serde_json::json!({"cols": 65535, "rows": 65535});
    std::fs::write(&path, serde_json::to_vec(&record).unwrap()).unwrap();
    // Records no host could use: not JSON, a keeper socket outside the
    // keepers directory, an offset that would overflow.
    let panes = witness.host.state_dir.join("panes");
    std::fs::write(panes.join("p0badf000.json"), b"{\"version\":").unwrap();
    let mut elsewhere = record.clone();
    elsewhere["id"] = "p0badf001".into();
    elsewhere["keeper_socket"] = "/tmp/someone-elses.sock".into();
    std::fs::write(panes.join("p0badf001.json"), serde_json::to_vec(&elsewhere).unwrap()).unwrap();
    let mut overflowing = record.clone();
    overflowing["id"] = "p0badf002".into();
    overflowing["reserved_offset"] = serde_json::json!(u64::MAX);
    std::fs::write(panes.join("p0badf002.json"), serde_json::to_vec(&overflowing).unwrap()).unwrap();

    witness.host.restart();
    let mut conn = witness.host.connect(Encoding::Json);
    let Response::Panes { panes: listed } = conn.ok(Request::List { labels: Default::default() }) else { panic!() };
    let restored = listed.iter().find(|pane| pane.id == sized).expect("the pane with the huge size is back");
    assert_eq!(restored.size, Size { cols: 1000, rows: 250 });
    assert_eq!(restored.restored_by, "keeper");
    assert_eq!(listed.len(), 2, "{listed:?}");
    for bad in ["p0badf000", "p0badf001", "p0badf002"] {
        assert!(panes.join(format!("{bad}.json.corrupt")).exists(), "{bad} moved aside");
    }
    let log = witness.host.log();
    assert!(log.contains("is not a file in"), "{log}");
    assert!(log.contains("reserved offset 18446744073709551615 is out of range"), "{log}");
    assert!(log.contains("size 65535x65535 brought to 1000x250"), "{log}");
    // The repaired pane works.
    let subscription = conn.subscribe(&sized, None);
    let panehost_ipc::StreamStart::Snapshot { snapshot, .. } = subscription.start else { panic!() };
    conn.type_line(&sized, "echo repaired-$((6*7))");
    let mut transcript = Transcript::from(snapshot.offset);
    conn.follow_until_text(subscription.subscription, &mut transcript, "repaired-42");
    witness.assert_serving();
    witness.host.stop();
}

#[test]
fn output_the_terminal_model_panics_on_is_contained_and_the_pane_goes_on() {
    // An input the fuzzer found that makes vt100 itself panic at pane
    // sizes: output, a resize that narrows the screen to 2x2, more output.
    let input = std::fs::read(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../fuzz/regressions/vt100_at_pane_sizes/narrowing-over-a-wide-character"
    ))
    .unwrap();
    let chunks: Vec<&[u8]> = input[2..].chunks(64).collect();
    let witness = Witness::new(&[]);
    let dir = tempfile::tempdir().unwrap();
    for (index, chunk) in chunks.iter().enumerate() {
        std::fs::write(dir.path().join(format!("chunk{index}")), chunk).unwrap();
    }
    // A title: it leaves the grid and the cursor as they are.
    const READY: &str = "\\033]2;ready\\007";
    let script = format!(
        "stty raw -echo; printf '{READY}'; read x; cat {dir}/chunk0; read x; cat {dir}/chunk1; printf 'still-here'; read x",
        dir = dir.path().display()
    );
    let mut conn = witness.host.connect(Encoding::Json);
    let mut start = start_params("shell", &["sh", "-c", &script]);
    start.size = Some(Size { cols: 99, rows: 52 });
    let pane = conn.start(start).id;
    let subscription = conn.subscribe(&pane, Some(0)).subscription;
    let mut seen = Transcript::from(0);
    // Nothing is typed before the terminal is raw and silent: an echo
    // would move the cursor, and the model would meet other input.
    conn.follow_until_text(subscription, &mut seen, "ready");
    let before_chunks = seen.bytes.len();
    let step = |conn: &mut Connection| conn.type_raw(&pane, "\n");
    // The model must meet the input in the fuzzer's order: each resize
    // applied, and each chunk parsed, before the next step.
    let narrow = Size { cols: 15, rows: 39 };
    conn.ok(Request::Resize { pane: pane.clone(), size: narrow });
    wait_for_screen(&mut conn, &pane, "the first resize", |screen| screen.size == narrow);
    step(&mut conn);
    conn.follow_until(subscription, &mut seen, |seen| seen.bytes.len() >= before_chunks + chunks[0].len());
    let parsed = seen.end();
    wait_for_screen(&mut conn, &pane, "the first chunk", |screen| screen.offset == parsed);
    conn.ok(Request::Resize { pane: pane.clone(), size: Size::MIN });
    wait_for_screen(&mut conn, &pane, "the second resize", |screen| screen.size == Size::MIN);
    step(&mut conn);
    conn.follow_until_text(subscription, &mut seen, "still-here");
    // The model failed on it and a blank one went on: the screen and the
    // pane answer, and the host lives.
    let end = seen.end();
    wait_for_screen(&mut conn, &pane, "the model to reach the end", |screen| screen.offset == end);
    step(&mut conn);
    witness.assert_serving();
    let log = witness.host.stop();
    assert!(log.contains("the terminal model failed; contained"), "the model did not fail on it:\n{log}");
}

/// An OSC sequence opened and never ended: the terminal model's parser
/// kept its payload in a buffer that grew with every byte and stayed that
/// size (300 MB of payload took the host to 320 MB). Past its bound the
/// payload is not kept; the sequence's end still ends it, and the pane
/// goes on.
#[test]
fn an_osc_payload_without_an_end_does_not_grow_the_host() {
    const PAYLOAD_MIB: u64 = 64;
    let witness = Witness::new(&[]);
    let script = format!(
        "printf '\\033]2;ready\\007'; read x; printf '\\033]2;'; \
         head -c {bytes} /dev/zero | tr '\\0' x; printf '\\007\\033]2;after\\007done'; read x",
        bytes = PAYLOAD_MIB << 20
    );
    let mut conn = witness.host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &["sh", "-c", &script])).id;
    wait_for_screen(&mut conn, &pane, "the first title", |screen| screen.title == "ready");
    let before = witness.host.rss_kib();
    conn.type_raw(&pane, "\n");
    wait_for_screen(&mut conn, &pane, "the whole payload parsed", |screen| {
        screen.title == "after" && screen.text.contains("done")
    });
    let after = witness.host.rss_kib();
    let grown_mib = after.saturating_sub(before) / 1024;
    assert!(
        grown_mib < PAYLOAD_MIB / 2,
        "the host grew by {grown_mib} MiB ({before} KiB to {after} KiB) parsing a {PAYLOAD_MIB} MiB payload"
    );
    witness.assert_serving();
    witness.host.stop();
}

/// Inspects `pane` until its screen satisfies `done` (within [`WAIT`]).
fn wait_for_screen(
    conn: &mut Connection,
    pane: &panehost_ipc::PaneId,
    what: &str,
    done: impl Fn(&panehost_ipc::ScreenSnapshot) -> bool,
) {
    let deadline = std::time::Instant::now() + WAIT;
    loop {
        let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: pane.clone() }) else { panic!() };
        if done(&detail.screen) {
            return;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "waiting for {what}: the screen is at {} ({:?})",
            detail.screen.offset,
            detail.screen.size
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
