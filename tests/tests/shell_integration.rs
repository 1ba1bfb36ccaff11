//! Shell integration: the host starts an interactive bash with prompt
//! marks (OSC 133), so a command's end is seen, with its exit status,
//! rather than guessed from quiet output; the user's own startup file still
//! runs. Other shells, and a client's own command, keep the heuristic.

mod support;

use panehost_ipc::{Encoding, Event, Request, Response, SendParams, TurnReport};
use support::bash::{ask, bash_host};
use support::command::wait_for;
use support::*;

/// Sends `params` and checks that the send is answered without an error.
fn send_answered(conn: &mut Connection, params: SendParams, round: u32) {
    let sent = conn.send(Request::Send(params));
    let (id, answer) = conn.next_answer();
    assert_eq!(id, sent);
    answer.unwrap_or_else(|err| panic!("round {round}: {err:?}"));
}

/// The answer to an `ask` of `text`, an error included.
fn ask_answer(
    conn: &mut Connection,
    pane: &panehost_ipc::PaneId,
    text: &str,
) -> Result<Response, panehost_ipc::ErrorBody> {
    let asked = conn.send(Request::Ask { pane: pane.clone(), text: text.into(), timeout_ms: Some(20_000) });
    let (id, answer) = conn.next_answer();
    assert_eq!(id, asked);
    answer
}

/// The answer to an `ask` of `text`; told `TURN_IN_PROGRESS` (a command
/// the host did not type runs), asked again once the pane is idle.
fn ask_once_idle(
    host: &TestHost,
    conn: &mut Connection,
    pane: &panehost_ipc::PaneId,
    text: &str,
    round: u32,
) -> TurnReport {
    match ask_answer(conn, pane, text) {
        Ok(Response::Answered(report)) => report,
        Err(error) if error.code == "TURN_IN_PROGRESS" => {
            let mut inspect = host.connect(Encoding::Json);
            wait_for(&format!("round {round}: the running command to end"), || {
                let Response::Inspected(detail) = inspect.ok(Request::Inspect { pane: pane.clone() }) else { panic!() };
                (detail.pane.activity == "idle").then_some(()).ok_or(detail.pane.activity)
            });
            ask(conn, pane, text)
        }
        other => panic!("round {round}: {other:?}"),
    }
}

/// The pane's record file.
fn record_path(host: &TestHost, pane: &panehost_ipc::PaneId) -> std::path::PathBuf {
    host.state_dir.join("panes").join(format!("{pane}.json"))
}

/// The pane's record, once it is as `wanted` says.
fn record_once(
    host: &TestHost,
    pane: &panehost_ipc::PaneId,
    wanted: impl Fn(&serde_json::Value) -> bool,
) -> serde_json::Value {
    let path = record_path(host, pane);
    wait_for("the record to be saved so", || {
        let text = std::fs::read_to_string(&path).map_err(|err| err.to_string())?;
        let record: serde_json::Value = serde_json::from_str(&text).map_err(|err| err.to_string())?;
        if wanted(&record) {
            Ok(record)
        } else {
            Err(text)
        }
    })
}

/// A pane taken back from its keeper by a restarted host is idle, and an
/// ask exiting with `status` is answered with it.
fn back_idle_and_asked(conn: &mut Connection, pane: &panehost_ipc::PaneId, status: u32) {
    let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: pane.clone() }) else { panic!() };
    assert_eq!((detail.pane.restored_by.as_str(), detail.pane.activity.as_str()), ("keeper", "idle"));
    assert_eq!(ask(conn, pane, &format!("(exit {status})")).exit_code, Some(status));
}

fn completion_of(conn: &mut Connection, pane: &panehost_ipc::PaneId) -> String {
    let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: pane.clone() }) else { panic!() };
    detail.pane.completion
}

/// The completion `runtimes` reports for the shell runtime: what a pane
/// started now without a command reports.
fn runtimes_completion_of_shell(conn: &mut Connection) -> String {
    let Response::Runtimes { runtimes } = conn.ok(Request::Runtimes {}) else { panic!() };
    runtimes.into_iter().find(|runtime| runtime.id == "shell").expect("the shell runtime is listed").completion
}

#[test]
fn ask_on_bash_waits_for_the_command_and_gives_its_exit_status() {
    let host = bash_host();
    // The user's own startup file runs, and its prompt command with it.
    std::fs::write(
        host.home.join(".bashrc"),
        "alias greet='echo hello-from-bashrc'\nPROMPT_COMMAND='USER_PROMPT_RAN=yes'\nPS1='mine> '\n",
    )
    .unwrap();
    for encoding in [Encoding::Json, Encoding::Bincode] {
        let mut conn = host.connect(encoding);
        let pane = conn.start(start_params("shell", &[])).id;
        let (subscription, mut seen) = conn.follow_from_start_until(&pane, "mine> ");
        assert_eq!(completion_of(&mut conn, &pane), "shell_integration");
        assert_eq!(runtimes_completion_of_shell(&mut conn), "shell_integration", "runtimes and the pane agree");

        // Quiet for longer than the heuristic's 1.5 s, then more output:
        // the turn ends with the command, not with the quiet.
        let report = ask(&mut conn, &pane, "echo before; sleep 2; echo after; (exit 3)");
        assert_eq!(report.source, "shell_integration", "{report:?}");
        assert_eq!(report.exit_code, Some(3), "{report:?}");
        assert!(report.added_text.contains("after"), "{}", report.added_text);

        let report = ask(&mut conn, &pane, "greet; echo prompt-command-$USER_PROMPT_RAN");
        assert_eq!(report.exit_code, Some(0));
        assert!(report.added_text.contains("hello-from-bashrc"), "{}", report.added_text);
        assert!(report.added_text.contains("prompt-command-yes"), "{}", report.added_text);

        // A command typed as keys (as in an attached terminal) is a turn
        // of its own, seen by its marks.
        let typed =
            SendParams { pane: pane.clone(), bytes: panehost_ipc::ByteBuf(b"false\r".to_vec()), ..Default::default() };
        conn.ok(Request::Send(typed));
        conn.follow_until(subscription, &mut seen, |seen| {
            seen.events.iter().any(|event| matches!(event, Event::TurnCompleted { exit_code: Some(1), .. }))
        });
        let sources: Vec<&str> = seen
            .events
            .iter()
            .filter_map(|event| match event {
                Event::TurnStarted { source, .. } | Event::TurnCompleted { source, .. } => Some(source.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            sources,
            ["input", "shell_integration", "input", "shell_integration", "shell_integration", "shell_integration"],
            "{:?}",
            seen.events
        );
        conn.ok(Request::Close { pane });
    }
    host.stop();
}

#[test]
fn other_shells_and_a_clients_command_keep_the_heuristic() {
    let host = bash_host();
    let mut conn = host.connect(Encoding::Bincode);
    let command = conn.start(start_params("shell", &["bash", "-i"])).id;
    assert_eq!(completion_of(&mut conn, &command), "screen_heuristic");
    conn.ok(Request::Close { pane: command });
    host.stop();

    let host = TestHost::start_with_env(&[("SHELL", "/bin/sh")]);
    let mut conn = host.connect(Encoding::Bincode);
    let pane = conn.start(start_params("shell", &[])).id;
    assert_eq!(completion_of(&mut conn, &pane), "screen_heuristic");
    assert_eq!(runtimes_completion_of_shell(&mut conn), "screen_heuristic", "runtimes and the pane agree");
    let report = ask(&mut conn, &pane, "echo plain-sh");
    assert_eq!((report.source.as_str(), report.exit_code), ("heuristic", None));
    conn.ok(Request::Close { pane });
    host.stop();
}

/// An `ask` right after `start`, before bash has drawn its first prompt,
/// is answered as if the client had waited: with the command's own output
/// once and its own exit status. Before, the text was typed ahead of the
/// first prompt, whose mark ended the turn at once with status 0 and only
/// the typed line as its text; the command ran afterwards. Several panes
/// at once, as an API server's workers start them, each on its own
/// connection with no wait between the two requests.
#[test]
fn an_ask_right_after_start_answers_for_its_own_command() {
    let host = bash_host();
    // A startup file that takes a moment, as a system's bash completion
    // does: the submission's echo settles before the first prompt.
    std::fs::write(host.home.join(".bashrc"), "sleep 0.3\nPS1='ready> '\n").unwrap();
    let command = "echo hi-$((40+2)); (exit 3)";
    let workers: Vec<_> = (0..8)
        .map(|_| {
            let mut conn = host.connect(Encoding::Json);
            std::thread::spawn(move || {
                let pane = conn.start(start_params("shell", &[])).id;
                let report = ask(&mut conn, &pane, command);
                conn.ok(Request::Close { pane });
                report
            })
        })
        .collect();
    for worker in workers {
        let report = worker.join().expect("a worker's ask");
        assert_eq!((report.source.as_str(), report.exit_code), ("shell_integration", Some(3)), "{report:?}");
        let lines: Vec<&str> = report.added_text.lines().collect();
        assert_eq!(lines.iter().filter(|line| line.trim() == "hi-42").count(), 1, "{report:?}");
        assert_eq!(lines.iter().filter(|line| line.contains(command)).count(), 1, "typed once: {report:?}");
    }
    host.stop();
}

/// A fresh bash pane is `unknown` until its first prompt, then `idle`.
#[test]
fn a_shell_is_idle_once_it_draws_its_first_prompt() {
    let host = bash_host();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    wait_for("the first prompt to make the pane idle", || {
        let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: pane.clone() }) else { panic!() };
        (detail.pane.activity == "idle").then_some(()).ok_or(detail.pane.activity)
    });
    conn.ok(Request::Close { pane });
    host.stop();
}

/// A pane between turns comes back `idle` after its host is killed and
/// restarted, not `unknown`.
#[test]
fn an_idle_pane_comes_back_idle_after_a_killed_host() {
    let mut host = bash_host();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    let report = ask(&mut conn, &pane, "echo done-$((1+1))");
    assert_eq!(report.exit_code, Some(0));
    record_once(&host, &pane, |record| record["activity"] == "idle");
    drop(conn);
    host.kill_hard();
    host.restart();
    // Taken back idle, and it takes the next turn as before.
    let mut conn = host.connect(Encoding::Json);
    back_idle_and_asked(&mut conn, &pane, 4);
    conn.ok(Request::Close { pane });
    host.stop();
}

/// After a killed host, an ask is answered by its own command's mark,
/// not by the mark of the command before it, which the killed host had
/// read but not yet saved (found by the schedule explorer: the next ask
/// was answered at once with the last command's status).
#[test]
fn after_a_killed_host_an_ask_is_answered_by_its_own_command() {
    let mut host = bash_host();
    for round in 0..3 {
        let mut conn = host.connect(Encoding::Json);
        let pane = conn.start(start_params("shell", &[])).id;
        assert_eq!(ask(&mut conn, &pane, "(exit 4)").exit_code, Some(4));
        // Killed at once, before the end of that turn is saved.
        drop(conn);
        host.kill_hard();
        host.restart();
        let mut conn = host.connect(Encoding::Json);
        let report = ask(&mut conn, &pane, &format!("echo own-$((10+{round}))"));
        assert_eq!(report.exit_code, Some(0), "round {round}: {report:?}");
        assert!(report.added_text.contains(&format!("own-{}", 10 + round)), "round {round}: {report:?}");
        conn.ok(Request::Close { pane });
    }
    host.stop();
}

/// A host killed while bash still reads its startup file: the next host
/// takes the pane back not yet ready, and an ask waits for the first
/// prompt as it would have (found by the schedule explorer, seed
/// 11479829673547134055: answered with status 0 and the typed line twice).
#[test]
fn a_host_killed_before_the_first_prompt_leaves_the_next_ask_right() {
    let mut host = bash_host();
    std::fs::write(host.home.join(".bashrc"), "sleep 0.5\nPS1='ready> '\n").unwrap();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    drop(conn);
    host.kill_hard();
    host.restart();
    let mut conn = host.connect(Encoding::Json);
    let report = ask(&mut conn, &pane, "echo early-$((6*7)); (exit 5)");
    assert_eq!((report.source.as_str(), report.exit_code), ("shell_integration", Some(5)), "{report:?}");
    let lines: Vec<&str> = report.added_text.lines().collect();
    assert_eq!(lines.iter().filter(|line| line.trim() == "early-42").count(), 1, "{report:?}");
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn an_asks_added_text_is_its_commands_whole_output() {
    let host = bash_host();
    let mut conn = host.connect(Encoding::Json);
    let params = panehost_ipc::StartParams {
        size: Some(panehost_ipc::Size { cols: 60, rows: 8 }),
        ..start_params("shell", &[])
    };
    let pane = conn.start(params).id;
    let first = ask(&mut conn, &pane, "echo same");
    assert!(first.added_text.lines().any(|line| line == "same"), "{}", first.added_text);

    // A line the screen showed already, then more lines than the screen
    // holds: every one of them, once, after the echoed command.
    let report = ask(&mut conn, &pane, "echo same; seq 1 30; (exit 2)");
    assert_eq!(report.exit_code, Some(2), "{report:?}");
    let lines: Vec<&str> = report.added_text.lines().collect();
    assert!(lines[0].starts_with("ready> echo same; seq 1 30"), "{}", report.added_text);
    let expected: Vec<String> = std::iter::once("same".to_owned()).chain((1..=30).map(|n| n.to_string())).collect();
    assert_eq!(lines[1..=31], expected[..], "{}", report.added_text);

    // Another client resizes the pane while the command runs: the answer
    // is still its output, whatever the resize did to the screen.
    let mut other = host.connect(Encoding::Bincode);
    let subscription = other.subscribe(&pane, None);
    let mut seen = Transcript::from(subscription_start(&subscription));
    let turn = std::thread::spawn({
        let socket = host.socket.clone();
        let pane = pane.clone();
        move || {
            let mut conn = Connection::open(&socket, Encoding::Json);
            ask(&mut conn, &pane, "for n in 1 2 3 4 5 6; do echo step-$n; sleep 0.05; done")
        }
    });
    other.follow_until_text(subscription.subscription, &mut seen, "step-1\r\n");
    for cols in [40, 90, 30, 70, 50, 80] {
        other.ok(Request::Resize { pane: pane.clone(), size: panehost_ipc::Size { cols, rows: 6 } });
    }
    let report = turn.join().unwrap();
    for n in 1..=6 {
        let step = format!("step-{n}");
        assert_eq!(report.added_text.lines().filter(|line| *line == step).count(), 1, "{}", report.added_text);
    }
    conn.ok(Request::Close { pane });
    host.stop();
}

/// The offset a subscription's first event continues from.
fn subscription_start(subscription: &panehost_ipc::Subscription) -> u64 {
    match &subscription.start {
        panehost_ipc::StreamStart::Replay { from } => *from,
        panehost_ipc::StreamStart::Snapshot { snapshot, .. } => snapshot.offset,
        other => panic!("{other:?}"),
    }
}

/// A record written in the moment between the model parsing a command's
/// end into the screen and the pane's turns learning of it holds the turn
/// open with a screen that shows it ended; a host killed then left the
/// pane busy for good (found by the schedule explorer, seed
/// 11189171346738076226: "still busy after 20 s"). The record is made so
/// here, by hand: the next host sees the end in the ring between the
/// turn's start and the saved screen, and the pane is idle.
#[test]
fn a_turn_recorded_open_whose_end_the_saved_screen_shows_is_ended_at_the_restore() {
    let mut host = bash_host();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    let report = ask(&mut conn, &pane, "echo done-$((1+1))");
    let mut torn = record_once(&host, &pane, |record| {
        let screen_at = record["screen"]["offset"].as_u64().unwrap_or(0);
        record["activity"] == "idle" && screen_at >= report.completed_offset
    });
    drop(conn);
    host.kill_hard();
    torn["open_turn"] = serde_json::json!({ "offset": report.started_offset, "submitted": "echo done-$((1+1))" });
    torn["activity"] = serde_json::json!("busy");
    std::fs::write(record_path(&host, &pane), serde_json::to_vec(&torn).unwrap()).unwrap();
    host.restart();
    let mut conn = host.connect(Encoding::Json);
    back_idle_and_asked(&mut conn, &pane, 5);
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn a_submission_cut_by_a_killed_host_leaves_the_next_command_whole() {
    let mut host = bash_host();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    ask(&mut conn, &pane, "true");
    // Output that never goes quiet for long: a submission waits (up to a
    // second) for the echo of its text to settle before its Enter.
    ask(&mut conn, &pane, "(for i in $(seq 100); do echo tick; sleep 0.05; done) &");
    let mut cut = host.connect(Encoding::Json);
    cut.send(Request::Ask { pane: pane.clone(), text: "echo cut-$((6*7))".into(), timeout_ms: Some(20_000) });
    // Killed with the text typed and the Enter not yet.
    record_once(&host, &pane, |record| record["typing"] == serde_json::Value::Bool(true));
    host.kill_hard();
    host.restart();

    let mut conn = host.connect(Encoding::Json);
    let report = ask(&mut conn, &pane, "echo whole-$((6*7))");
    let lines: Vec<&str> = report.added_text.lines().map(str::trim).collect();
    assert!(lines.contains(&"whole-42"), "{report:?}");
    assert!(!report.added_text.contains("cut-"), "the cut text ran with it: {report:?}");
    assert_eq!(report.exit_code, Some(0), "{report:?}");
    record_once(&host, &pane, |record| record["typing"] == serde_json::Value::Bool(false));
    conn.ok(Request::Close { pane });
    host.stop();
}

/// Asks one after the other with no wait: each is answered by its own
/// command's end, never by the one before (the explorer's seed
/// 17226722790963545507 once saw an ask answered at once with the
/// previous command's status: its first signal was read from a count
/// published a moment after the previous ask had seen its end).
#[test]
fn asks_back_to_back_are_each_answered_by_their_own_command() {
    let host = bash_host();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    for round in 0..40u32 {
        let status = round % 7 + 1;
        let report = ask(&mut conn, &pane, &format!("printf 'own-%s\\n' {round}; (exit {status})"));
        assert_eq!(report.exit_code, Some(status), "round {round}: {report:?}");
        assert!(report.added_text.contains(&format!("own-{round}")), "round {round}: {report:?}");
        assert!(report.completed_offset > report.started_offset, "round {round}: {report:?}");
    }
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn a_submission_typed_ahead_of_a_running_command_and_cut_by_a_killed_host_is_not_run() {
    let mut host = bash_host();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    ask(&mut conn, &pane, "(for i in $(seq 100); do echo tick; sleep 0.05; done) &");
    let running = SendParams { pane: pane.clone(), text: "sleep 2".into(), enter: true, ..Default::default() };
    conn.ok(Request::Send(running));
    // Typed ahead while `sleep` runs: it waits in the terminal's line.
    let mut cut = host.connect(Encoding::Json);
    let ahead = SendParams { pane: pane.clone(), text: "echo cut-$((6*7))".into(), enter: true, ..Default::default() };
    cut.send(Request::Send(ahead));
    record_once(&host, &pane, |record| record["typing"] == serde_json::Value::Bool(true));
    host.kill_hard();
    host.restart();

    let mut conn = host.connect(Encoding::Json);
    wait_for("the running command to end", || {
        let Response::Inspected(detail) = conn.ok(Request::Inspect { pane: pane.clone() }) else { panic!() };
        if detail.pane.activity == "idle" {
            Ok(())
        } else {
            Err(detail.pane.activity)
        }
    });
    let report = ask(&mut conn, &pane, "echo whole-$((6*7))");
    let lines: Vec<&str> = report.added_text.lines().map(str::trim).collect();
    assert!(lines.contains(&"whole-42"), "{report:?}");
    assert!(!report.added_text.contains("cut-"), "the cut text ran with it: {report:?}");
    conn.ok(Request::Close { pane });
    host.stop();
}

/// An empty line that answers a running command's `read` ends the command
/// at once, and the host may read its prompt mark before it records the
/// submission. The host then opened a turn for the line that nothing would
/// end: the pane stayed busy for good (seen 1 time in 3 from the command
/// line, `send '' --enter` after `read line`). The line belongs to the
/// turn that was open when its Enter was written: after that turn's end
/// the pane is idle, and an ask is answered.
///
/// The host's jitter (`PANEHOST_JITTER`) delays it, now and then, between
/// writing an Enter and recording its submission, where the command's end
/// comes first.
#[test]
fn a_line_answering_a_commands_read_leaves_no_turn_open_after_the_command() {
    let host = TestHost::start_with_env(&[("SHELL", "/bin/bash"), ("PANEHOST_JITTER", "7:300")]);
    std::fs::write(host.home.join(".bashrc"), "PS1='ready> '\n").unwrap();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    let (subscription, mut seen) = conn.follow_from_start_until(&pane, "ready> ");
    let completed =
        |seen: &Transcript| seen.events.iter().filter(|event| matches!(event, Event::TurnCompleted { .. })).count();
    for round in 0..24 {
        let text = format!("printf 'reading-%s\\n' {round}; read line");
        let send = SendParams { pane: pane.clone(), text, enter: true, ..Default::default() };
        let sent = conn.send(Request::Send(send));
        let (id, answer) = conn.next_answer();
        assert_eq!(id, sent);
        answer.unwrap_or_else(|err| panic!("round {round}: {err:?}"));
        conn.follow_until_text(subscription, &mut seen, &format!("reading-{round}\r\n"));
        let before = completed(&seen);
        // The answer: the host has recorded it once its send is answered.
        let line = SendParams { pane: pane.clone(), text: String::new(), enter: true, ..Default::default() };
        let sent = conn.send(Request::Send(line));
        let (id, answer) = conn.next_answer();
        assert_eq!(id, sent);
        answer.unwrap_or_else(|err| panic!("round {round}: {err:?}"));
        conn.follow_until(subscription, &mut seen, |seen| completed(seen) > before);
        let asked = conn.send(Request::Ask { pane: pane.clone(), text: "(exit 4)".into(), timeout_ms: Some(20_000) });
        let (id, answer) = conn.next_answer();
        assert_eq!(id, asked);
        let turns: Vec<&Event> = seen
            .events
            .iter()
            .filter(|event| matches!(event, Event::TurnStarted { .. } | Event::TurnCompleted { .. }))
            .collect();
        match answer {
            Ok(Response::Answered(report)) => assert_eq!(report.exit_code, Some(4), "round {round}: {report:?}"),
            other => panic!("round {round}: the ask after the command's end got {other:?}; turns: {turns:#?}"),
        }
    }
    conn.ok(Request::Close { pane });
    host.stop();
}

/// An empty line at the prompt runs no command: bash draws its prompt
/// again, a `D` mark with no `C` before it. Read before the host recorded
/// the submission, that mark found no turn to end, and the turn the
/// submission then opened stayed open for good (found by the schedule
/// explorer with jitter, seed 775250576129094191). A prompt drawn after
/// the Enter means the line opened no turn of its own.
#[test]
fn an_empty_line_at_the_prompt_leaves_the_pane_idle() {
    let host = TestHost::start_with_env(&[("SHELL", "/bin/bash"), ("PANEHOST_JITTER", "11:300")]);
    std::fs::write(host.home.join(".bashrc"), "PS1='ready> '\n").unwrap();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    let (subscription, mut seen) = conn.follow_from_start_until(&pane, "ready> ");
    let prompts = |seen: &Transcript| seen.text().matches("ready> ").count();
    for round in 0..16 {
        let before = prompts(&seen);
        let line = SendParams { pane: pane.clone(), text: String::new(), enter: true, ..Default::default() };
        let sent = conn.send(Request::Send(line));
        let (id, answer) = conn.next_answer();
        assert_eq!(id, sent);
        answer.unwrap_or_else(|err| panic!("round {round}: {err:?}"));
        conn.follow_until(subscription, &mut seen, |seen| prompts(seen) > before);
        let mut inspect = host.connect(Encoding::Json);
        wait_for(&format!("round {round}: the pane to be idle after its prompt came back"), || {
            let Response::Inspected(detail) = inspect.ok(Request::Inspect { pane: pane.clone() }) else { panic!() };
            (detail.pane.activity == "idle").then_some(()).ok_or(detail.pane.activity)
        });
    }
    conn.ok(Request::Close { pane });
    host.stop();
}

/// A line typed while a command runs, and not read by it, waits in the
/// terminal and runs once that command ends. Between the command's end and
/// the waiting line's start mark the pane looked idle: an `ask` then was
/// typed after the waiting line and took that line's command's end for its
/// own (the schedule explorer with jitter, seed 5833669041766003942). The
/// prompt marks now say when a line waits as the prompt comes back, and
/// the pane stays in a turn until its command has ended: the `ask` is
/// told `TURN_IN_PROGRESS`, or answered by its own command.
#[test]
fn an_ask_after_a_command_with_a_line_typed_ahead_is_answered_by_its_own_command() {
    let host = TestHost::start_with_env(&[("SHELL", "/bin/bash"), ("PANEHOST_JITTER", "13:300")]);
    // A `PS0` that takes a moment (as a timing hook's may) puts that long
    // between reading a command and its start mark: the moment the
    // explorer found with jitter, made wide.
    std::fs::write(host.home.join(".bashrc"), "PS1='ready> '\nPS0='$(sleep 0.2)'\n").unwrap();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    let (subscription, mut seen) = conn.follow_from_start_until(&pane, "ready> ");
    // The turns that ended in output after `text` (a command's own line
    // of output), none while it is not there yet.
    let ended_after = |seen: &Transcript, text: &str| {
        let Some(at) = seen.text().find(text) else { return 0 };
        let at = seen.start + at as u64;
        seen.events.iter().filter(|event| matches!(event, Event::TurnCompleted { offset, .. } if *offset > at)).count()
    };
    let mut refused = 0;
    for round in 0..12 {
        let first = format!("first-{round}\r\n");
        // A command that runs a while, and a line typed, its Enter too,
        // while it runs: the sleep outlasts the jitter after the first
        // Enter (300 ms at most) and the second line's settle. (A line
        // whose Enter comes as the command ends is the moment still open,
        // RELIABILITY.md section 6.)
        for text in [format!("sleep 1.5; printf 'first-%s\\n' {round}"), format!("printf 'ahead-%s\\n' {round}")] {
            send_answered(&mut conn, SendParams { pane: pane.clone(), text, enter: true, ..Default::default() }, round);
        }
        conn.follow_until(subscription, &mut seen, |seen| ended_after(seen, &first) >= 1);
        // At once after the first command's end.
        let text = format!("printf 'asked-%s\\n' {round}; (exit 4)");
        let report = match ask_answer(&mut conn, &pane, &text) {
            Ok(Response::Answered(report)) => report,
            Err(error) if error.code == "TURN_IN_PROGRESS" => {
                refused += 1;
                // The waiting line's command runs; once it has ended, the
                // ask is answered.
                conn.follow_until(subscription, &mut seen, |seen| ended_after(seen, &first) >= 2);
                match ask_answer(&mut conn, &pane, &text) {
                    Ok(Response::Answered(report)) => report,
                    other => panic!(
                        "round {round}: asked again, {other:?}; seen: {:#?}",
                        &seen.events[seen.events.len().saturating_sub(14)..]
                    ),
                }
            }
            other => panic!("round {round}: {other:?}"),
        };
        assert_eq!(report.exit_code, Some(4), "round {round}: {report:?}");
        assert!(report.added_text.contains(&format!("asked-{round}")), "round {round}: {report:?}");
        assert!(!report.added_text.contains(&format!("ahead-{round}\n")), "round {round}: {report:?}");
    }
    eprintln!("{refused} of 12 asks came while the waiting line was about to run");
    conn.ok(Request::Close { pane });
    host.stop();
}

/// A command the host did not type (keys here; a submission a killed host
/// made, or a terminal attached, likewise) opens its turn when its start
/// mark is parsed. An `ask` right after its end is in the output, before
/// the host has told its turns of its marks, passed the busy check, and
/// then took that command's end, told a moment later, for its own: the
/// schedule explorer saw an answer with the earlier command's status and
/// a `completed_offset` before its `started_offset` (seed
/// 11151090909723198884, after a host kill). An ask's end is in output
/// after it began. The host's jitter delays it between parsing marks and
/// telling the turns, where this happens.
#[test]
fn an_ask_right_after_a_command_typed_as_keys_is_answered_by_its_own_command() {
    let host = TestHost::start_with_env(&[("SHELL", "/bin/bash"), ("PANEHOST_JITTER", "17:300")]);
    std::fs::write(host.home.join(".bashrc"), "PS1='ready> '\n").unwrap();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    let (subscription, mut seen) = conn.follow_from_start_until(&pane, "ready> ");
    for round in 0..12 {
        let keys = format!("printf 'keys-%s\\n' {round}; (exit 8)\r");
        send_answered(
            &mut conn,
            SendParams { pane: pane.clone(), bytes: keys.into_bytes().into(), ..Default::default() },
            round,
        );
        // Its end is in the output.
        let output = format!("keys-{round}\r\n\x1b]133;D;8");
        conn.follow_until(subscription, &mut seen, |seen| seen.text().contains(&output));
        let text = format!("printf 'asked-%s\\n' {round}; (exit 4)");
        // The keys' turn told in time: asked again once it ends.
        let report = ask_once_idle(&host, &mut conn, &pane, &text, round);
        assert_eq!(report.exit_code, Some(4), "round {round}: {report:?}");
        assert!(report.completed_offset > report.started_offset, "round {round}: {report:?}");
        assert!(report.added_text.contains(&format!("asked-{round}")), "round {round}: {report:?}");
    }
    conn.ok(Request::Close { pane });
    host.stop();
}

/// A line typed ahead as keys whose Enter comes after the prompt looked
/// for a waiting line (`read -t 0`; here while a prompt command sleeps,
/// after the marks): the prompt says no line waits, and the pane looks
/// idle until bash reads the line. An `ask` typed then ran after that line
/// and took its end for its own (exit 0, the line's output). The ask now
/// waits until bash waits for input, or the line's command has started
/// (then it is told `TURN_IN_PROGRESS`).
#[test]
fn an_ask_while_a_line_typed_ahead_is_not_read_yet_is_answered_by_its_own_command() {
    let host = TestHost::start_with_env(&[("SHELL", "/bin/bash")]);
    std::fs::write(host.home.join(".bashrc"), "PS1='ready> '\nPROMPT_COMMAND='sleep 0.5'\n").unwrap();
    let mut conn = host.connect(Encoding::Json);
    let pane = conn.start(start_params("shell", &[])).id;
    let (subscription, mut seen) = conn.follow_from_start_until(&pane, "ready> ");
    let keys = |text: String| SendParams { pane: pane.clone(), bytes: text.into_bytes().into(), ..Default::default() };
    for round in 0..3 {
        send_answered(&mut conn, keys(format!("printf 'first-%s\\n' {round}\r")), round);
        // Its end mark is out: bash has looked for a waiting line, and
        // sleeps in the prompt command.
        let end = format!("first-{round}\r\n\x1b]133;D;0");
        conn.follow_until(subscription, &mut seen, |seen| seen.text().contains(&end));
        send_answered(&mut conn, keys(format!("printf 'ahead-%s\\n' {round}; sleep 1\r")), round);
        let text = format!("printf 'asked-%s\\n' {round}; (exit 4)");
        let report = ask_once_idle(&host, &mut conn, &pane, &text, round);
        assert_eq!(report.exit_code, Some(4), "round {round}: {report:?}");
        assert!(report.added_text.contains(&format!("asked-{round}")), "round {round}: {report:?}");
        assert!(!report.added_text.contains("ahead-"), "round {round}: {report:?}");
    }
    conn.ok(Request::Close { pane });
    host.stop();
}
