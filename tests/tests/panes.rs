//! A pane's life, end to end: real host, real PTYs, real processes.

mod support;

use panehost_ipc::{Encoding, Event, PaneState, Request, Response, StreamStart};
use support::*;

#[test]
fn a_shell_pane_runs_commands_and_shows_them_on_screen() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Bincode);
    let pane = conn.start(start_params("shell", &[])).id;
    let subscription = conn.subscribe(&pane, Some(0));
    assert_eq!(subscription.start, StreamStart::Replay { from: 0 });
    let mut transcript = Transcript::from(0);
    // Typed-ahead input is echoed before the prompt; wait for the prompt so
    // the screen below is predictable.
    conn.follow_until(subscription.subscription, &mut transcript, |t| !t.bytes.is_empty());
    conn.type_line(&pane, "echo hello-$((40+2))");
    conn.follow_until_text(subscription.subscription, &mut transcript, "hello-42\r\n");

    let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: pane.clone() }) else { panic!() };
    assert_eq!(detail.pane.state, PaneState::Running);
    assert!(detail.pane.offset >= transcript.end());
    assert_eq!((detail.screen.size.cols, detail.screen.size.rows), (80, 24));
    // The screen may trail the output by what is not parsed yet; wait until it shows the line.
    let mut screen = detail.screen;
    let deadline = std::time::Instant::now() + WAIT;
    while !screen.text.lines().any(|line| line.trim_start_matches("# ").trim_start_matches("$ ") == "hello-42") {
        assert!(std::time::Instant::now() < deadline, "screen never showed the output: {:?}", screen.text);
        std::thread::sleep(std::time::Duration::from_millis(20));
        let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: pane.clone() }) else { panic!() };
        screen = detail.screen;
    }

    conn.type_line(&pane, "exit 7");
    conn.follow_to_end(subscription.subscription, &mut transcript);
    let exited = transcript.events.iter().find_map(|event| match event {
        Event::Exited { status, offset } => Some((status.clone(), *offset)),
        _ => None,
    });
    let (status, offset) = exited.expect("an exited event");
    assert_eq!(status.code, 7);
    assert_eq!(offset, transcript.end(), "exited comes after every output byte");

    let Response::Panes { panes } = conn.ok(Request::List { labels: Default::default() }) else { panic!() };
    assert!(matches!(&panes[0].state, PaneState::Exited(status) if status.code == 7));
    let err = conn
        .call(Request::Send(panehost_ipc::SendParams { pane: pane.clone(), text: "x".into(), ..Default::default() }))
        .unwrap_err();
    assert_eq!(err.code, "PANE_EXITED");
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn the_fixture_agent_is_interrupted_mid_turn() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("fixture", &[])).id;
    let (sub, mut transcript) = conn.follow_from_start_until(&pane, "fixture> ");
    conn.type_line(&pane, "/delay 60000");
    conn.follow_until_text(sub, &mut transcript, "delay: 60000");
    conn.type_line(&pane, "think hard");
    conn.follow_until_text(sub, &mut transcript, "working: think hard");
    let Response::Interrupted(report) = conn.ok(Request::Interrupt { pane: pane.clone(), terminate: false }) else {
        panic!()
    };
    // The keys end the turn; the output going quiet confirms it.
    assert_eq!(report.outcome, "turn_cancelled", "{report:?}");
    assert_eq!(report.steps[0].detail, "\\x03");
    conn.follow_until_text(sub, &mut transcript, "interrupted");
    assert!(!transcript.text().contains("answer:"));
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn close_ends_the_process_group_and_reaps_it() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Bincode);
    // A shell with a background job: both must end.
    let summary = conn.start(start_params("shell", &["sh", "-c", "sleep 1000 & echo started $!; wait"]));
    let sub = conn.subscribe(&summary.id, Some(0)).subscription;
    let mut transcript = Transcript::from(0);
    conn.follow_until_text(sub, &mut transcript, "\r\n");
    let job: u32 = transcript.text().split_whitespace().nth(1).unwrap().parse().unwrap();
    assert!(process_exists(summary.pid) && process_exists(job));

    let Response::Closed { status, .. } = conn.ok(Request::Close { pane: summary.id.clone() }) else { panic!() };
    assert_eq!(status.signal.as_deref(), Some("SIGHUP"), "{status:?}");
    conn.follow_to_end(sub, &mut transcript);
    assert!(!process_exists(summary.pid), "leader must be reaped");
    let deadline = std::time::Instant::now() + WAIT;
    while process_exists(job) {
        assert!(std::time::Instant::now() < deadline, "background job survived close");
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    let err = conn.call(Request::Inspect { pane: summary.id }).unwrap_err();
    assert_eq!(err.code, "UNKNOWN_PANE");
    host.stop();
}

#[test]
fn resize_reaches_the_process_and_the_screen() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    let sub = conn.subscribe(&pane, Some(0)).subscription;
    let mut transcript = Transcript::from(0);
    let size = panehost_ipc::Size { cols: 100, rows: 30 };
    conn.ok(Request::Resize { pane: pane.clone(), size });
    conn.type_line(&pane, "echo size=$(stty size)");
    conn.follow_until_text(sub, &mut transcript, "size=30 100");
    conn.follow_until(sub, &mut transcript, |t| {
        t.events.iter().any(|e| matches!(e, Event::Resized { size: s } if *s == size))
    });
    let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: pane.clone() }) else { panic!() };
    assert_eq!(detail.screen.size, size);
    let err =
        conn.call(Request::Resize { pane: pane.clone(), size: panehost_ipc::Size { cols: 0, rows: 10 } }).unwrap_err();
    assert_eq!(err.code, "INVALID_ARGUMENT");
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn closed_panes_and_connections_leave_no_fd_and_no_zombie_behind() {
    let host = TestHost::start();
    let fd_count = || std::fs::read_dir(format!("/proc/{}/fd", host.pid())).unwrap().count();
    // The host's child processes, each with its command name and state.
    let children = || {
        let tasks = std::fs::read_dir(format!("/proc/{}/task", host.pid())).unwrap();
        tasks
            .flat_map(|task| {
                std::fs::read_to_string(task.unwrap().path().join("children"))
                    .unwrap_or_default()
                    .split_whitespace()
                    .map(str::to_owned)
                    .collect::<Vec<_>>()
            })
            .map(|pid| {
                let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
                let name = stat.split_once(" (").and_then(|(_, rest)| rest.rsplit_once(") ")).unwrap_or_default();
                (name.0.to_owned(), name.1.chars().next().unwrap_or('?'))
            })
            .collect::<Vec<_>>()
    };
    {
        // Warm up: the first pane and connection allocate what stays.
        let mut conn = host.connect(Encoding::Bincode);
        let pane = conn.start(start_params("shell", &[])).id;
        conn.ok(Request::Close { pane });
    }
    let baseline = fd_count();
    let mut conn = host.connect(Encoding::Bincode);
    let panes: Vec<_> = (0..20).map(|_| conn.start(start_params("shell", &[])).id).collect();
    assert!(fd_count() >= baseline + 20);
    for (index, pane) in panes.iter().enumerate() {
        // Half are closed while running, half after they exited.
        if index % 2 == 0 {
            let sub = conn.subscribe(pane, Some(0)).subscription;
            conn.type_line(pane, "exit 0");
            conn.follow_to_end(sub, &mut Transcript::from(0));
        }
        conn.ok(Request::Close { pane: pane.clone() });
    }
    drop(conn);
    let deadline = std::time::Instant::now() + WAIT;
    while fd_count() > baseline {
        assert!(std::time::Instant::now() < deadline, "fds: {} now, {baseline} before", fd_count());
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    // Keepers that held the panes have exited and were reaped; the one
    // open for the next pane may still run (not as a zombie).
    let left = children();
    assert!(
        left.len() <= 1 && left.iter().all(|(name, state)| name == "panehost-keeper" && *state != 'Z'),
        "the host's children: {left:?}"
    );
    host.stop();
}

/// The soft open-file limit of a process, from /proc/PID/limits.
fn soft_open_file_limit(pid: u32) -> String {
    let limits = std::fs::read_to_string(format!("/proc/{pid}/limits")).unwrap();
    let line = limits.lines().find(|line| line.starts_with("Max open files")).expect("a Max open files line");
    line.split_whitespace().nth(3).unwrap().to_owned()
}

#[test]
fn the_host_raises_its_open_file_limit_and_panes_keep_the_one_it_was_given() {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    // This test runs in a process of its own: lower the soft limit that the
    // host (and through it the pane) will inherit, keeping the hard one.
    let hard = getrlimit(Resource::Nofile).maximum;
    if hard.is_some_and(|hard| hard <= 1024) {
        eprintln!("skipped: the hard open-file limit ({hard:?}) leaves nothing to raise");
        return;
    }
    setrlimit(Resource::Nofile, Rlimit { current: Some(1024), maximum: hard }).unwrap();
    let host = TestHost::start();
    let hard_text = hard.map_or_else(|| "unlimited".to_owned(), |hard| hard.to_string());
    assert_eq!(soft_open_file_limit(host.pid()), hard_text, "the host's own soft limit");

    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[]));
    assert_eq!(soft_open_file_limit(pane.pid), "1024", "the pane's soft limit");
    host.stop();
}

#[test]
fn every_subscriber_of_a_closed_pane_is_told_closed_every_time() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    // The race lay between the exit being seen and the close being marked:
    // many closes, not one lucky run.
    for round in 0..15 {
        let pane = conn.start(start_params("shell", &["sh", "-c", "echo up; exec sleep 1000"])).id;
        let (subscription, mut transcript) = conn.follow_from_start_until(&pane, "up");
        conn.ok(Request::Close { pane: pane.clone() });
        conn.follow_to_end(subscription, &mut transcript);
        let reasons: Vec<&str> = transcript
            .events
            .iter()
            .filter_map(|event| match event {
                panehost_ipc::Event::Ended { reason } => Some(reason.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(reasons, ["closed"], "round {round}: {:?}", transcript.events.last());
    }
    host.stop();
}
