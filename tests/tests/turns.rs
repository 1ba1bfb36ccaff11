//! Turns end to end: completion observed through terminal notifications,
//! the screen heuristic, injected hooks and notify programs; ask; interrupt
//! with confirmation and escalation; limits.

mod support;

use panehost_ipc::{Encoding, Event, Request, Response, StartParams};
use support::*;

/// A stand-in for Claude Code that runs the hooks it is given through
/// `--settings`, as the real one does: UserPromptSubmit when a prompt
/// arrives, Notification when it needs permission, Stop after answering.
/// Given a prompt that says `late`, it runs Stop before it draws the answer
/// (a moment later), as the real one does when the model answers at once.
const FAKE_CLAUDE: &str = r#"#!/usr/bin/env python3
import json, subprocess, sys, time
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
    if "late" in prompt:
        hook("Stop", {"stop_hook_active": False})
        time.sleep(0.1)
    print("claude says: " + prompt.upper())
    sys.stdout.flush()
    if "late" not in prompt:
        hook("Stop", {"stop_hook_active": False})
"#;

/// A stand-in for a CLI that reads its hooks only from a settings file or
/// a plugin directory (Gemini CLI, Qwen Code, Copilot): it finds them where
/// the variable or `--plugin-dir` says, and runs the start and end hooks of
/// the CLI it is installed as around each answer.
const FAKE_FILE_HOOKS: &str = r#"#!/usr/bin/env python3
import json, os, subprocess, sys
args = sys.argv[1:]
hooks = {}
for variable in ("GEMINI_CLI_SYSTEM_DEFAULTS_PATH", "QWEN_CODE_SYSTEM_DEFAULTS_PATH"):
    if os.environ.get(variable):
        hooks = json.load(open(os.environ[variable]))["hooks"]
if "--plugin-dir" in args:
    hooks = json.load(open(os.path.join(args[args.index("--plugin-dir") + 1], "hooks", "hooks.json")))["hooks"]
name = os.path.basename(sys.argv[0])
start, end = {"gemini": ("BeforeAgent", "AfterAgent"), "qwen": ("UserPromptSubmit", "Stop"),
              "copilot": ("userPromptSubmitted", "agentStop")}[name]
def hook(event, payload):
    for entry in hooks.get(event, []):
        for h in entry.get("hooks", [entry]):
            command = h.get("command") or h.get("bash")
            subprocess.run(command, shell=True, input=json.dumps(payload).encode(), check=False)
while True:
    if name == "qwen":
        # Its ready marker, the placeholder of its input box.
        sys.stdout.write("Type your message\n")
    sys.stdout.write(name + "> "); sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        break
    prompt = line.strip().replace("\x1b[200~", "").replace("\x1b[201~", "")
    hook(start, {"prompt": prompt})
    print(name + " answered: " + prompt)
    sys.stdout.flush()
    hook(end, {"prompt": prompt})
"#;

/// A stand-in for OpenCode that loads the plugins its configuration names
/// through `OPENCODE_CONFIG_CONTENT` (the host's plugin, run by node) and
/// sends them the events the real one does: for each prompt, a sub-agent's
/// session created, busy and idle, and the session going busy, then idle
/// after the answer.
const FAKE_OPENCODE: &str = r#"#!/usr/bin/env node
const readline = require("node:readline");
(async () => {
  const config = JSON.parse(process.env.OPENCODE_CONFIG_CONTENT);
  const plugins = [];
  for (const url of config.plugin) {
    const module = await import(url);
    for (const make of Object.values(module)) plugins.push(await make({}));
  }
  const emit = async (type, properties) => {
    for (const plugin of plugins) await plugin.event({ event: { type, properties } });
  };
  const settle = () => new Promise((done) => setTimeout(done, 50));
  process.stdout.write("opencode> ");
  for await (const line of readline.createInterface({ input: process.stdin })) {
    const prompt = line.replace("\x1b[200~", "").replace("\x1b[201~", "").trim();
    await emit("session.status", { sessionID: "ses_main", status: { type: "busy" } });
    await emit("session.created", { sessionID: "ses_child", info: { id: "ses_child", parentID: "ses_main" } });
    await emit("session.status", { sessionID: "ses_child", status: { type: "busy" } });
    await emit("session.idle", { sessionID: "ses_child" });
    await settle();
    process.stdout.write("opencode answered: " + prompt + "\n");
    await emit("session.idle", { sessionID: "ses_main" });
    process.stdout.write("opencode> ");
  }
})();
"#;

/// A stand-in for Codex that calls its notify program after each turn, with
/// the JSON payload as the last argument, as the real one does. Like Codex
/// 0.171.0, it titles a new conversation in a thread of its own, and its
/// notify program reports that turn too: after the conversation's turn, or
/// (with a prompt saying `title-first`, as with a model that answers the
/// short title request sooner) before it. It prints `titled` once the
/// title's report is made.
const FAKE_CODEX: &str = r#"#!/usr/bin/env python3
import json, subprocess, sys
args = sys.argv[1:]
notify = None
for i, arg in enumerate(args):
    if arg == "-c" and args[i + 1].startswith("notify="):
        notify = json.loads(args[i + 1][len("notify="):])
thread = "01a22bce-c586-7c41-b5e8-007ee50434a1"
turns = 0
def report(thread_id, turn_id, inputs, answer):
    payload = {"type": "agent-turn-complete", "thread-id": thread_id, "turn-id": turn_id,
               "cwd": "/work", "client": "codex-tui", "input-messages": inputs,
               "last-assistant-message": answer}
    subprocess.run(notify + [json.dumps(payload)], check=False)
while True:
    sys.stdout.write("codex> "); sys.stdout.flush()
    line = sys.stdin.readline()
    if not line:
        break
    prompt = line.strip().replace("\x1b[200~", "").replace("\x1b[201~", "")
    turns += 1
    title = lambda: report("01a22bce-d74e-7611-bb5a-08d59022fd04", "01a22bce-d785-7a93-995a-c28b3c2d8657",
                           ["Generate a concise, single-line task title.\n\nUser prompt:\n" + prompt], "Title")
    if turns == 1 and "title-first" in prompt:
        title()
    print("codex did: " + prompt)
    sys.stdout.flush()
    report(thread, "turn-%d" % turns, [prompt], "done")
    if turns == 1:
        if "title-first" not in prompt:
            title()
        print("titled")
        sys.stdout.flush()
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

/// A host whose PATH finds the stand-in `script` under each of `names`
/// (the FakeBin must live as long as the host).
fn host_with_stand_ins(names: &[&str], script: &str) -> (FakeBin, TestHost) {
    let fake = FakeBin::new();
    for name in names {
        fake.agent(name, script);
    }
    let host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    (fake, host)
}

/// The turn events of a transcript, in order.
fn turn_events(transcript: &Transcript) -> Vec<&'static str> {
    transcript
        .events
        .iter()
        .filter_map(|event| match event {
            Event::TurnStarted { .. } => Some("started"),
            Event::TurnCompleted { .. } => Some("completed"),
            _ => None,
        })
        .collect()
}

/// Follows the pane until its transcript holds `count` ends of turns.
fn follow_until_ends(conn: &mut Connection, sub: u64, transcript: &mut Transcript, count: usize) {
    conn.follow_until(sub, transcript, |t| turn_events(t).iter().filter(|kind| **kind == "completed").count() >= count);
}

/// Starts `runtime` as the stand-in `script`, waits for its prompt
/// (`RUNTIME> `), asks `text` once, checks that the answer came from
/// `source` and that its added text holds `expected`, and closes it.
fn ask_stand_in(runtime: &str, script: &str, encoding: Encoding, text: &str, source: &str, expected: &str) {
    let (_fake, host) = host_with_stand_ins(&[runtime], script);
    let mut conn = host.connect(encoding);
    let (pane, _, _) = start_at_prompt(&mut conn, runtime);
    let report = ask(&mut conn, &pane, text);
    assert_eq!(report.source, source);
    assert!(report.added_text.contains(expected), "{}", report.added_text);
    conn.ok(Request::Close { pane });
    host.stop();
}

/// Starts a pane of the stand-in `runtime` and follows it until its
/// prompt (`RUNTIME> `): the pane, its subscription and the transcript.
fn start_at_prompt(conn: &mut Connection, runtime: &str) -> (panehost_ipc::PaneId, u64, Transcript) {
    let pane = conn.start(start_params(runtime, &[])).id;
    let (sub, transcript) = conn.follow_from_start_until(&pane, &format!("{runtime}> "));
    (pane, sub, transcript)
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
    let (sub, mut transcript) = conn.follow_from_start_until(&pane, "fixture> ");
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
    fake.agent("claude", FAKE_CLAUDE);
    let host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("claude", &[])).id;
    let (sub, mut transcript) = conn.follow_from_start_until(&pane, "claude> ");
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

/// A client whose session leader lies outside the host's pid namespace (a
/// job of a container or a CI runner: the kernel names its session 0 there)
/// is answered like any other: the test above again, inside a pid namespace
/// of its own (`unshare`, which needs root or CAP_SYS_ADMIN). The host once
/// took that 0 for a pid and its connection died unanswered.
#[test]
fn a_client_whose_session_leader_is_outside_the_pid_namespace_is_answered() {
    let test = "claude_hooks_injected_per_launch_report_turns_and_approvals";
    // --kill-child: the namespace, and everything in it, ends with unshare.
    let output = std::process::Command::new("unshare")
        .args(["--pid", "--fork", "--mount-proc", "--kill-child"])
        .arg(std::env::current_exe().expect("the test binary's path"))
        .args(["--exact", test, "--test-threads", "1"])
        .output()
        .expect("unshare (util-linux) runs");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{test} in a pid namespace: {}\n{stdout}\n{stderr}", output.status);
    assert!(stdout.contains("1 passed"), "{test} did not run in the namespace:\n{stdout}");
}

#[test]
fn codex_notify_program_reports_the_end_of_each_turn() {
    ask_stand_in("codex", FAKE_CODEX, Encoding::Bincode, "refactor it", "notify_program", "codex did: refactor it");
}

/// The end of each of the conversation's turns, once: never the title
/// thread's, whether it ends after the conversation's turn (as it does with
/// a fast model) or before it.
#[test]
fn codex_title_thread_reports_are_not_the_conversations_turn() {
    let (_fake, host) = host_with_stand_ins(&["codex"], FAKE_CODEX);
    let mut conn = host.connect(Encoding::Json);
    for first_prompt in ["PING", "title-first PING"] {
        let (pane, sub, mut transcript) = start_at_prompt(&mut conn, "codex");
        let report = ask(&mut conn, &pane, first_prompt);
        assert!(report.added_text.contains(&format!("codex did: {first_prompt}")), "{}", report.added_text);
        // Once the title's report has been made, the next turn must not be
        // ended by it.
        conn.follow_until_text(sub, &mut transcript, "titled");
        let report = ask(&mut conn, &pane, "second");
        assert!(report.added_text.contains("codex did: second"), "{}", report.added_text);
        follow_until_ends(&mut conn, sub, &mut transcript, 2);
        assert_eq!(turn_events(&transcript), ["started", "completed", "started", "completed"], "{first_prompt}");
        assert_eq!(activity(&mut conn, &pane), "idle");
        conn.ok(Request::Close { pane });
    }
    host.stop();
}

#[test]
fn an_answer_drawn_after_the_stop_hook_is_in_the_added_text() {
    ask_stand_in("claude", FAKE_CLAUDE, Encoding::Json, "late", "hook", "claude says: LATE");
}

/// Gemini CLI, Qwen Code and Copilot read hooks from files only: the host
/// writes its own and names them for the launch; the user's are untouched.
/// (OpenCode's plugin is a program of its own: see the next test.)
#[test]
fn hooks_injected_through_files_report_turns() {
    let (_fake, host) = host_with_stand_ins(&["gemini", "qwen", "copilot"], FAKE_FILE_HOOKS);
    let mut conn = host.connect(Encoding::Json);
    for name in ["gemini", "qwen", "copilot"] {
        let (pane, sub, mut transcript) = start_at_prompt(&mut conn, name);
        let report = ask(&mut conn, &pane, "hello");
        assert_eq!(report.source, "hook", "{name}");
        assert!(report.added_text.contains(&format!("{name} answered: hello")), "{name}: {}", report.added_text);
        follow_until_ends(&mut conn, sub, &mut transcript, 1);
        // The host's input and the hook's report are one turn start.
        assert_eq!(turn_events(&transcript), ["started", "completed"], "{name}");
        conn.ok(Request::Close { pane });
    }
    host.stop();
}

#[test]
fn ask_is_refused_where_completion_is_unobserved_and_times_out_saying_what_it_saw() {
    let fake = FakeBin::new();
    fake.agent("grok", "#!/bin/sh\necho grok-ready\nread line\n");
    let host = TestHost::start_with_env(&[("PATH", &fake.path_env())]);
    let mut conn = host.connect(Encoding::Json);
    let grok = conn.start(start_params("grok", &[])).id;
    let refused = conn.call(Request::Ask { pane: grok.clone(), text: "x".into(), timeout_ms: None }).unwrap_err();
    assert_eq!(
        (refused.code.as_str(), refused.limitation.as_deref()),
        ("OPERATION_UNSUPPORTED", Some("COMPLETION_UNOBSERVED"))
    );
    conn.ok(Request::Close { pane: grok });

    let pane = conn.start(start_params("fixture", &[])).id;
    let (sub, mut transcript) = conn.follow_from_start_until(&pane, "fixture> ");
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
    assert_eq!(actions, ["keys", "sigint", "sigterm", "observed", "sweep", "observed"], "{report:?}");
    assert_eq!(report.sweep.as_ref().map(|sweep| sweep.survivors.len()), Some(0), "{report:?}");
    host.stop();
}

#[test]
fn interrupt_with_terminate_ends_a_program_that_ignores_int_and_term() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    // Ignores Ctrl-C, SIGINT and SIGTERM; no turn was ever submitted, so
    // the host knows of none running: terminate ends it all the same.
    let script = "trap '' INT TERM; echo ready; while :; do sleep 1; done";
    let pane = conn.start(start_params("shell", &["bash", "-c", script])).id;
    let sub = conn.subscribe(&pane, Some(0)).subscription;
    conn.follow_until_text(sub, &mut Transcript::from(0), "ready");
    let Response::Interrupted(report) = conn.ok(Request::Interrupt { pane: pane.clone(), terminate: true }) else {
        panic!()
    };
    let actions: Vec<&str> = report.steps.iter().map(|step| step.action.as_str()).collect();
    assert_eq!(report.outcome, "process_ended", "{report:?}");
    assert_eq!(actions, ["keys", "sigint", "sigterm", "sigkill", "observed", "sweep", "observed"], "{report:?}");
    assert_eq!(report.steps[4].detail, "the process exited after SIGKILL");
    host.stop();
}

#[test]
fn interrupt_with_terminate_ends_the_foreground_job_and_not_the_shell() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    let sub = conn.subscribe(&pane, Some(0)).subscription;
    let mut transcript = Transcript::from(0);
    conn.type_raw(&pane, "bash -c 'trap \"\" INT TERM; echo job-$((6*7)); while :; do sleep 1; done'\r");
    conn.follow_until_text(sub, &mut transcript, "job-42");
    let Response::Interrupted(report) = conn.ok(Request::Interrupt { pane: pane.clone(), terminate: true }) else {
        panic!()
    };
    assert_eq!(report.outcome, "foreground_ended", "{report:?}");
    let ended = report.steps.iter().find(|step| step.action == "observed").unwrap();
    assert!(ended.detail.ends_with("ended after SIGKILL"), "{report:?}");
    let actions: Vec<&str> = report.steps.iter().map(|step| step.action.as_str()).collect();
    assert_eq!(actions[actions.len() - 2..], ["sweep", "observed"], "{report:?}");
    assert_eq!(report.steps.last().unwrap().detail, "nothing the program started is left", "{report:?}");
    // The shell runs on and takes the next command.
    conn.type_raw(&pane, "echo shell-$((7*6))-lives\r");
    conn.follow_until_text(sub, &mut transcript, "shell-42-lives");
    host.stop();
}

#[test]
fn an_interrupt_with_no_turn_running_answers_at_once() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    let Response::Interrupted(report) = conn.ok(Request::Interrupt { pane: pane.clone(), terminate: false }) else {
        panic!()
    };
    assert_eq!(report.outcome, "unconfirmed", "{report:?}");
    let actions: Vec<&str> = report.steps.iter().map(|step| step.action.as_str()).collect();
    assert_eq!(actions, ["keys", "observed"]);
    assert_eq!(report.steps[1].detail, "no turn was known to be running");
    // The host did not wait for a confirmation it could not get (it waits
    // 2 s or more for one).
    assert!(report.steps[1].at_ms < 2000, "{report:?}");
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

/// OpenCode's turns through the host's plugin, run by node as OpenCode
/// would run it: one start and one end per prompt, none for a sub-agent.
#[test]
fn the_opencode_plugin_reports_the_sessions_turns_but_not_sub_agents() {
    let (_fake, host) = host_with_stand_ins(&["opencode"], FAKE_OPENCODE);
    let mut conn = host.connect(Encoding::Json);
    let (pane, sub, mut transcript) = start_at_prompt(&mut conn, "opencode");
    for prompt in ["first", "second"] {
        let report = ask(&mut conn, &pane, prompt);
        assert_eq!(report.source, "hook");
        assert!(report.added_text.contains(&format!("opencode answered: {prompt}")), "{}", report.added_text);
    }
    follow_until_ends(&mut conn, sub, &mut transcript, 2);
    assert_eq!(turn_events(&transcript), ["started", "completed", "started", "completed"]);
    conn.ok(Request::Close { pane });
    host.stop();
}
