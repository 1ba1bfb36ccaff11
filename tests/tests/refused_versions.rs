//! Versions an adapter refuses, end to end: a stand-in `kimi` that answers
//! `--version` with a release panehost refuses (1.52.0, which runs a
//! remote installer at start) is reported not ready with the reason, its
//! start is refused naming `VERSION_REFUSED` and nothing is spawned, and a
//! start that allows a refused version goes ahead (logged). The same
//! stand-in at 1.50.0 is not refused.

mod support;

use panehost_ipc::{Encoding, Request, Response, RuntimeInfo, StartParams};
use support::command::Cli;
use support::*;

fn runtime(conn: &mut Connection, id: &str) -> RuntimeInfo {
    let Response::Runtimes { runtimes } = conn.ok(Request::Runtimes {}) else { panic!("not runtimes") };
    runtimes.into_iter().find(|runtime| runtime.id == id).unwrap_or_else(|| panic!("{id} is not listed"))
}

fn pane_count(conn: &mut Connection) -> usize {
    match conn.ok(Request::List { labels: Default::default() }) {
        Response::Panes { panes } => panes.len(),
        other => panic!("{other:?}"),
    }
}

/// A `kimi` that prints `kimi, version VERSION` for `--version`, and
/// otherwise its arguments, then waits for a line.
fn fake_kimi(version: &str) -> FakeBin {
    let fake = FakeBin::new();
    fake.script(
        "kimi",
        &format!("[ \"$1\" = --version ] && {{ echo 'kimi, version {version}'; exit 0; }}\necho \"kimi ran: [$*]\"; read line"),
    );
    fake
}

fn kimi() -> StartParams {
    StartParams { runtime: "kimi".into(), ..StartParams::default() }
}

#[test]
fn a_refused_version_is_not_ready_and_its_start_is_refused_unless_allowed() {
    let fake = fake_kimi("1.52.0");
    let host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    let mut conn = host.connect(Encoding::Bincode);

    let info = runtime(&mut conn, "kimi");
    assert_eq!(info.version.as_deref(), Some("kimi, version 1.52.0"), "{info:?}");
    assert_eq!(info.floor_status.as_deref(), Some("at_or_above"), "the floor alone would pass it: {info:?}");
    let refusal = info.version_refused.clone().unwrap_or_else(|| panic!("not refused: {info:?}"));
    assert_eq!((refusal.from.as_str(), refusal.before.as_deref()), ("1.52.0", None));
    assert_eq!(refusal.reason, "retired; runs a remote installer at start");
    assert_eq!((info.readiness.as_str(), info.readiness_gate.as_deref()), ("not_ready", Some("version")));
    let reason = info.readiness_reason.clone().unwrap();
    assert!(reason.contains("kimi, version 1.52.0") && reason.contains("remote installer"), "{reason}");

    let before = pane_count(&mut conn);
    let refused = conn.call(Request::Start(kimi())).unwrap_err();
    assert_eq!(
        (refused.code.as_str(), refused.limitation.as_deref()),
        ("OPERATION_UNSUPPORTED", Some("VERSION_REFUSED")),
        "{refused}"
    );
    assert!(refused.message.contains("allow_refused_version"), "{refused}");
    // So is a start that requires readiness, at the version gate.
    let required = conn.call(Request::Start(StartParams { require_ready: true, ..kimi() })).unwrap_err();
    assert_eq!(required.code, "RUNTIME_NOT_READY", "{required}");
    assert!(required.message.contains("gate version"), "{required}");
    // And the receipt probe: it too would start the program.
    let probe = Request::ProbeRuntime { runtime: "kimi".into(), model: None, accept_weaker_boundary: true };
    let probed = conn.call(probe).unwrap_err();
    assert_eq!(probed.limitation.as_deref(), Some("VERSION_REFUSED"), "{probed}");
    assert_eq!(pane_count(&mut conn), before, "nothing was spawned");

    // Allowed explicitly: it starts, and the host says so in its log.
    let pane = conn.start(StartParams { allow_refused_version: true, ..kimi() }).id;
    let sub = conn.subscribe(&pane, Some(0)).subscription;
    conn.follow_until_text(sub, &mut Transcript::from(0), "kimi ran: []");
    conn.ok(Request::Close { pane });
    let log = host.stop();
    assert!(log.contains("starting a refused version"), "the override is logged:\n{log}");
}

#[test]
fn a_version_before_the_refused_range_starts_as_before() {
    let fake = fake_kimi("1.50.0");
    let host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    let mut conn = host.connect(Encoding::Json);
    let info = runtime(&mut conn, "kimi");
    assert_eq!(info.version_refused, None, "{info:?}");
    assert_ne!(info.readiness_gate.as_deref(), Some("version"), "{info:?}");
    let pane = conn.start(kimi()).id;
    let sub = conn.subscribe(&pane, Some(0)).subscription;
    conn.follow_until_text(sub, &mut Transcript::from(0), "kimi ran: []");
    conn.ok(Request::Close { pane });
    let log = host.stop();
    assert!(!log.contains("refused version"), "{log}");
}

#[test]
fn the_runtimes_table_marks_a_refused_version_and_the_default_profile() {
    let fake = fake_kimi("1.52.0");
    fake.script("qwen", "echo 0.24.4");
    let host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    let table = Cli::for_host(&host).ok(&["runtimes", "--wide"]);
    let row = |id: &str| {
        table.lines().find(|line| line.starts_with(&format!("{id} "))).unwrap_or_else(|| panic!("{table}")).to_owned()
    };
    let kimi = row("kimi");
    assert!(kimi.contains("kimi, version 1.52.0 (refused)"), "{kimi}");
    assert!(kimi.contains("not ready: version refused"), "{kimi}");
    assert!(kimi.contains("retired; runs a remote installer at start"), "{kimi}");
    // The profile a start without one gets is marked.
    let qwen = row("qwen");
    assert!(qwen.contains("read_only,workspace_write*,full_access"), "{qwen}");
    host.stop();
}
