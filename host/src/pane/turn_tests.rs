//! Tests of the turn tracker (`turn.rs`).

use super::*;

/// The hooks a built-in runtime injects.
fn hooks_of(runtime: &str) -> Option<HookInjection> {
    let descriptors = panehost_adapters::runtimes::built_in();
    descriptors.into_iter().find(|descriptor| descriptor.id == runtime).and_then(|descriptor| descriptor.hook_injection)
}

/// The signal of a report that acts at once.
fn now(reported: Reported) -> Option<TurnSignal> {
    match reported {
        Reported::Now(signal) => signal,
        Reported::EndPending(_) => panic!("a prompt mark acts at once"),
    }
}

#[test]
fn input_starts_a_turn_and_a_notification_ends_it() {
    let mut tracker = TurnTracker::new(CompletionSignal::TerminalNotification, None);
    assert_eq!(tracker.activity(), activity::UNKNOWN);
    let started = tracker.input_submitted(10, "hi").unwrap();
    assert!(matches!(started.event, Event::TurnStarted { offset: 10, ref source } if source == "input"));
    assert!(tracker.input_submitted(11, "hi").is_none(), "one turn at a time");
    // Recorded once the output after it has settled, where it had got to.
    let Reported::EndPending(pending) = tracker.terminal_notice(&TerminalNotice::Osc9("done".into()), 40) else {
        panic!("a notification's end waits for the output to settle")
    };
    // More bells while it waits add no wait of their own.
    assert!(matches!(tracker.terminal_notice(&TerminalNotice::Bell, 45), Reported::Now(None)));
    let done = tracker.end_reported(pending, 50).unwrap();
    assert!(
        matches!(done.event, Event::TurnCompleted { offset: 50, ref source, .. } if source == "terminal_notification")
    );
    assert_eq!(tracker.activity(), activity::IDLE);
    assert_eq!(tracker.signals_from(1).len(), 1);
    assert_eq!(tracker.first_seq_at(20), 1);
    // Once it is recorded, the next notification waits again.
    assert!(matches!(tracker.terminal_notice(&TerminalNotice::Bell, 60), Reported::EndPending(_)));
}

#[test]
fn signals_a_runtime_does_not_rely_on_are_ignored() {
    let mut hooked = TurnTracker::new(CompletionSignal::Hook, hooks_of("claude"));
    hooked.input_submitted(0, "hi");
    assert!(matches!(hooked.terminal_notice(&TerminalNotice::Bell, 5), Reported::Now(None)));
    assert!(hooked.quiet(5).is_none());
    assert!(hooked.busy());
    let mut unobserved = TurnTracker::new(CompletionSignal::Unobserved, None);
    assert!(unobserved.input_submitted(0, "hi").is_some(), "the start is still reported");
    assert!(unobserved.quiet(3).is_none());
    assert!(matches!(unobserved.reported("turn_completed", "", 3), Reported::Now(None)));
    assert!(!unobserved.busy());
    assert_eq!(unobserved.activity(), activity::UNKNOWN);
}

#[test]
fn hook_payloads_tell_approval_from_waiting_and_carry_usage() {
    let mut tracker = TurnTracker::new(CompletionSignal::Hook, hooks_of("claude"));
    let now = |reported: Reported| match reported {
        Reported::Now(Some(signal)) => signal,
        other => panic!("{other:?}"),
    };
    let end = |tracker: &mut TurnTracker, payload: &str, offset: u64| match tracker.reported(
        "turn_completed",
        payload,
        offset,
    ) {
        Reported::EndPending(pending) => tracker.end_reported(pending, offset + 1).unwrap(),
        other => panic!("{other:?}"),
    };
    let approval =
        now(tracker.reported("notification", r#"{"message":"Claude needs your permission to use Bash"}"#, 3));
    assert!(matches!(approval.event, Event::ApprovalRequested { .. }));
    let waiting = now(tracker.reported("notification", r#"{"message":"Claude is waiting for your input"}"#, 4));
    assert!(matches!(waiting.event, Event::AwaitingInput { .. }));
    let done = end(&mut tracker, r#"{"usage":{"input_tokens":12,"output_tokens":34},"total_cost_usd":0.0021}"#, 9);
    match done.event {
        Event::TurnCompleted { usage, source, offset, .. } => {
            assert_eq!((source.as_str(), offset), ("hook", 10), "recorded where the output settled");
            assert_eq!(
                (usage.kind.as_str(), usage.input_tokens, usage.output_tokens, usage.cost_micro_usd),
                ("measured", Some(12), Some(34), Some(2100))
            );
        }
        other => panic!("{other:?}"),
    }
    let done = end(&mut tracker, "not json", 10);
    assert!(matches!(done.event, Event::TurnCompleted { usage, .. } if usage.kind == "unavailable"));
}

#[test]
fn an_approval_is_its_own_activity_and_clears_as_a_wait_does() {
    let mut tracker = TurnTracker::new(CompletionSignal::Hook, hooks_of("claude"));
    let approve = r#"{"message":"Claude needs your permission to use Bash"}"#;
    let wait = r#"{"message":"Claude is waiting for your input"}"#;
    tracker.input_submitted(0, "run it");
    assert_eq!(tracker.activity(), activity::BUSY);
    assert!(matches!(tracker.reported("notification", approve, 3), Reported::Now(Some(_))));
    assert_eq!(tracker.activity(), activity::AWAITING_APPROVAL);
    assert!(tracker.busy(), "asking leaves the turn open");
    // The answer resumes the turn.
    assert!(tracker.input_submitted(5, "yes").is_none());
    assert_eq!(tracker.activity(), activity::BUSY);
    // A wait that is no approval is the other activity, and a later
    // approval replaces it.
    tracker.reported("notification", wait, 7);
    assert_eq!(tracker.activity(), activity::AWAITING_INPUT);
    tracker.reported("notification", approve, 8);
    assert_eq!(tracker.activity(), activity::AWAITING_APPROVAL);
    // The end of the turn clears it, and so does the process's exit.
    let Reported::EndPending(pending) = tracker.reported("turn_completed", "{}", 9) else {
        panic!("a hook's end waits for the output to settle")
    };
    tracker.end_reported(pending, 10);
    assert_eq!(tracker.activity(), activity::IDLE);
    tracker.reported("notification", approve, 11);
    assert_eq!(tracker.activity(), activity::AWAITING_APPROVAL);
    tracker.exited();
    assert_eq!(tracker.activity(), activity::UNKNOWN);
}

#[test]
fn a_pane_taken_back_while_its_agent_waits_still_waits() {
    for waiting in [activity::AWAITING_APPROVAL, activity::AWAITING_INPUT] {
        // Between turns (a notification with no turn open).
        let mut between = TurnTracker::new(CompletionSignal::Hook, hooks_of("claude"));
        between.taken_back(Some(waiting));
        assert_eq!(between.activity(), waiting);
        // Inside the turn that asked: it is opened again, still waiting.
        let mut inside = TurnTracker::new(CompletionSignal::Hook, hooks_of("claude"));
        inside.taken_back(Some(waiting));
        let reopened = inside.reopen(40, "run it").unwrap();
        assert!(matches!(&reopened.event, Event::TurnStarted { source, .. } if source == "restored"));
        assert_eq!((inside.busy(), inside.activity()), (true, waiting));
        // The user's answer resumes it.
        inside.input_submitted(50, "yes");
        assert_eq!(inside.activity(), activity::BUSY);
    }
    // A busy pane's reopened turn is busy.
    let mut busy = TurnTracker::new(CompletionSignal::Hook, hooks_of("claude"));
    busy.taken_back(Some(activity::BUSY));
    busy.reopen(40, "run it");
    assert_eq!(busy.activity(), activity::BUSY);
}

#[test]
fn a_notify_report_of_another_thread_is_ignored() {
    let mut tracker = TurnTracker::new(CompletionSignal::NotifyProgram, hooks_of("codex"));
    tracker.input_submitted(0, "PING");
    let title = r#"{"type":"agent-turn-complete","thread-id":"side","turn-id":"s1","input-messages":["Generate a title.\nUser prompt:\nPING"]}"#;
    assert!(matches!(tracker.reported("turn_completed", title, 5), Reported::Now(None)));
    assert!(tracker.busy());
    let main = r#"{"type":"agent-turn-complete","thread-id":"main","turn-id":"m1","input-messages":["PING"]}"#;
    assert!(matches!(tracker.reported("turn_completed", main, 6), Reported::EndPending(_)));
}

#[test]
fn a_submitted_command_is_awaited_until_its_own_start_mark() {
    let mut tracker = TurnTracker::new(CompletionSignal::ShellIntegration, hooks_of("shell"));
    tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 5);
    assert!(!tracker.awaits_its_command(), "no turn");
    tracker.input_submitted(10, "sleep 1");
    assert!(tracker.awaits_its_command());
    // A mark in output read before the input was written is not its.
    tracker.terminal_notice(&TerminalNotice::CommandStarted, 10);
    assert!(tracker.awaits_its_command());
    tracker.terminal_notice(&TerminalNotice::CommandStarted, 12);
    assert!(!tracker.awaits_its_command());
    // A typed command's turn is opened by its start: nothing to await.
    tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 20);
    tracker.terminal_notice(&TerminalNotice::CommandStarted, 30);
    assert!(tracker.busy() && !tracker.awaits_its_command());
    // Nor on a pane whose turns end otherwise.
    let mut heuristic = TurnTracker::new(CompletionSignal::ScreenHeuristic, None);
    heuristic.input_submitted(0, "ls");
    assert!(!heuristic.awaits_its_command());
}

/// Explorer seed 6468917012778335700 (a pane restored fresh after its
/// keeper was killed, whose shell was hung up at once): the watch told
/// `pane_exited`, then `idle`, from the prompt mark parsed after the exit.
#[test]
fn after_the_exit_the_activity_stays_unknown_whatever_output_is_parsed_later() {
    let mut tracker = TurnTracker::new(CompletionSignal::ShellIntegration, hooks_of("shell"));
    tracker.exited();
    tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 5);
    assert_eq!(tracker.activity(), activity::UNKNOWN, "a first prompt parsed after the exit");
    tracker.terminal_notice(&TerminalNotice::CommandStarted, 10);
    tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 20);
    assert_eq!(tracker.activity(), activity::UNKNOWN, "a command's marks parsed after the exit");
}

#[test]
fn a_command_whose_marks_were_parsed_before_its_submission_was_told_opens_no_second_turn() {
    let mut tracker = TurnTracker::new(CompletionSignal::ShellIntegration, hooks_of("shell"));
    tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 5);
    // The Enter was written at 10; the command ran and its marks were
    // parsed before the host recorded the submission.
    assert!(now(tracker.terminal_notice(&TerminalNotice::CommandStarted, 12)).is_some());
    assert!(now(tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(3)), 20)).is_some());
    assert!(tracker.input_submitted(10, "echo hi; (exit 3)").is_none());
    assert!(!tracker.busy(), "a turn opened that nothing would end");
    assert_eq!(tracker.activity(), activity::IDLE);
    // The next submission, after all that output, opens its turn.
    assert!(tracker.input_submitted(20, "true").is_some());
    assert!(tracker.busy());
}

#[test]
fn an_answer_to_a_running_commands_read_opens_no_turn_when_the_command_ends_before_it_is_told() {
    let mut tracker = TurnTracker::new(CompletionSignal::ShellIntegration, hooks_of("shell"));
    tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 5);
    assert!(tracker.input_submitted(10, "echo reading; read line").is_some());
    tracker.terminal_notice(&TerminalNotice::CommandStarted, 12);
    // The answer's Enter was written at 40, while the command read;
    // the command ended, and its prompt mark was parsed, before the
    // host recorded the submission.
    assert!(now(tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 50)).is_some());
    assert!(tracker.input_submitted(40, "").is_none());
    assert!(!tracker.busy(), "a turn opened that nothing would end");
    assert_eq!(tracker.activity(), activity::IDLE);
    // A command typed ahead that way opens its turn by its own mark.
    let typed = now(tracker.terminal_notice(&TerminalNotice::CommandStarted, 60)).unwrap();
    assert!(matches!(&typed.event, Event::TurnStarted { source, .. } if source == "shell_integration"));
    assert!(now(tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 70)).is_some());
    // A submission after the end was read opens its turn as usual.
    assert!(tracker.input_submitted(70, "true").is_some());
    assert!(tracker.busy());
}

#[test]
fn an_empty_line_whose_prompt_was_read_before_it_was_told_opens_no_turn() {
    let mut tracker = TurnTracker::new(CompletionSignal::ShellIntegration, hooks_of("shell"));
    tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 5);
    // An empty line at the prompt, its Enter written at 10: bash draws
    // its prompt again (a `D` mark, no `C`), read before the host
    // recorded the submission. No turn was open for the mark to end.
    assert!(now(tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 20)).is_none());
    assert!(tracker.input_submitted(10, "").is_none());
    assert!(!tracker.busy(), "a turn opened that nothing would end");
    // Told in time, the empty line's turn opens and its prompt ends it.
    assert!(tracker.input_submitted(20, "").is_some());
    assert!(now(tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 30)).is_some());
    assert!(!tracker.busy());
}

/// A line typed while a command ran, and not read by it, waits in the
/// terminal: the prompt that follows begins with `input_waiting`, and the
/// pane stays in a turn until that line's command has ended. An `ask` in
/// between is told the pane is busy instead of being typed after the line
/// and answered with its command's end (explorer, seed
/// 5833669041766003942).
#[test]
fn a_line_waiting_when_the_prompt_comes_back_keeps_the_pane_in_a_turn_until_its_command_ends() {
    let mut tracker = TurnTracker::new(CompletionSignal::ShellIntegration, hooks_of("shell"));
    tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 5);
    assert!(tracker.input_submitted(10, "sleep 1").is_some());
    assert!(now(tracker.terminal_notice(&TerminalNotice::CommandStarted, 12)).is_none());
    // Typed ahead while `sleep` runs: the open turn takes it.
    assert!(tracker.input_submitted(14, "echo ahead").is_none());
    let ended = now(tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 30)).unwrap();
    assert!(matches!(ended.event, Event::TurnCompleted { offset: 30, .. }), "{ended:?}");
    let ahead = now(tracker.terminal_notice(&TerminalNotice::InputWaiting, 31)).expect("the waiting line's turn");
    assert!(
        matches!(&ahead.event, Event::TurnStarted { offset: 31, source } if source == "shell_integration"),
        "{ahead:?}"
    );
    assert!(tracker.busy());
    assert_eq!(tracker.activity(), activity::BUSY);
    // Its own marks: the command starts, then ends; the pane is idle.
    assert!(now(tracker.terminal_notice(&TerminalNotice::CommandStarted, 40)).is_none());
    assert!(tracker.busy());
    let done = now(tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 50)).unwrap();
    assert!(matches!(done.event, Event::TurnCompleted { offset: 50, .. }), "{done:?}");
    assert_eq!(tracker.activity(), activity::IDLE);
    // A plain prompt after a line a `read` took leaves the pane idle.
    assert!(tracker.input_submitted(60, "read x").is_some());
    assert!(tracker.input_submitted(65, "answer").is_none());
    assert!(now(tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 70)).is_some());
    assert!(!tracker.busy());
}

/// A waiting line seen in the output a restarted host caught up on: a
/// command is about to run, so the pane is in a turn.
#[test]
fn a_waiting_line_in_the_output_caught_up_on_opens_a_turn() {
    let mut tracker = TurnTracker::new(CompletionSignal::ShellIntegration, hooks_of("shell"));
    tracker.taken_back(Some(activity::IDLE));
    let notices = [TerminalNotice::CommandFinished(Some(0)), TerminalNotice::InputWaiting];
    let signal = tracker.caught_up(&notices, 80).expect("a turn opens");
    assert!(matches!(&signal.event, Event::TurnStarted { offset: 80, source } if source == "restored"), "{signal:?}");
    assert!(tracker.busy());
}

#[test]
fn prompt_marks_end_a_command_with_its_status_and_open_a_typed_one() {
    let mut tracker = TurnTracker::new(CompletionSignal::ShellIntegration, hooks_of("shell"));
    // The first prompt's mark ends nothing.
    assert!(now(tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 5)).is_none());
    tracker.input_submitted(10, "false");
    // The command's own mark: the host's input opened the turn already.
    assert!(now(tracker.terminal_notice(&TerminalNotice::CommandStarted, 12)).is_none());
    assert!(tracker.quiet(20).is_none(), "quiet output ends nothing here");
    assert!(now(tracker.terminal_notice(&TerminalNotice::Bell, 21)).is_none(), "nor does a bell");
    let done = now(tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(1)), 30)).unwrap();
    assert!(
        matches!(&done.event, Event::TurnCompleted { source, exit_code: Some(1), offset: 30, .. } if source == "shell_integration"),
        "{done:?}"
    );
    assert_eq!(tracker.activity(), activity::IDLE);
    // A command typed in an attached terminal is a turn of its own.
    let typed = now(tracker.terminal_notice(&TerminalNotice::CommandStarted, 40)).unwrap();
    assert!(matches!(&typed.event, Event::TurnStarted { source, .. } if source == "shell_integration"));
    let ended = now(tracker.terminal_notice(&TerminalNotice::CommandFinished(None), 50)).unwrap();
    assert!(matches!(ended.event, Event::TurnCompleted { exit_code: None, .. }));
    // Marks mean nothing to a pane that relies on something else.
    let mut heuristic = TurnTracker::new(CompletionSignal::ScreenHeuristic, None);
    heuristic.input_submitted(0, "ls");
    assert!(now(heuristic.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 5)).is_none());
    assert!(heuristic.busy());
}

#[test]
fn a_shell_is_ready_and_idle_at_its_first_prompt_and_earlier_marks_end_no_submitted_turn() {
    let mut tracker = TurnTracker::new(CompletionSignal::ShellIntegration, hooks_of("shell"));
    assert!(!tracker.ready_for_input(), "not before its first prompt");
    assert_eq!(tracker.activity(), activity::UNKNOWN);
    assert!(now(tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 5)).is_none());
    assert!(tracker.ready_for_input());
    assert_eq!(tracker.activity(), activity::IDLE);
    // Input written when the output had reached 10: a mark in output
    // parsed only up to 10 was read before it, and is an earlier
    // prompt's.
    tracker.input_submitted(10, "echo hi; (exit 3)");
    assert!(now(tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 10)).is_none());
    assert!(tracker.busy());
    let done = now(tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(3)), 30)).unwrap();
    assert!(matches!(done.event, Event::TurnCompleted { exit_code: Some(3), .. }), "{done:?}");
    // A command typed as keys starts and ends within one chunk.
    assert!(now(tracker.terminal_notice(&TerminalNotice::CommandStarted, 40)).is_some());
    assert!(now(tracker.terminal_notice(&TerminalNotice::CommandFinished(Some(1)), 40)).is_some());
    // Other programs are ready from the start; so is a shell taken back.
    assert!(TurnTracker::new(CompletionSignal::Hook, hooks_of("claude")).ready_for_input());
    let mut taken_back = TurnTracker::new(CompletionSignal::ShellIntegration, hooks_of("shell"));
    taken_back.taken_back(Some("idle"));
    assert!(taken_back.ready_for_input());
    // Taken back before its first prompt (its record never knew one):
    // ready at the first mark, caught up on or new.
    let mut early = TurnTracker::new(CompletionSignal::ShellIntegration, hooks_of("shell"));
    early.taken_back(Some("unknown"));
    assert!(!early.ready_for_input());
    early.caught_up(&[TerminalNotice::CommandFinished(Some(0))], 20);
    assert!(early.ready_for_input());
    let mut older = TurnTracker::new(CompletionSignal::ShellIntegration, hooks_of("shell"));
    older.taken_back(None);
    assert!(older.ready_for_input(), "an earlier host's record, with no activity");
    let mut later = TurnTracker::new(CompletionSignal::ShellIntegration, hooks_of("shell"));
    later.taken_back(Some("unknown"));
    assert!(!later.ready_for_input());
    assert!(now(later.terminal_notice(&TerminalNotice::CommandFinished(Some(0)), 30)).is_none());
    assert!(later.ready_for_input());
    assert_eq!(taken_back.activity(), activity::IDLE, "it was between turns");
    let mut unsure = TurnTracker::new(CompletionSignal::ShellIntegration, hooks_of("shell"));
    unsure.taken_back(Some("busy"));
    assert_eq!(unsure.activity(), activity::UNKNOWN, "a busy pane's turn is reopened, or nothing is known");
}

#[test]
fn a_restored_shells_last_mark_says_whether_a_command_runs() {
    use TerminalNotice::{CommandFinished, CommandStarted};
    // A turn open in the record, whose command ended while no host ran.
    let mut ended = TurnTracker::new(CompletionSignal::ShellIntegration, hooks_of("shell"));
    ended.taken_back(Some("busy"));
    ended.reopen(100, "sleep 1; (exit 4)");
    let done = ended.caught_up(&[CommandStarted, CommandFinished(Some(4))], 150).unwrap();
    assert!(matches!(done.event, Event::TurnCompleted { exit_code: Some(4), offset: 150, .. }), "{done:?}");
    assert_eq!((ended.busy(), ended.activity()), (false, activity::IDLE));
    // A command that started after the record was last saved.
    let mut running = TurnTracker::new(CompletionSignal::ShellIntegration, hooks_of("shell"));
    running.taken_back(Some("idle"));
    let started = running.caught_up(&[CommandFinished(Some(0)), CommandStarted], 150).unwrap();
    assert!(matches!(started.event, Event::TurnStarted { .. }));
    assert!(running.busy());
    // No mark after the saved screen: the record stands.
    let mut quiet = TurnTracker::new(CompletionSignal::ShellIntegration, hooks_of("shell"));
    quiet.taken_back(Some("idle"));
    assert!(quiet.caught_up(&[TerminalNotice::Bell], 10).is_none());
    assert_eq!(quiet.activity(), activity::IDLE);
    // Other runtimes' notices are not read after the fact.
    let mut agent = TurnTracker::new(CompletionSignal::TerminalNotification, None);
    agent.reopen(5, "hi");
    assert!(agent.caught_up(&[TerminalNotice::Bell], 10).is_none());
    assert!(agent.busy());
}

#[test]
fn a_notification_read_before_the_input_does_not_end_its_turn() {
    let mut tracker = TurnTracker::new(CompletionSignal::TerminalNotification, None);
    tracker.input_submitted(10, "hi");
    assert!(matches!(tracker.terminal_notice(&TerminalNotice::Bell, 10), Reported::Now(None)));
    assert!(tracker.busy());
    assert!(matches!(tracker.terminal_notice(&TerminalNotice::Bell, 11), Reported::EndPending(_)));
}

#[test]
fn the_log_is_bounded() {
    let mut tracker = TurnTracker::new(CompletionSignal::ScreenHeuristic, None);
    for offset in 0..1000 {
        tracker.input_submitted(offset, "");
        tracker.quiet(offset);
    }
    assert_eq!(tracker.signals_from(0).len(), limits::SIGNAL_LOG_LEN);
}
