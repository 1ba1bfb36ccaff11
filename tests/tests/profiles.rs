//! Permission profiles end to end: a profile a runtime enforces reaches its
//! argv through a real host; one it cannot enforce is refused, or started
//! without it (and logged) when the client accepts a weaker boundary.

mod support;

use panehost_ipc::{Encoding, Request, Response, ResumeRequest, RuntimeInfo, StartParams};
use support::*;

fn runtime(conn: &mut Connection, id: &str) -> RuntimeInfo {
    match conn.ok(Request::Runtimes {}) {
        Response::Runtimes { runtimes } => {
            runtimes.into_iter().find(|r| r.id == id).unwrap_or_else(|| panic!("no {id}"))
        }
        other => panic!("{other:?}"),
    }
}

fn pane_count(conn: &mut Connection) -> usize {
    match conn.ok(Request::List { labels: Default::default() }) {
        Response::Panes { panes } => panes.len(),
        other => panic!("{other:?}"),
    }
}

fn with_profile(runtime: &str, profile: &str, accept_weaker_boundary: bool) -> StartParams {
    StartParams {
        runtime: runtime.into(),
        permission_profile: Some(profile.into()),
        accept_weaker_boundary,
        ..StartParams::default()
    }
}

/// Starts `params`, waits for `needle` in the pane's output, and closes it.
fn start_and_see(conn: &mut Connection, params: StartParams, needle: &str) {
    let pane = conn.start(params).id;
    let sub = conn.subscribe(&pane, Some(0)).subscription;
    conn.follow_until_text(sub, &mut Transcript::from(0), needle);
    conn.ok(Request::Close { pane });
}

#[test]
fn a_profile_reaches_codex_argv_through_the_host() {
    let fake = FakeBin::new();
    fake.script("codex", "echo \"argv: $*\"; read line");
    let host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    let mut conn = host.connect(Encoding::Json);

    let codex = runtime(&mut conn, "codex");
    assert_eq!(codex.permission_profiles, ["read_only", "workspace_write", "full_access"], "{codex:?}");
    assert!(!codex.limitations.iter().any(|code| code == "PERMISSION_PROFILE_UNENFORCED"), "{codex:?}");

    // Without a profile: the host's default, workspace_write, exactly as a
    // start that names it passes it (whatever the CLI's own default is).
    assert_eq!(codex.default_permission_profile.as_deref(), Some("workspace_write"), "{codex:?}");
    start_and_see(
        &mut conn,
        StartParams { runtime: "codex".into(), ..StartParams::default() },
        "argv: --no-daemon -c check_for_update_on_startup=false -s workspace-write -a on-request -c notify=[",
    );
    for (profile, flags) in [
        ("read_only", "-s read-only -a never"),
        ("workspace_write", "-s workspace-write -a on-request"),
        ("full_access", "-s danger-full-access -a never"),
    ] {
        let needle = format!("argv: --no-daemon -c check_for_update_on_startup=false {flags} -c notify=[");
        start_and_see(&mut conn, with_profile("codex", profile, false), &needle);
    }
    // The profile holds after the resume subcommand that leads the argv.
    let params = StartParams { resume: Some(ResumeRequest::Latest), ..with_profile("codex", "read_only", false) };
    start_and_see(
        &mut conn,
        params,
        "argv: resume --last --no-daemon -c check_for_update_on_startup=false -s read-only -a never -c notify=[",
    );

    let refused = conn.call(Request::Start(with_profile("codex", "root", true))).unwrap_err();
    assert_eq!(refused.code, "INVALID_ARGUMENT", "an unknown profile is never accepted: {refused}");
    let log = host.stop();
    assert!(!log.contains("weaker boundary"), "an enforced profile is no weaker boundary:\n{log}");
}

#[test]
fn a_start_without_a_profile_passes_the_default_modes_flags_to_claude_and_qwen() {
    let fake = FakeBin::new();
    // Each stand-in records its argv in a file and on its screen.
    for name in ["claude", "qwen"] {
        fake.script(name, &format!("printf '%s\\n' \"$@\" > \"$0.argv\"; echo \"{name} argv: $*\"; read line"));
    }
    let host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    let mut conn = host.connect(Encoding::Bincode);
    for (id, mode) in [("claude", ["--permission-mode", "acceptEdits"]), ("qwen", ["--approval-mode", "default"])] {
        let info = runtime(&mut conn, id);
        assert_eq!(info.default_permission_profile.as_deref(), Some("workspace_write"), "{info:?}");
        start_and_see(&mut conn, StartParams { runtime: id.into(), ..StartParams::default() }, &format!("{id} argv: "));
        let argv = std::fs::read_to_string(fake.dir.path().join(format!("{id}.argv"))).unwrap();
        let argv: Vec<&str> = argv.lines().collect();
        assert!(argv.windows(2).any(|pair| pair == mode), "{id}: {argv:?} lacks {mode:?}");
    }
    // A runtime that enforces no workspace_write keeps the CLI's defaults.
    assert_eq!(runtime(&mut conn, "grok").default_permission_profile, None);
    assert_eq!(runtime(&mut conn, "opencode").default_permission_profile, None);
    host.stop();
}

#[test]
fn grok_and_shell_refuse_a_profile_unless_a_weaker_boundary_is_accepted() {
    let fake = FakeBin::new();
    fake.script("grok", "echo \"grok argv: [$*]\"; read line");
    let host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    let mut conn = host.connect(Encoding::Bincode);

    for id in ["grok", "shell"] {
        let info = runtime(&mut conn, id);
        assert!(info.available && info.readiness_gate.as_deref() != Some("installed"), "{info:?}");
        assert!(info.permission_profiles.is_empty(), "{info:?}");
        assert!(info.limitations.iter().any(|code| code == "PERMISSION_PROFILE_UNENFORCED"), "{info:?}");
    }

    let before = pane_count(&mut conn);
    let shell_command = StartParams {
        command: vec!["sh".into(), "-c".into(), "echo shell ran; read line".into()],
        ..with_profile("shell", "read_only", false)
    };
    for params in [
        with_profile("grok", "read_only", false),
        with_profile("grok", "workspace_write", false),
        with_profile("grok", "full_access", false),
        with_profile("shell", "read_only", false),
        shell_command.clone(),
    ] {
        let refused = conn.call(Request::Start(params.clone())).unwrap_err();
        assert_eq!(
            (refused.code.as_str(), refused.limitation.as_deref()),
            ("OPERATION_UNSUPPORTED", Some("PERMISSION_PROFILE_UNENFORCED")),
            "{params:?}: {refused}"
        );
    }
    assert_eq!(pane_count(&mut conn), before, "nothing was spawned");

    // Accepted as a weaker boundary: started as without a profile.
    start_and_see(&mut conn, with_profile("grok", "read_only", true), "grok argv: []");
    start_and_see(&mut conn, StartParams { accept_weaker_boundary: true, ..shell_command }, "shell ran");
    let log = host.stop();
    let warnings: Vec<&str> = log.lines().filter(|line| line.contains("weaker boundary")).collect();
    assert_eq!(warnings.len(), 2, "each accepted weaker boundary is logged:\n{log}");
    assert!(warnings.iter().any(|line| line.contains("grok") && line.contains("read_only")), "{warnings:?}");
    assert!(warnings.iter().any(|line| line.contains("shell")), "{warnings:?}");
}
