//! Runtimes end to end: detection and identity, the identity gate before
//! every spawn, native resume with the fixture agent, and login.

mod support;

use panehost_ipc::{Encoding, Request, Response, ResumeRequest, RuntimeInfo, StartParams};
use std::path::Path;
use support::*;

fn runtimes(conn: &mut Connection) -> Vec<RuntimeInfo> {
    match conn.ok(Request::Runtimes {}) {
        Response::Runtimes { runtimes } => runtimes,
        other => panic!("{other:?}"),
    }
}

fn pane_count(conn: &mut Connection) -> usize {
    match conn.ok(Request::List { labels: Default::default() }) {
        Response::Panes { panes } => panes.len(),
        other => panic!("{other:?}"),
    }
}

#[test]
fn runtimes_reports_identity_version_floor_and_readiness() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let all = runtimes(&mut conn);
    assert_eq!(all.len(), 22);
    let fixture = all.iter().find(|r| r.id == "fixture").unwrap();
    assert!(fixture.available, "{fixture:?}");
    // Installed and identified, but no completion receipt yet.
    assert_eq!((fixture.readiness.as_str(), fixture.readiness_gate.as_deref()), ("not_ready", Some("receipt")));
    assert!(fixture.readiness_reason.as_deref().unwrap().contains("--probe fixture"), "{fixture:?}");
    assert_eq!(fixture.sign_in, "not_required");
    assert_eq!(fixture.version.as_deref(), Some("panehost-fixture-agent 1.0.0"));
    assert_eq!(fixture.floor_status.as_deref(), Some("at_or_above"));
    assert_eq!(fixture.sha256.as_ref().map(String::len), Some(64));
    assert_eq!(fixture.resume_modes, ["REFERENCE", "PROVIDER_SELECTION"]);
    assert_eq!(fixture.limitations, ["PERMISSION_PROFILE_UNENFORCED"], "it has no sandbox to map a profile on");
    assert!(fixture.permission_profiles.is_empty(), "{fixture:?}");
    assert_eq!(fixture.completion, "terminal_notification");
    let shell = all.iter().find(|r| r.id == "shell").unwrap();
    assert!(shell.readiness == "ready" && shell.path.is_some(), "{shell:?}");
    // Whatever is installed on this machine, a missing CLI says why.
    for runtime in all.iter().filter(|r| !r.available) {
        assert_eq!(runtime.readiness, "not_ready", "{runtime:?}");
        assert_eq!(runtime.readiness_gate.as_deref(), Some("installed"), "{runtime:?}");
        assert!(runtime.readiness_reason.is_some(), "{runtime:?}");
    }
    host.stop();
}

#[test]
fn a_changed_executable_is_refused_until_it_is_identified_again() {
    let fake = FakeBin::new();
    let agent = std::fs::read(bin_dir().join("panehost-fixture-agent")).unwrap();
    let copy = fake.dir.path().join("panehost-fixture-agent");
    std::fs::write(&copy, &agent).unwrap();
    std::fs::set_permissions(&copy, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    let mut conn = host.connect(Encoding::Bincode);

    let first = conn.start(start_params("fixture", &[]));
    conn.ok(Request::Close { pane: first.id });
    // The executable changes under the running host (an update, say).
    let mut changed = agent.clone();
    changed.extend_from_slice(b"\0changed");
    std::fs::write(&copy, &changed).unwrap();
    let panes_before = pane_count(&mut conn);
    let refused = conn.call(Request::Start(start_params("fixture", &[]))).unwrap_err();
    assert_eq!(refused.code, "BINARY_CHANGED", "{refused}");
    assert_eq!(pane_count(&mut conn), panes_before, "nothing was spawned");

    // Listing runtimes identifies it again; then it starts.
    let fixture = runtimes(&mut conn).into_iter().find(|r| r.id == "fixture").unwrap();
    assert!(fixture.available && fixture.floor_status.as_deref() == Some("at_or_above"), "{fixture:?}");
    let second = conn.start(start_params("fixture", &[]));
    conn.ok(Request::Close { pane: second.id });
    host.stop();
}

/// Starts the fixture agent and returns the pane and its session id.
fn start_fixture(
    conn: &mut Connection,
    resume: Option<ResumeRequest>,
) -> (panehost_ipc::PaneId, String, Transcript, u64) {
    let params = StartParams { runtime: "fixture".into(), resume, ..StartParams::default() };
    let pane = conn.start(params).id;
    let (sub, transcript) = conn.follow_from_start_until(&pane, "fixture> ");
    let text = transcript.text();
    let session = text.split("session: ").nth(1).unwrap().split_whitespace().next().unwrap().to_owned();
    (pane, session, transcript, sub)
}

#[test]
fn the_fixture_resumes_an_exact_session_and_the_latest_one() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Bincode);
    let (pane, session, mut transcript, sub) = start_fixture(&mut conn, None);
    conn.type_line(&pane, "remember the tide");
    conn.follow_until_text(sub, &mut transcript, "answer: edit eht rebmemer");
    conn.ok(Request::Close { pane });

    // A second session, so that "latest" and "exact" differ.
    let (other, other_session, _, _) = start_fixture(&mut conn, None);
    conn.ok(Request::Close { pane: other });
    assert_ne!(session, other_session);

    let (pane, resumed, transcript, _) = start_fixture(&mut conn, Some(ResumeRequest::Reference(session.clone())));
    assert_eq!(resumed, session);
    assert!(transcript.text().contains("prompt: remember the tide"), "{}", transcript.text());
    conn.ok(Request::Close { pane });

    let (pane, latest, _, _) = start_fixture(&mut conn, Some(ResumeRequest::Latest));
    assert_eq!(latest, session, "the latest session is the one last written to");
    conn.ok(Request::Close { pane });

    for hostile in ["fx-0123; rm -rf ~", "--resume", "fx-0123456789abcdef --continue"] {
        let params = StartParams {
            runtime: "fixture".into(),
            resume: Some(ResumeRequest::Reference(hostile.into())),
            ..StartParams::default()
        };
        assert_eq!(conn.call(Request::Start(params)).unwrap_err().code, "INVALID_ARGUMENT");
    }
    let shell_resume =
        StartParams { runtime: "shell".into(), resume: Some(ResumeRequest::Latest), ..StartParams::default() };
    let refused = conn.call(Request::Start(shell_resume)).unwrap_err();
    assert_eq!(
        (refused.code.as_str(), refused.limitation.as_deref()),
        ("OPERATION_UNSUPPORTED", Some("NATIVE_RESUME_UNSUPPORTED"))
    );
    host.stop();
}

#[test]
fn login_runs_in_a_pane_or_says_why_it_cannot() {
    let fake = FakeBin::new();
    // Stand-ins that print their arguments: enough to see what the host runs.
    fake.script("codex", "echo \"argv: $*\"; read line");
    fake.script("gemini", "echo should not run");
    let host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    let mut conn = host.connect(Encoding::Json);

    let Response::Started(pane) = conn.ok(Request::Login { runtime: "codex".into(), cwd: None, size: None }) else {
        panic!()
    };
    let sub = conn.subscribe(&pane.id, Some(0)).subscription;
    let mut transcript = Transcript::from(0);
    conn.follow_until_text(sub, &mut transcript, "argv: login -c check_for_update_on_startup=false");
    conn.ok(Request::Close { pane: pane.id });

    let refused = conn.call(Request::Login { runtime: "gemini".into(), cwd: None, size: None }).unwrap_err();
    assert_eq!(
        (refused.code.as_str(), refused.limitation.as_deref()),
        ("OPERATION_UNSUPPORTED", Some("LOGIN_NOT_IN_TERMINAL"))
    );
    let refused = conn.call(Request::Login { runtime: "shell".into(), cwd: None, size: None }).unwrap_err();
    assert_eq!(refused.code, "LOGIN_NOT_REQUIRED");
    let refused = conn.call(Request::Login { runtime: "droid".into(), cwd: None, size: None }).unwrap_err();
    assert_eq!(refused.code, "RUNTIME_NOT_AVAILABLE", "not installed comes before anything else");
    assert!(!Path::new(&fake.dir.path().join("droid")).exists());
    host.stop();
}

#[test]
fn the_host_builds_codex_argv_from_its_descriptor() {
    let fake = FakeBin::new();
    fake.script("codex", "echo \"argv: $*\"; read line");
    let host = TestHost::start_with_env(&[
        ("PATH", &fake.path_env()),
        ("OPENAI_API_KEY", "sk-test"),
        ("UNRELATED_SECRET", "x"),
    ]);
    let mut conn = host.connect(Encoding::Json);
    let params = StartParams {
        runtime: "codex".into(),
        model: Some("gpt-5".into()),
        resume: Some(ResumeRequest::Latest),
        ..StartParams::default()
    };
    let pane = conn.start(params).id;
    let sub = conn.subscribe(&pane, Some(0)).subscription;
    let mut transcript = Transcript::from(0);
    conn.follow_until_text(
        sub,
        &mut transcript,
        "argv: resume --last --no-daemon -c check_for_update_on_startup=false -s workspace-write -a on-request -c notify=[",
    );
    conn.follow_until_text(sub, &mut transcript, "\",\"notify\",\"--event\",\"turn_completed\"] -m gpt-5");
    conn.ok(Request::Close { pane });
    let refused =
        conn.call(Request::Start(start_params("codex", &["--dangerously-bypass-approvals-and-sandbox"]))).unwrap_err();
    assert_eq!(refused.code, "INVALID_ARGUMENT", "clients never supply argv for an agent runtime");
    host.stop();
}
