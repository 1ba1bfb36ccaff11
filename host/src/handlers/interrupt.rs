//! `interrupt`: the runtime's keys, then what confirms the stop (the end
//! of the turn, quiet output, the program's end), escalating to signals
//! where nothing does; at a shell, the moments its line editor needs.

use crate::handlers::shell_reading::{line_editor_reading, reading_at_its_prompt};
use crate::handlers::turns::{completed_since, wait_until_ready, write_error};
use crate::jitter::{self, Point};
use crate::limits::{self, HEURISTIC_QUIET, INTERRUPT_CONFIRM_WAIT};
use crate::pane::TurnSignal;
use crate::pane::{end_processes, InputPlace, InputTurn, Pane, Reach};
use panehost_adapters::CompletionSignal;
use panehost_ipc::response::{interrupt_action as action, interrupt_outcome as outcome};
use panehost_ipc::{ErrorBody, Event, InterruptReport, InterruptStep, PaneSweep, Response};
use rustix::process::{Pid, Signal};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Waits until a shell interrupted at its prompt has drawn the prompt
/// again (an end mark after the `prompts` it had drawn, then the prompt's
/// own mark): its line editor then reads again. Input sent before would
/// lose its first byte to the line being reset.
async fn prompt_redrawn(pane: &Pane, prompts: u64) {
    let mut progress = pane.progress();
    let _ = progress.until(|state| state.prompts > prompts || state.over()).await;
    line_editor_reading(pane).await;
}

/// The status a shell gives a command a Ctrl-C ended: 128 + SIGINT.
const SIGINT_STATUS: u32 = 130;

/// True when the turn an interrupt was meant for ended on its own: a
/// shell's command that ended with a status other than a Ctrl-C's (130),
/// so the keys came too late for it.
fn turn_ended_on_its_own(pane: &Pane, first_seq: u64) -> bool {
    if pane.completion() != CompletionSignal::ShellIntegration {
        return false;
    }
    matches!(
        completed_since(pane, first_seq, None),
        Some(TurnSignal { event: Event::TurnCompleted { exit_code, .. }, .. }) if exit_code != Some(SIGINT_STATUS)
    )
}

/// The keys again, at the prompt, for an interrupt whose command ended on
/// its own ([`turn_ended_on_its_own`]): the first keys then reached the
/// shell between two commands, and bash can hold such a Ctrl-C and act on
/// it only once the next line is read, taking that line's first byte with
/// it (`bash: rintf: command not found`; the schedule explorer, seed
/// 1960887051468556976; with a Ctrl-C within 250 µs of a command's end
/// mark, 20 times in 200: `shell_interrupts.rs`). Keys
/// sent once the line editor waits for input are acted on at once, a held
/// Ctrl-C with them, and clear only an empty line; their prompt is waited
/// for, as for any interrupt at an idle prompt, with the input line still
/// held. Not sent when the first keys were acted on at the prompt (an end
/// mark of their own came). Returns the step's detail and what was
/// observed; `None` when nothing was sent.
async fn interrupt_the_prompt_again(
    pane: &Pane,
    held: &InputTurn,
    keys: &[u8],
    prompts_before_keys: u64,
) -> Option<(String, String)> {
    // Until the shell waits for input, and what it printed by then is told.
    let settled = async {
        reading_at_its_prompt(pane).await;
        pane.wait_output_quiet(limits::STRAY_INTERRUPT_QUIET, limits::PROMPT_REDRAW_WAIT).await;
    };
    let _ = tokio::time::timeout(limits::PROMPT_REDRAW_WAIT * 2, settled).await;
    let prompts = pane.current_progress().prompts;
    if prompts > prompts_before_keys + 1 {
        // An end mark after the command's own: the keys were acted on at
        // the prompt already, and nothing is held.
        return None;
    }
    pane.write_input(held, keys, limits::INPUT_TIMEOUT).await.ok()?;
    let redrawn = tokio::time::timeout(limits::PROMPT_REDRAW_WAIT, prompt_redrawn(pane, prompts)).await.is_ok();
    // A first Ctrl-C acted on at the prompt just now has an end mark of
    // its own, which may come a moment after this one: it is let come
    // before the input line is let go, for no `ask` to take it for its own.
    pane.wait_output_quiet(limits::STRAY_INTERRUPT_QUIET, limits::PROMPT_REDRAW_WAIT).await;
    let detail = format!("{} again, at the prompt: the command had ended on its own", keys.escape_ascii());
    let observed = if redrawn {
        "the prompt was drawn again".to_owned()
    } else {
        format!("no prompt within {} ms", limits::PROMPT_REDRAW_WAIT.as_millis())
    };
    Some((detail, observed))
}

/// Returns once the pane no longer waits for the command of its open
/// turn to start (it has, the turn ended, or the pane is gone).
async fn command_started(pane: &Pane) {
    let mut progress = pane.progress();
    while pane.awaits_its_command() {
        if progress.changed().await.is_err() {
            return;
        }
    }
}

/// `interrupt`: the runtime's keys at once. Without `terminate`, when a
/// turn is known to be running, the stop is then confirmed (the end of the
/// turn, the output going quiet, the process ending), escalating to SIGINT
/// for the terminal's foreground process group when nothing confirms it;
/// when no turn is known to be running, the answer comes at once. With
/// `terminate`, only the end of the program confirms: the foreground
/// process group found at the start gets SIGINT, SIGTERM and SIGKILL in
/// turn until it has ended.
///
/// The keys are written when `place` comes up in the pane's input line.
pub(crate) async fn handle_interrupt(
    pane: Arc<Pane>,
    place: InputPlace,
    terminate: bool,
) -> Result<Response, ErrorBody> {
    let id = &pane.info().id;
    // Keys sent to a shell still reading its startup file would cut it
    // short (its prompt marks with it): they wait for its first prompt,
    // as a submission does. Keys sent to a CLI before it reads raw keys
    // would meet the terminal's own line discipline (a Ctrl-C ends the
    // CLI as it starts): they wait for raw mode.
    if !pane.current_progress().ready_for_input || (pane.awaits_raw_mode() && !pane.terminal_in_raw_mode()) {
        wait_until_ready(&pane).await;
        // Its first prompt mark comes before the prompt is drawn and the
        // line editor reads: let the drawing settle too.
        pane.wait_output_quiet(limits::SUBMIT_SETTLE, limits::SUBMIT_SETTLE_LIMIT).await;
    }
    let turn = place.wait().await;
    if pane.awaits_its_command() {
        // A line the host just submitted that the shell has not taken
        // yet: a Ctrl-C now would be acted on by the terminal at once,
        // which throws away the input not read yet, and a line cut short
        // would run. Wait (holding the input line) until its command has
        // started, or for so long.
        let _ = tokio::time::timeout(limits::COMMAND_START_WAIT, command_started(&pane)).await;
    }
    let began = Instant::now();
    let mut steps = Vec::new();
    let step = |action: &str, detail: String, steps: &mut Vec<InterruptStep>| {
        steps.push(InterruptStep { action: action.into(), detail, at_ms: began.elapsed().as_millis() as u64 });
    };
    let report = |outcome: &str, steps: Vec<InterruptStep>, sweep: Option<PaneSweep>| {
        Ok(Response::Interrupted(InterruptReport { pane: id.clone(), outcome: outcome.into(), steps, sweep }))
    };
    if pane.current_progress().exit.is_some() {
        return report(outcome::NOT_RUNNING, steps, None);
    }
    if !pane.busy() && pane.completion() == CompletionSignal::ShellIntegration {
        // Between commands: bash has drawn its prompt mark, but its line
        // editor does not read yet. A Ctrl-C now is acted on when it
        // starts to read, and takes the first byte of what is typed next
        // with it (`bash: rintf: command not found` after two interrupts
        // in a row; schedule explorer, seed 10988931725195551003). Its
        // prompt's end mark says it reads (seeds 5874923024644500350,
        // 15060765274300354626: with bracketed paste on but the prompt not
        // drawn yet, no `^C` was echoed and the next command was cut), and
        // the kernel that its wait for input has begun (seed
        // 13531805252790857626: a Ctrl-C just after the prompt was drawn
        // was acted on only when the next command came, and took its first
        // byte).
        let _ = tokio::time::timeout(limits::PROMPT_REDRAW_WAIT, reading_at_its_prompt(&pane)).await;
    }
    let (was_busy, first_seq) = pane.turn_state();
    let prompts = pane.current_progress().prompts;
    // What `terminate` ends: the program in the foreground now, and every
    // process it started, found while they are still in its group.
    let target = pane.foreground_group();
    let program = match (terminate, target) {
        (true, Some(group)) => {
            let group = group.as_raw_nonzero().get() as u32;
            // The pane's own process is the program: all of the pane ends.
            let reach = if group == pane.info().pid { Reach::Pane } else { Reach::Program };
            Some(pane.find_processes(reach, Some(group)).await)
        }
        _ => None,
    };
    let keys = pane.interrupt_keys().to_vec();
    for press in 0..pane.interrupt_presses() {
        if press > 0 {
            tokio::time::sleep(limits::KEY_PRESS_GAP).await;
        }
        pane.write_input(&turn, &keys, limits::INPUT_TIMEOUT).await.map_err(|err| write_error(id, err))?;
    }
    jitter::at(Point::AfterInterruptKeys).await;
    if !was_busy && pane.completion() == CompletionSignal::ShellIntegration {
        // Input behind this interrupt waits (its place in the line is
        // held) until the shell reads again.
        let _ = tokio::time::timeout(limits::PROMPT_REDRAW_WAIT, prompt_redrawn(&pane, prompts)).await;
    }
    // The input line stays held until the answer: what was sent after the
    // interrupt (another interrupt, the next ask) meets the program as the
    // interrupt leaves it, not a turn still ending (it was refused with
    // TURN_IN_PROGRESS, or its Ctrl-C landed between two commands).
    let held = turn;
    let presses = if pane.interrupt_presses() > 1 { format!(" x{}", pane.interrupt_presses()) } else { String::new() };
    step(action::KEYS, format!("{}{presses}", keys.escape_ascii()), &mut steps);

    if let (Some(target), Some(program)) = (target, program) {
        let mut outcome =
            terminate_program(&pane, target, &mut |action, detail| step(action, detail, &mut steps)).await;
        let swept = end_processes(program).await;
        step(action::SWEEP, describe_sweep(&swept), &mut steps);
        // The steps end with what was observed, as always.
        if swept.survivors.is_empty() {
            step(action::OBSERVED, "nothing the program started is left".into(), &mut steps);
        } else {
            step(action::OBSERVED, format!("{} processes survived SIGKILL", swept.survivors.len()), &mut steps);
            outcome = outcome::UNCONFIRMED;
        }
        return report(outcome, steps, Some(swept));
    }
    // Without a turn known to be running there is nothing to confirm, and
    // escalating is not safe: many CLIs exit on a second Ctrl-C at an idle
    // prompt. The keys were sent; that is the answer, at once.
    if !was_busy {
        step(action::OBSERVED, "no turn was known to be running".into(), &mut steps);
        return report(outcome::UNCONFIRMED, steps, None);
    }
    let confirmation = confirm(&pane, first_seq, was_busy).await;
    if let Some(outcome) =
        conclude(&pane, confirmation, outcome::TURN_CANCELLED, &mut |action, detail| step(action, detail, &mut steps))
    {
        if turn_ended_on_its_own(&pane, first_seq) {
            if let Some((detail, observed)) = interrupt_the_prompt_again(&pane, &held, &keys, prompts).await {
                step(action::KEYS, detail, &mut steps);
                step(action::OBSERVED, observed, &mut steps);
            }
        }
        return report(outcome, steps, None);
    }
    if pane.completion() == CompletionSignal::Unobserved {
        step(action::OBSERVED, "nothing confirms the stop".into(), &mut steps);
        return report(outcome::UNCONFIRMED, steps, None);
    }
    // The keys ended the job they were meant for (its process group is
    // gone) but the turn's end is not seen yet: a loaded machine, or a
    // prompt slow to draw. A signal now would reach whatever runs in the
    // foreground next (a prompt command); the end is waited for instead.
    if keys_ended_the_job(&pane, target) {
        let confirmation = confirm(&pane, first_seq, was_busy).await;
        if let Some(outcome) =
            conclude(&pane, confirmation, "turn_cancelled", &mut |action, detail| step(action, detail, &mut steps))
        {
            return report(outcome, steps, None);
        }
    }
    let group = pane.signal_foreground(Signal::INT);
    step(action::SIGINT, group, &mut steps);
    let confirmation = confirm(&pane, first_seq, was_busy).await;
    if let Some(outcome) = conclude(&pane, confirmation, outcome::PROCESS_INTERRUPTED, &mut |action, detail| {
        step(action, detail, &mut steps)
    }) {
        return report(outcome, steps, None);
    }
    step(action::OBSERVED, "nothing confirms the stop".into(), &mut steps);
    report(outcome::UNCONFIRMED, steps, None)
}

/// Ends the program in the foreground when the interrupt began (`target`,
/// a process group): after the keys, SIGINT, SIGTERM and SIGKILL in turn,
/// each given [`INTERRUPT_CONFIRM_WAIT`] to end it. Only its end confirms:
/// the pane's process exiting (`process_ended`), or the foreground group
/// ending while the pane's process (a shell) runs on (`foreground_ended`).
async fn terminate_program(pane: &Pane, target: Pid, step: &mut (dyn FnMut(&str, String) + Send)) -> &'static str {
    let mut last = "the keys";
    let escalation = [
        (None, "", "the keys"),
        (Some(Signal::INT), action::SIGINT, "SIGINT"),
        (Some(Signal::TERM), action::SIGTERM, "SIGTERM"),
        (Some(Signal::KILL), action::SIGKILL, "SIGKILL"),
    ];
    for (signal, action, name) in escalation {
        if let Some(signal) = signal {
            step(action, pane.signal_group(target, signal));
            last = name;
        }
        if let Some(outcome) = wait_program_end(pane, target, INTERRUPT_CONFIRM_WAIT).await {
            step(action::OBSERVED, format!("{} after {last}", outcome.1));
            return outcome.0;
        }
    }
    step(action::OBSERVED, format!("process group {} survived SIGKILL", target.as_raw_nonzero()));
    outcome::UNCONFIRMED
}

/// What a sweep did, for an interrupt's step: `ended 2 processes
/// (process_tree)`, with the pids that survived.
fn describe_sweep(swept: &PaneSweep) -> String {
    let mut text = format!("ended {} processes ({})", swept.ended, swept.method);
    if !swept.survivors.is_empty() {
        let pids: Vec<String> = swept.survivors.iter().map(u32::to_string).collect();
        text.push_str(&format!("; still running: {}", pids.join(" ")));
    }
    text
}

/// Waits up to `limit` for the pane's process to exit or the process group
/// `target` to end; says which, as an outcome and a description.
async fn wait_program_end(pane: &Pane, target: Pid, limit: Duration) -> Option<(&'static str, String)> {
    let deadline = Instant::now() + limit;
    let mut progress = pane.progress();
    loop {
        if pane.current_progress().exit.is_some() {
            return Some((outcome::PROCESS_ENDED, "the process exited".into()));
        }
        if !Pane::group_exists(target) {
            // The pane's own group gone is its process gone (its exit is
            // recorded once the output has drained).
            if target.as_raw_nonzero().get() as u32 == pane.info().pid {
                return Some((outcome::PROCESS_ENDED, "the process exited".into()));
            }
            return Some((outcome::FOREGROUND_ENDED, format!("process group {} ended", target.as_raw_nonzero())));
        }
        let now = Instant::now();
        if now >= deadline {
            return None;
        }
        // The exit wakes the progress watch; a group's end does not, so
        // look again every few milliseconds.
        let wake = (deadline - now).min(Duration::from_millis(20));
        let _ = tokio::time::timeout(wake, progress.changed()).await;
    }
}

/// The outcome a confirmation settles, recording what was observed: the
/// process exiting, or the turn ending (then `stopped` names the outcome);
/// `None` when nothing confirmed the stop yet.
fn conclude(
    pane: &Pane,
    confirmation: Confirmation,
    stopped: &'static str,
    step: &mut dyn FnMut(&str, String),
) -> Option<&'static str> {
    match confirmation {
        Confirmation::Exited => {
            step(action::OBSERVED, "the process exited".into());
            Some(outcome::PROCESS_ENDED)
        }
        Confirmation::TurnEnded(how) => {
            step(action::OBSERVED, how);
            pane.turn_interrupted();
            Some(stopped)
        }
        Confirmation::None => None,
    }
}

/// What confirmed a stop.
enum Confirmation {
    Exited,
    TurnEnded(String),
    None,
}

/// True when the process group in the foreground when the keys were sent
/// was a job of the pane's program (not the program itself) and is gone.
fn keys_ended_the_job(pane: &Pane, target: Option<rustix::process::Pid>) -> bool {
    target.is_some_and(|group| group.as_raw_nonzero().get() as u32 != pane.info().pid && !Pane::group_exists(group))
}

/// Waits for the process to exit, a turn-completed signal, or (when a turn
/// was running) the output to stay quiet for the heuristic's quiet period,
/// a period that may begin up to [`INTERRUPT_CONFIRM_WAIT`] after the
/// step: a CLI may take a moment to redraw after it stops. Gives up once
/// no such period can still be seen.
///
/// Where the completion signal reports interrupted turns too (a shell's
/// prompt marks), quiet output confirms nothing: a Ctrl-C that reached
/// the shell while it was still starting the command leaves the command
/// running, quietly; the stop then escalates to SIGINT for it.
async fn confirm(pane: &Pane, first_seq: u64, turn_running: bool) -> Confirmation {
    let quiet_confirms = turn_running && !pane.completion().ends_interrupted_turns();
    let began = Instant::now();
    let deadline = began + INTERRUPT_CONFIRM_WAIT + if quiet_confirms { HEURISTIC_QUIET } else { Duration::ZERO };
    let mut last_change = began;
    let mut progress = pane.progress();
    loop {
        if pane.current_progress().exit.is_some() {
            return Confirmation::Exited;
        }
        if let Some(TurnSignal { event: Event::TurnCompleted { source, .. }, .. }) =
            completed_since(pane, first_seq, None)
        {
            return Confirmation::TurnEnded(format!("turn_completed ({source})"));
        }
        let now = Instant::now();
        if quiet_confirms && now.duration_since(last_change) >= HEURISTIC_QUIET {
            return Confirmation::TurnEnded(format!("output quiet for {} ms (heuristic)", HEURISTIC_QUIET.as_millis()));
        }
        if now >= deadline {
            return Confirmation::None;
        }
        let quiet_ends = last_change + HEURISTIC_QUIET;
        let wake = if quiet_confirms { quiet_ends.min(deadline) } else { deadline };
        progress.mark_seen();
        match tokio::time::timeout(wake.saturating_duration_since(now), progress.changed()).await {
            Err(_elapsed) => {}
            Ok(Err(_closed)) => return Confirmation::Exited,
            Ok(Ok(())) => last_change = Instant::now(),
        }
    }
}
