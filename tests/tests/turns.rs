//! Turns end to end: completion observed through terminal notifications,
//! the screen heuristic, injected hooks and notify programs; ask; interrupt
//! with confirmation and escalation; limits.

mod support;

use panehost_ipc::{Encoding, Event, Request, Response, StartParams};
use support::*;

/// A stand-in for Claude Code that runs the hooks it is given through
/// `--settings`, as the real one does: UserPromptSubmit when a prompt
/// arrives, Notification when it needs permission, Stop after answering.
const FAKE_CLAUDE: &str = r#"#!/usr/bin/env python3
import json, subprocess, sys
args = sys.argv[1:]
settings = json.loads(args[args.index("--settings") + 1])
def hook(name, payload):
    for entry in settings["hooks"].get(name, []):
        for h in entry["hooks"]:
            subprocess.run(h["command"], shell=True, input=json.dumps(payload).encode(), check=False)
while True:
    sys.stdout.write("claude> "); sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        break
    prompt = line.strip().replace("\x1b[200~", "").replace("\x1b[201~", "")
    hook("UserPromptSubmit", {"prompt": prompt})
    if "permission" in prompt:
        hook("Notification", {"message": "Claude needs your permission to use Bash"})
    print("claude says: " + prompt.upper())
    hook("Stop", {"stop_hook_active": False})
"#;

/// A stand-in for Codex that calls its notify program after each turn, with
/// the JSON payload as the last argument, as the real one does.
const FAKE_CODEX: &str = r#"#!/usr/bin/env python3
import json, subprocess, sys
args = sys.argv[1:]
notify = None
for i, arg in enumerate(args):
    if arg == "-c" and args[i + 1].startswith("notify="):
        notify = json.loads(args[i + 1][len("notify="):])
while True:
    sys.stdout.write("codex> "); sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        break
    print("codex did: " + line.strip())
    subprocess.run(notify + [json.dumps({"type": "agent-turn-complete", "last-assistant-message": "done"})], check=False)
"#;

fn answered(response: Response) -> panehost_ipc::TurnReport {
    match response {
        Response::Answered(report) => report,
        other => panic!("{other:?}"),
    }
}

fn ask(conn: &mut Connection, pane: &panehost_ipc::PaneId, text: &str) -> panehost_ipc::TurnReport {
    answered(conn.ok(Request::Ask { pane: pane.clone(), text: text.into(), timeout_ms: Some(20_000) }))
}

fn activity(conn: &mut Connection, pane: &panehost_ipc::PaneId) -> String {
    match conn.ok(Request::Inspect { pane: pane.clone() }) {
        Response::Inspected(detail) => detail.pane.activity,
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_fixture_ends_turns_with_a_terminal_notification() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("fixture", &[])).id;
    let sub = conn.subscribe(&pane, Some(0)).subscription;
    let mut transcript = Transcript::from(0);
    conn.follow_until_text(sub, &mut transcript, "fixture> ");
    let report = ask(&mut conn, &pane, "hello there");
    assert_eq!(report.source, "terminal_notification");
    assert!(report.added_text.contains("answer: ereht olleh"), "{}", report.added_text);
    assert_eq!(report.usage.kind, "unavailable");
    assert!(report.completed_offset > report.started_offset);
    assert_eq!(activity(&mut conn, &pane), "idle");
    conn.follow_until(sub, &mut transcript, |t| t.events.iter().any(|e| matches!(e, Event::TurnCompleted { .. })));
    let kinds: Vec<&str> = transcript
        .events
        .iter()
        .filter_map(|event| match event {
            Event::TurnStarted { source, .. } => Some(if source == "input" { "started(input)" } else { "started(?)" }),
            Event::TurnCompleted { source, .. } if source == "terminal_notification" => Some("completed(osc)"),
            _ => None,
        })
        .collect();
    assert_eq!(kinds, ["started(input)", "completed(osc)"]);
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn a_shell_turn_ends_by_the_screen_heuristic_and_says_so() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Bincode);
    let pane = conn.start(start_params("shell", &[])).id;
    let sub = conn.subscribe(&pane, Some(0)).subscription;
    conn.follow_until(sub, &mut Transcript::from(0), |t| !t.bytes.is_empty());
    let report = ask(&mut conn, &pane, "echo heuristic-$((20+22))");
    assert_eq!(report.source, "heuristic");
    assert!(report.added_text.contains("heuristic-42"), "{}", report.added_text);
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn claude_hooks_injected_per_launch_report_turns_and_approvals() {
    let fake = FakeBin::new();
    fake.program("claude", FAKE_CLAUDE);
    let host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("claude", &[])).id;
    let sub = conn.subscribe(&pane, Some(0)).subscription;
    let mut transcript = Transcript::from(0);
    conn.follow_until_text(sub, &mut transcript, "claude> ");
    let report = ask(&mut conn, &pane, "hi");
    assert_eq!(report.source, "hook");
    assert!(report.added_text.contains("claude says: HI"), "{}", report.added_text);
    conn.type_line(&pane, "needs permission");
    conn.follow_until(sub, &mut transcript, |t| t.events.iter().any(|e| matches!(e, Event::ApprovalRequested { .. })));
    let started = transcript.events.iter().filter(|e| matches!(e, Event::TurnStarted { .. })).count();
    assert_eq!(started, 2, "the host's input and the hook's report are one turn start each time");

    // Only the pane's own processes know its token.
    let refused = conn
        .call(Request::Notify {
            pane: pane.clone(),
            token: "guess".into(),
            event: "turn_completed".into(),
            payload: String::new(),
        })
        .unwrap_err();
    assert_eq!(refused.code, "NOTIFY_REFUSED");
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn codex_notify_program_reports_the_end_of_each_turn() {
    let fake = FakeBin::new();
    fake.program("codex", FAKE_CODEX);
    let host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    let mut conn = host.connect(Encoding::Bincode);
    let pane = conn.start(start_params("codex", &[])).id;
    let sub = conn.subscribe(&pane, Some(0)).subscription;
    conn.follow_until_text(sub, &mut Transcript::from(0), "codex> ");
    let report = ask(&mut conn, &pane, "refactor it");
    assert_eq!(report.source, "notify_program");
    assert!(report.added_text.contains("codex did: refactor it"), "{}", report.added_text);
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn ask_is_refused_where_completion_is_unobserved_and_times_out_saying_what_it_saw() {
    let fake = FakeBin::new();
    fake.program("gemini", "#!/bin/sh\necho gemini-ready\nread line\n");
    let host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    let mut conn = host.connect(Encoding::Json);
    let gemini = conn.start(start_params("gemini", &[])).id;
    let refused = conn.call(Request::Ask { pane: gemini.clone(), text: "x".into(), timeout_ms: None }).unwrap_err();
    assert_eq!(
        (refused.code.as_str(), refused.limitation.as_deref()),
        ("OPERATION_UNSUPPORTED", Some("COMPLETION_UNOBSERVED"))
    );
    conn.ok(Request::Close { pane: gemini });

    let pane = conn.start(start_params("fixture", &[])).id;
    let sub = conn.subscribe(&pane, Some(0)).subscription;
    let mut transcript = Transcript::from(0);
    conn.follow_until_text(sub, &mut transcript, "fixture> ");
    // A slash command is no agent turn: typed raw, not submitted as one.
    conn.type_raw(&pane, "/delay 60000\r");
    conn.follow_until_text(sub, &mut transcript, "delay: 60000");
    let timeout =
        conn.call(Request::Ask { pane: pane.clone(), text: "slow".into(), timeout_ms: Some(800) }).unwrap_err();
    assert_eq!(timeout.code, "TURN_TIMEOUT");
    assert!(
        timeout.message.contains("activity: busy") && timeout.message.contains("terminal_notification"),
        "{}",
        timeout.message
    );

    // The turn is still running: interrupt it; the keys stop it, and the
    // output going quiet confirms that.
    let Response::Interrupted(report) = conn.ok(Request::Interrupt { pane: pane.clone(), terminate: false }) else {
        panic!()
    };
    assert_eq!(report.outcome, "turn_cancelled", "{report:?}");
    assert_eq!(report.steps[0].action, "keys");
    assert!(report.steps.iter().any(|step| step.action == "observed"));
    conn.follow_until_text(sub, &mut transcript, "interrupted");
    assert_eq!(activity(&mut conn, &pane), "idle");
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn an_interrupt_the_program_ignores_escalates_to_signals() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Bincode);
    // Ignores Ctrl-C and SIGINT, keeps printing: only SIGTERM stops it.
    let script = "trap '' INT; while true; do echo tick; sleep 0.2; done";
    let pane = conn.start(start_params("shell", &["sh", "-c", script])).id;
    let sub = conn.subscribe(&pane, Some(0)).subscription;
    conn.follow_until_text(sub, &mut Transcript::from(0), "tick");
    conn.ok(Request::Send(panehost_ipc::SendParams { pane: pane.clone(), enter: true, ..Default::default() }));
    let Response::Interrupted(report) = conn.ok(Request::Interrupt { pane: pane.clone(), terminate: true }) else {
        panic!()
    };
    let actions: Vec<&str> = report.steps.iter().map(|step| step.action.as_str()).collect();
    assert_eq!(report.outcome, "process_ended", "{report:?}");
    assert_eq!(actions, ["keys", "sigint", "sigterm", "observed"], "{report:?}");
    host.stop();
}

#[test]
fn a_pane_past_its_wall_time_is_closed() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let params = StartParams { max_wall_ms: Some(300), ..start_params("shell", &["sleep", "100"]) };
    let pane = conn.start(params).id;
    let sub = conn.subscribe(&pane, Some(0)).subscription;
    let mut transcript = Transcript::from(0);
    conn.follow_to_end(sub, &mut transcript);
    let status = transcript.events.iter().find_map(|e| match e {
        Event::Exited { status, .. } => Some(status.clone()),
        _ => None,
    });
    assert_eq!(status.and_then(|s| s.signal).as_deref(), Some("SIGHUP"));
    conn.ok(Request::Close { pane });
    host.stop();
}
