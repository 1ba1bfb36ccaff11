//! Runtimes an operator declares in the configuration file: loaded by the
//! host, admitted and launched like built-ins; a bad one is reported with
//! its line and does not take the others down.

mod support;

use panehost_ipc::{Encoding, Request, Response, ResumeRequest, StartParams};
use std::os::unix::fs::PermissionsExt;
use support::*;

const CONFIG: &str = r#"
[runtime.echoer]
display_name = "Echoer"
executable = ["echoer"]
base_args = ["--quiet"]
login = "not_required"
limitations = ["COMPLETION_UNOBSERVED", "PROVIDER_SELECTION_ONLY", "PERMISSION_PROFILE_UNENFORCED", "RECEIPT_UNAVAILABLE"]

[runtime.echoer.resume]
latest = ["--again"]

[runtime.broken]
display_name = "Broken"
executable = ["broken"]
limitations = []
"#;

/// A host whose config.toml is `config`, with the program `name` (its
/// text `program`) on its PATH; the directory holding both is returned
/// beside it, to be kept until the test ends.
fn host_with(name: &str, program: &str, config: &str) -> (tempfile::TempDir, TestHost) {
    let bin = tempfile::tempdir().unwrap();
    let path_of_program = bin.path().join(name);
    std::fs::write(&path_of_program, program).unwrap();
    std::fs::set_permissions(&path_of_program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config_file = bin.path().join("config.toml");
    std::fs::write(&config_file, config).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let host = TestHost::start_with_env(&[("PATH", &path), ("PANEHOST_CONFIG", config_file.to_str().unwrap())]);
    (bin, host)
}

#[test]
fn custom_runtimes_load_launch_and_report_their_problems() {
    let (_bin, host) = host_with("echoer", "#!/bin/sh\necho \"echoer argv: $*\"\nread line\n", CONFIG);
    let mut conn = host.connect(Encoding::Json);

    let Response::Runtimes { runtimes } = conn.ok(Request::Runtimes {}) else { panic!() };
    let echoer = runtimes.iter().find(|r| r.id == "echoer").expect("the custom runtime is listed");
    assert!(echoer.available && echoer.evidence == "operator", "{echoer:?}");
    // No `receipt_args`: it can never be proven ready.
    assert_eq!(echoer.readiness_gate.as_deref(), Some("receipt"), "{echoer:?}");
    assert!(runtimes.iter().all(|r| r.id != "broken"), "a runtime with a problem is left out");

    let params =
        StartParams { runtime: "echoer".into(), resume: Some(ResumeRequest::Latest), ..StartParams::default() };
    let pane = conn.start(params).id;
    let sub = conn.subscribe(&pane, Some(0)).subscription;
    conn.follow_until_text(sub, &mut Transcript::from(0), "echoer argv: --quiet --again");
    conn.ok(Request::Close { pane });
    let params = StartParams {
        runtime: "echoer".into(),
        resume: Some(ResumeRequest::Reference("x".into())),
        ..StartParams::default()
    };
    let refused = conn.call(Request::Start(params)).unwrap_err();
    assert_eq!(refused.limitation.as_deref(), Some("PROVIDER_SELECTION_ONLY"));

    let log = host.stop();
    let problem = log.lines().find(|line| line.contains("runtime \"broken\"")).expect("the problem is logged");
    assert!(problem.contains("config.toml:15"), "the line of its `limitations`: {problem}");
}

/// A CLI that runs a hook command given on its command line when a turn
/// ends, and one from its environment when a turn starts, as many CLIs
/// do; the runtime in config.toml points both at the host.
const HOOKED: &str = r#"#!/bin/sh
[ "$1" = "--on-turn-end" ] || { echo "hooked: no --on-turn-end"; exit 2; }
on_end="$2"
printf 'hooked> '
while IFS= read -r line; do
    echo '{}' | sh -c "$HOOKED_ON_TURN_START"
    echo "hooked says: $line"
    echo '{}' | sh -c "$on_end"
    printf 'hooked> '
done
"#;

const HOOKED_CONFIG: &str = r#"
[runtime.hooked]
display_name = "Hooked"
executable = ["hooked"]
login = "not_required"
# It reads lines as the terminal hands them on.
reads_raw_input = false
completion_args = ["--on-turn-end", "{notify} --event turn_completed"]
completion_environment = { HOOKED_ON_TURN_START = "{notify} --event turn_started" }
limitations = ["NATIVE_RESUME_UNSUPPORTED", "HOST_LOSS_RESTARTS_FRESH", "PERMISSION_PROFILE_UNENFORCED", "RECEIPT_UNAVAILABLE"]

[runtime.deaf]
display_name = "Deaf"
executable = ["hooked"]
completion_args = ["--on-turn-end", "true"]
limitations = []
"#;

#[test]
fn a_custom_runtime_with_declared_hooks_reports_its_turns() {
    let (_bin, host) = host_with("hooked", HOOKED, HOOKED_CONFIG);
    let mut conn = host.connect(Encoding::Json);

    let Response::Runtimes { runtimes } = conn.ok(Request::Runtimes {}) else { panic!() };
    let hooked = runtimes.iter().find(|r| r.id == "hooked").expect("the custom runtime is listed");
    assert_eq!(hooked.completion, "hook", "{hooked:?}");
    assert!(!hooked.limitations.iter().any(|code| code == "COMPLETION_UNOBSERVED"), "{hooked:?}");

    let pane = conn.start(StartParams { runtime: "hooked".into(), ..StartParams::default() }).id;
    let (sub, mut transcript) = conn.follow_from_start_until(&pane, "hooked> ");
    let Response::Answered(report) =
        conn.ok(Request::Ask { pane: pane.clone(), text: "ping".into(), timeout_ms: Some(20_000) })
    else {
        panic!("ask is answered")
    };
    assert_eq!(report.source, "hook");
    assert!(report.added_text.contains("hooked says: ping"), "{}", report.added_text);
    conn.follow_until(sub, &mut transcript, |t| {
        t.events.iter().filter(|e| matches!(e, panehost_ipc::Event::TurnCompleted { .. })).count() == 1
    });
    let started = transcript.events.iter().filter(|e| matches!(e, panehost_ipc::Event::TurnStarted { .. })).count();
    assert_eq!(started, 1, "the host's input and the hook's start are one turn start");
    conn.ok(Request::Close { pane });

    let log = host.stop();
    let problem = log.lines().find(|line| line.contains("runtime \"deaf\"")).expect("the problem is logged");
    assert!(problem.contains("never name the host's notify command"), "{problem}");
}

/// A full-screen program in miniature: it starts up in the terminal's
/// canonical mode for a moment, then takes raw mode (keeping what was
/// typed) and reads keys itself. As in the agent CLIs' own input boxes, a
/// carriage return submits and a newline is text.
const RAW_READER: &str = r#"#!/usr/bin/env python3
import os, sys, termios, time, tty
print("raw-reader starting", flush=True)
time.sleep(0.8)
tty.setraw(0, termios.TCSANOW)
os.write(1, b"raw-reader> ")
line = b""
while True:
    key = os.read(0, 1)
    if not key:
        break
    if key == b"\r":
        text = line.replace(b"\x1b[200~", b"").replace(b"\x1b[201~", b"")
        os.write(1, b"\r\nraw-reader got [" + text + b"]\r\nraw-reader> ")
        line = b""
    elif key == b"\n":
        line += b"<newline>"
    else:
        line += key
        os.write(1, key)
"#;

const RAW_READER_CONFIG: &str = r#"
[runtime.rawreader]
display_name = "Raw reader"
executable = ["rawreader"]
login = "not_required"
limitations = ["COMPLETION_UNOBSERVED", "NATIVE_RESUME_UNSUPPORTED", "HOST_LOSS_RESTARTS_FRESH", "PERMISSION_PROFILE_UNENFORCED", "RECEIPT_UNAVAILABLE"]
"#;

#[test]
fn text_sent_right_after_start_reaches_a_raw_key_reader_as_a_submission() {
    let (_bin, host) = host_with("rawreader", RAW_READER, RAW_READER_CONFIG);
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(StartParams { runtime: "rawreader".into(), ..StartParams::default() }).id;
    // No wait at all: typed before the program takes raw mode, the Enter
    // would reach it as a newline, and nothing would be submitted.
    conn.ok(Request::Send(panehost_ipc::SendParams {
        pane: pane.clone(),
        text: "EARLY".into(),
        enter: true,
        ..Default::default()
    }));
    let (_sub, transcript) = conn.follow_from_start_until(&pane, "raw-reader got [");
    let text = transcript.text();
    let answered = text.split("raw-reader got [").nth(1).and_then(|rest| rest.split(']').next());
    assert_eq!(answered, Some("EARLY"), "{text:?}");
    conn.ok(Request::Close { pane });
    host.stop();
}

/// A full-screen program that, like Qwen Code 0.24.4, takes raw mode,
/// prints a line, is quiet for longer than the host's wait for quiet, and
/// only then draws the input box that reads; what was typed before is
/// lost (here thrown away outright).
const LATE_DRAWER: &str = r#"#!/usr/bin/env python3
import os, sys, termios, time, tty
tty.setraw(0, termios.TCSANOW)
os.write(1, b"late-drawer: loading\r\n")
time.sleep(2.0)
termios.tcflush(0, termios.TCIFLUSH)
os.write(1, b"late-drawer> Type your words\r\n")
line = b""
while True:
    key = os.read(0, 1)
    if not key:
        break
    if key == b"\r":
        text = line.replace(b"\x1b[200~", b"").replace(b"\x1b[201~", b"")
        os.write(1, b"\r\nlate-drawer got [" + text + b"]\r\n")
        line = b""
    else:
        line += key
        os.write(1, key)
"#;

const LATE_DRAWER_CONFIG: &str = r#"
[runtime.latedrawer]
display_name = "Late drawer"
executable = ["latedrawer"]
login = "not_required"
ready_marker = "Type your words"
limitations = ["COMPLETION_UNOBSERVED", "NATIVE_RESUME_UNSUPPORTED", "HOST_LOSS_RESTARTS_FRESH", "PERMISSION_PROFILE_UNENFORCED", "RECEIPT_UNAVAILABLE"]
"#;

#[test]
fn text_sent_right_after_start_waits_for_the_runtimes_ready_marker() {
    let (_bin, host) = host_with("latedrawer", LATE_DRAWER, LATE_DRAWER_CONFIG);
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(StartParams { runtime: "latedrawer".into(), ..StartParams::default() }).id;
    // No wait at all. Raw mode comes at once, and the output is quiet
    // after its first line long before the input box is drawn: sent on
    // that quiet, the text would be thrown away.
    conn.ok(Request::Send(panehost_ipc::SendParams {
        pane: pane.clone(),
        text: "EARLY".into(),
        enter: true,
        ..Default::default()
    }));
    let (_sub, transcript) = conn.follow_from_start_until(&pane, "late-drawer got [");
    let text = transcript.text();
    let answered = text.split("late-drawer got [").nth(1).and_then(|rest| rest.split(']').next());
    assert_eq!(answered, Some("EARLY"), "{text:?}");
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn a_ready_marker_that_is_not_one_line_of_text_is_a_problem() {
    let config = LATE_DRAWER_CONFIG.replace("\"Type your words\"", "\"two\\nlines\"");
    let (_bin, host) = host_with("latedrawer", LATE_DRAWER, &config);
    let mut conn = host.connect(Encoding::Json);
    let Response::Runtimes { runtimes } = conn.ok(Request::Runtimes {}) else { panic!() };
    assert!(runtimes.iter().all(|r| r.id != "latedrawer"), "a runtime with a problem is left out");
    let log = host.stop();
    let problem = log.lines().find(|line| line.contains("runtime \"latedrawer\"")).expect("the problem is logged");
    assert!(problem.contains("`ready_marker`"), "{problem}");
}
