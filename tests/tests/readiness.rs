//! Readiness and the completion receipt, end to end: a real host runs a
//! runtime's one-shot mode on a fresh challenge, stores the receipt against
//! the executable's identity, and readiness (and a start that requires it)
//! follows.

mod support;

use panehost_ipc::{Encoding, Request, Response, RuntimeInfo, StartParams};
use std::os::unix::fs::PermissionsExt;
use support::*;

fn runtime(conn: &mut Connection, id: &str) -> RuntimeInfo {
    let Response::Runtimes { runtimes } = conn.ok(Request::Runtimes {}) else { panic!("not runtimes") };
    runtimes.into_iter().find(|runtime| runtime.id == id).unwrap_or_else(|| panic!("{id} is not listed"))
}

fn probe(conn: &mut Connection, id: &str, accept_weaker_boundary: bool) -> panehost_ipc::Receipt {
    let request = Request::ProbeRuntime { runtime: id.into(), model: None, accept_weaker_boundary };
    match conn.ok(request) {
        Response::Receipt(receipt) => receipt,
        other => panic!("{other:?}"),
    }
}

fn start_requiring_ready(runtime: &str) -> Request {
    Request::Start(StartParams { runtime: runtime.into(), require_ready: true, ..StartParams::default() })
}

#[test]
fn a_passing_receipt_makes_the_fixture_ready_and_survives_a_restart() {
    let mut host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let before = runtime(&mut conn, "fixture");
    assert_eq!((before.readiness.as_str(), before.readiness_gate.as_deref()), ("not_ready", Some("receipt")));
    let refused = conn.call(start_requiring_ready("fixture")).unwrap_err();
    assert_eq!(refused.code, "RUNTIME_NOT_READY", "{refused}");
    assert!(refused.message.contains("gate receipt"), "{refused}");

    // The fixture cannot hold the read-only boundary: the probe says so
    // unless the weaker boundary is accepted.
    let unenforced =
        conn.call(Request::ProbeRuntime { runtime: "fixture".into(), model: None, accept_weaker_boundary: false });
    let unenforced = unenforced.unwrap_err();
    assert_eq!(unenforced.limitation.as_deref(), Some("PERMISSION_PROFILE_UNENFORCED"), "{unenforced}");

    let receipt = probe(&mut conn, "fixture", true);
    assert!(receipt.passed, "{receipt:?}");
    assert!(!receipt.read_only_enforced);
    assert_eq!(receipt.sha256, before.sha256.clone().unwrap());
    assert_eq!(receipt.version.as_deref(), Some("panehost-fixture-agent 1.0.0"));
    let after = runtime(&mut conn, "fixture");
    assert_eq!(after.readiness, "ready", "{after:?}");
    assert!(after.receipt_valid && after.receipt.as_ref() == Some(&receipt), "{after:?}");
    let Response::Started(pane) = conn.ok(start_requiring_ready("fixture")) else { panic!() };
    conn.ok(Request::Close { pane: pane.id });

    // Each probe asks for a fresh value: the next receipt differs in time.
    let again = probe(&mut conn, "fixture", true);
    assert!(again.passed && again.taken_at_ms >= receipt.taken_at_ms, "{again:?}");

    // The receipt is on disk: a new host on the same state directory has it.
    host.signal_and_wait("-TERM");
    host.restart();
    let mut conn = host.connect(Encoding::Bincode);
    let restarted = runtime(&mut conn, "fixture");
    assert_eq!(restarted.readiness, "ready", "{restarted:?}");
    assert_eq!(restarted.receipt.as_ref(), Some(&again));
    // The shell is no agent: it needs no receipt.
    assert_eq!(runtime(&mut conn, "shell").readiness, "ready");
    let Response::Started(shell) = conn.ok(start_requiring_ready("shell")) else { panic!() };
    conn.ok(Request::Close { pane: shell.id });
    host.stop();
}

const CONFIG: &str = r#"
[runtime.oneshot]
display_name = "One-shot"
executable = ["oneshot"]
version_args = []
login = "not_required"
receipt_args = ["--ask", "{prompt}"]
limitations = ["COMPLETION_UNOBSERVED", "NATIVE_RESUME_UNSUPPORTED", "HOST_LOSS_RESTARTS_FRESH", "PERMISSION_PROFILE_UNENFORCED"]
"#;

/// Writes the `oneshot` program: it prints `answer` (a shell word list,
/// where `$nonce` is the value the prompt carries) and exits.
fn write_oneshot(path: &std::path::Path, answer: &str) {
    let script = format!(
        "#!/bin/sh\n[ \"$1\" = --ask ] || {{ echo interactive; read line; exit 0; }}\nnonce=$(printf '%s' \"$2\" | sed 's/.*\"panehost_receipt\":\"\\([0-9a-f]*\\)\".*/\\1/')\n{answer}\n"
    );
    std::fs::write(path, script).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn a_wrong_answer_fails_the_receipt_and_a_changed_binary_voids_a_good_one() {
    let bin = tempfile::tempdir().unwrap();
    let program = bin.path().join("oneshot");
    let config = bin.path().join("config.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    write_oneshot(&program, "echo '{\"panehost_receipt\":\"00000000000000000000000000000000\"}'");
    let host = TestHost::start_with_env(&[("PATH", &path), ("PANEHOST_CONFIG", config.to_str().unwrap())]);
    let mut conn = host.connect(Encoding::Json);

    // An answer with another value: a failed receipt, stored, and the
    // runtime is not ready because of it.
    let wrong = probe(&mut conn, "oneshot", true);
    assert!(!wrong.passed, "{wrong:?}");
    assert!(wrong.detail.contains("not this probe's value"), "{wrong:?}");
    let info = runtime(&mut conn, "oneshot");
    assert_eq!(info.readiness_gate.as_deref(), Some("receipt"), "{info:?}");
    assert!(info.readiness_reason.as_deref().unwrap().contains("failed"), "{info:?}");
    assert_eq!(conn.call(start_requiring_ready("oneshot")).unwrap_err().code, "RUNTIME_NOT_READY");
    // Without the requirement, the start goes ahead as before.
    let Response::Started(pane) =
        conn.ok(Request::Start(StartParams { runtime: "oneshot".into(), ..Default::default() }))
    else {
        panic!()
    };
    conn.ok(Request::Close { pane: pane.id });

    // A program that fails says how.
    write_oneshot(&program, "echo 'no such model' >&2; exit 3");
    let _ = runtime(&mut conn, "oneshot"); // identify the new executable
    let failing = probe(&mut conn, "oneshot", true);
    assert!(!failing.passed && failing.detail.contains("exit status: 3"), "{failing:?}");
    assert!(failing.detail.contains("no such model"), "{failing:?}");

    // The right answer passes.
    write_oneshot(&program, "echo 'Thinking...'; printf '{\"panehost_receipt\":\"%s\"}\\n' \"$nonce\"");
    let _ = runtime(&mut conn, "oneshot");
    let good = probe(&mut conn, "oneshot", true);
    assert!(good.passed, "{good:?}");
    assert_eq!(runtime(&mut conn, "oneshot").readiness, "ready");

    // The executable changes: the receipt is void until a new one is taken.
    write_oneshot(&program, "printf '{\"panehost_receipt\":\"%s\"}\\n' \"$nonce\" # changed");
    let info = runtime(&mut conn, "oneshot");
    assert_eq!(info.readiness_gate.as_deref(), Some("receipt"), "{info:?}");
    assert!(info.readiness_reason.as_deref().unwrap().contains("another executable"), "{info:?}");
    assert!(!info.receipt_valid);
    assert!(probe(&mut conn, "oneshot", true).passed);
    assert_eq!(runtime(&mut conn, "oneshot").readiness, "ready");
    host.stop();
}

#[test]
fn runtimes_with_no_one_shot_mode_are_refused_a_probe() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let request = Request::ProbeRuntime { runtime: "shell".into(), model: None, accept_weaker_boundary: true };
    assert_eq!(conn.call(request).unwrap_err().code, "INVALID_ARGUMENT");
    let request = Request::ProbeRuntime { runtime: "nope".into(), model: None, accept_weaker_boundary: true };
    assert_eq!(conn.call(request).unwrap_err().code, "UNKNOWN_RUNTIME");
    host.stop();
}
