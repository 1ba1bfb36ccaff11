//! The handlers that drive turns: `send` (input that submits), `ask`,
//! `interrupt` and `notify`.

use crate::handlers::submitted_text::{check_submitted_text, check_unpasted_text};
use crate::handlers::turn_output_text::turn_output_text;
use crate::handlers::wait_for::until_screen_shows;
use crate::jitter::{self, Point};
use crate::limits::{
    self, DEFAULT_TURN_TIMEOUT, HEURISTIC_QUIET, INTERRUPT_CONFIRM_WAIT, LINE_EDITOR_POLL, RAW_MODE_POLL, READY_QUIET,
    READY_TIMEOUT, START_SETTLE_LIMIT,
};
use crate::pane::TurnSignal;
use crate::pane::{end_processes, InputPlace, InputTurn, Pane, Reach};
use crate::server::host_state::HostState;
use crate::server::peer_process::PeerProcess;
use panehost_adapters::CompletionSignal;
use panehost_ipc::response::{interrupt_action as action, interrupt_outcome as outcome};
use panehost_ipc::{
    limitation, ErrorBody, ErrorCode, Event, InterruptReport, InterruptStep, PaneId, PaneSweep, Response, SendParams,
    TurnReport,
};
use rustix::process::{Pid, Signal};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";

fn write_error(id: &PaneId, err: std::io::Error) -> ErrorBody {
    ErrorBody::new(ErrorCode::Internal, format!("writing to pane {id}: {err}"))
}

/// `send`: raw input, or, with `enter`, input that submits: the text as a
/// bracketed paste when the program enabled it, then Enter as its own
/// write, and a turn starts. Written when `place` comes up in the pane's
/// input line.
pub(crate) async fn handle_send(pane: Arc<Pane>, place: InputPlace, params: SendParams) -> Result<Response, ErrorBody> {
    if params.enter {
        check_submitted_text(&params.text)?;
        wait_until_ready(&pane).await;
    }
    let turn = place.wait().await;
    if pane.current_progress().exit.is_some() {
        return Err(ErrorBody::new(ErrorCode::PaneExited, format!("pane {} has exited", params.pane)));
    }
    let written = if params.enter {
        submit(&pane, &turn, &params).await?
    } else {
        let input = params.input_bytes();
        pane.write_input(&turn, &input, limits::INPUT_TIMEOUT).await.map_err(|err| write_error(&params.pane, err))?;
        input.len()
    };
    Ok(Response::Sent { pane: params.pane, bytes: written as u64 })
}

/// Writes input that submits; returns the bytes written. The caller has
/// waited for the program's prompt where the runtime loses early input.
/// While it types, the pane's record says so: a host killed before the
/// Enter leaves the next host a command line to clear (see
/// [`crate::restore`]).
async fn submit(pane: &Pane, turn: &InputTurn, params: &SendParams) -> Result<usize, ErrorBody> {
    pane.record_typing(true).await;
    let written = type_submission(pane, turn, params).await;
    pane.record_typing(false).await;
    written
}

/// The text (a paste where the program enabled it), then, once its echo
/// has settled, the Enter; the turn starts.
async fn type_submission(pane: &Pane, turn: &InputTurn, params: &SendParams) -> Result<usize, ErrorBody> {
    let mut body = Vec::new();
    // Text is text: markers inside it could end the paste early and turn
    // the rest into keys (`echo A\e[201~\x15...`); they are removed.
    let text = without_paste_markers(&params.text);
    if !text.is_empty() {
        if pane.bracketed_paste() {
            body.extend_from_slice(PASTE_START);
            body.extend_from_slice(text.as_bytes());
            body.extend_from_slice(PASTE_END);
        } else {
            // Unpasted, every control character but a tab is a key.
            check_unpasted_text(&text)?;
            body.extend_from_slice(text.as_bytes());
        }
    }
    body.extend_from_slice(params.bytes.as_slice());
    let mut echo = pane.progress();
    echo.mark_seen();
    pane.write_input(turn, &body, limits::INPUT_TIMEOUT).await.map_err(|err| write_error(&params.pane, err))?;
    if !body.is_empty() {
        // Several TUIs read text and an Enter that arrive together as one
        // paste, and keep the Enter as text: let the echo of the input
        // arrive and settle first (seen live with claude, gemini, qwen and
        // grok; opencode on a loaded machine echoed late, and an Enter sent
        // before the echo left the prompt unsent).
        let _ = tokio::time::timeout(limits::SUBMIT_ECHO_WAIT, echo.changed()).await;
        pane.wait_output_quiet(limits::SUBMIT_SETTLE, limits::SUBMIT_SETTLE_LIMIT).await;
    }
    let before_enter = pane.output_end();
    pane.write_input(turn, b"\r", limits::INPUT_TIMEOUT).await.map_err(|err| write_error(&params.pane, err))?;
    jitter::at(Point::AfterEnter).await;
    pane.input_submitted(before_enter, &params.text);
    Ok(body.len() + 1)
}

/// `text` without bracketed-paste markers (`ESC [200~`, `ESC [201~`),
/// removed until none is left (removing one may join the halves of
/// another).
fn without_paste_markers(text: &str) -> String {
    let mut text = text.to_owned();
    while text.contains("\x1b[200~") || text.contains("\x1b[201~") {
        text = text.replace("\x1b[200~", "").replace("\x1b[201~", "");
    }
    text
}

/// Waits, at most [`READY_TIMEOUT`], until the program is ready to read a
/// submission, so that a client that submits right after `start` is
/// answered as if it had waited (PROTOCOL.md, `ask`): a shell with prompt
/// marks until it has drawn its first prompt; a runtime that reads raw
/// keys until the terminal is in raw mode, and the first time also until
/// its start has settled ([`start_settled`]); a runtime that loses what
/// is typed before it reads until it has shown output and then been quiet
/// for a moment (before every submission); any other at once. A shell
/// that has drawn its first prompt stays ready.
async fn wait_until_ready(pane: &Pane) {
    let mut progress = pane.progress();
    let drops_early_input = pane.drops_early_input();
    let ready = async {
        let _ = progress.until(|state| state.ready_for_input || state.exit.is_some()).await;
        if pane.awaits_raw_mode() {
            raw_mode(pane).await;
            if pane.awaits_start_settled() {
                start_settled(pane).await;
                pane.mark_start_settled();
            }
        }
        if drops_early_input {
            shown_and_quiet(pane, READY_TIMEOUT).await;
        }
    };
    if tokio::time::timeout(READY_TIMEOUT, ready).await.is_err() {
        tracing::warn!(pane = %pane.info().id, "not ready within the readiness timeout; sending anyway");
        // A shell whose marks never came (its startup file interrupted or
        // replaced them) is not waited for again.
        pane.give_up_waiting_for_ready();
    }
}

/// Returns once the start of a program that reads raw keys has settled:
/// its screen shows its runtime's ready marker, where it names one (an
/// input box drawn), and the pane has shown output and then been quiet
/// for [`READY_QUIET`]; all of it waited for at most
/// [`START_SETTLE_LIMIT`] (the quiet at least [`READY_QUIET`]). Quiet
/// alone comes too early for a program that prints a line, pauses, and
/// only then draws the box that reads (Qwen Code 0.24.4 lost a prompt
/// typed in that pause).
async fn start_settled(pane: &Pane) {
    let began = Instant::now();
    if let Some(marker) = pane.ready_marker() {
        if !until_screen_shows(pane, marker, START_SETTLE_LIMIT).await {
            tracing::info!(pane = %pane.info().id, marker, "the ready marker did not show within the start's limit");
        }
    }
    shown_and_quiet(pane, START_SETTLE_LIMIT.saturating_sub(began.elapsed()).max(READY_QUIET)).await;
}

/// Returns once the pane has shown output and then been quiet for
/// [`READY_QUIET`] (the quiet waited for at most `limit`), or is over.
async fn shown_and_quiet(pane: &Pane, limit: Duration) {
    let _ = pane.progress().until(|state| state.end > 0 || state.exit.is_some()).await;
    pane.wait_output_quiet(READY_QUIET, limit).await;
}

/// Returns once the terminal is in raw mode (the program reads its keys
/// itself) or the pane is over. No event says when a program changes its
/// terminal's settings: they are looked at whenever output comes, and
/// every [`RAW_MODE_POLL`] besides.
async fn raw_mode(pane: &Pane) {
    let mut progress = pane.progress();
    while !pane.terminal_in_raw_mode() {
        if progress.peek().over() {
            return;
        }
        if let Ok(Err(_closed)) = tokio::time::timeout(RAW_MODE_POLL, progress.changed()).await {
            return;
        }
    }
}

/// Returns once the pane's process (a shell at its prompt) sleeps in its
/// wait for input, as far as the kernel says, or the pane is over.
async fn blocked_reading(pane: &Pane) {
    waiting_for_input(pane.info().pid, || pane.current_progress().over()).await;
}

/// Returns true once process `pid` sleeps in a wait for input, as far as
/// the kernel says; false once `stop()` is true (looked at first). Looked
/// at every [`LINE_EDITOR_POLL`]. The kernel's answer is read from two
/// files: a process that wakes between them reads as sleeping with no
/// place (not known), which happens now and then; only a kernel that says
/// so [`HIDDEN_WAIT_LOOKS`] times in a row is taken to hide where its
/// processes sleep, and is not waited for.
async fn waiting_for_input(pid: u32, stop: impl Fn() -> bool) -> bool {
    let mut not_known = 0;
    loop {
        if stop() {
            return false;
        }
        match crate::input_wait::waits_for_input(pid) {
            Some(true) => return true,
            Some(false) => not_known = 0,
            None => {
                not_known += 1;
                if not_known >= HIDDEN_WAIT_LOOKS {
                    return true;
                }
            }
        }
        tokio::time::sleep(LINE_EDITOR_POLL).await;
    }
}

/// Whether a turn is open, and the sequence number the next turn signal
/// will have ([`Pane::turn_state`]), read once no turn is open and a shell
/// waits for input at its prompt, or a turn is open, or
/// [`limits::SHELL_READING_WAIT`] has passed. A line typed ahead that the
/// shell has not read yet (keys typed as a command, an attached
/// terminal's typing; a line whose Enter came after the prompt's `read -t
/// 0` looked, so the prompt did not say it waits) would run before an
/// `ask`'s text, and its end would answer the ask. The shell reads such a
/// line before it waits for input again: once it waits, none is left; if
/// it read one, that line's command starts, and its turn is told (the
/// `ask` is then told `TURN_IN_PROGRESS`). A turn that ends while this
/// waits does not end the wait: the shell may not read yet.
async fn idle_and_reading(pane: &Pane) -> (bool, u64) {
    let deadline = Instant::now() + limits::SHELL_READING_WAIT;
    let pid = pane.info().pid;
    loop {
        let (busy, first_seq) = pane.turn_state();
        let shell = pane.completion() == CompletionSignal::ShellIntegration;
        if busy || !shell || pane.current_progress().over() || Instant::now() >= deadline {
            return (busy, first_seq);
        }
        let waiting = waiting_for_input(pid, || pane.busy() || pane.current_progress().over());
        let reading = tokio::time::timeout_at(deadline.into(), waiting).await.unwrap_or(true);
        if reading {
            return pane.turn_state();
        }
    }
}

/// Waits until a shell interrupted at its prompt has drawn the prompt
/// again (an end mark after the `prompts` it had drawn, then the prompt's
/// own mark): its line editor then reads again. Input sent before would
/// lose its first byte to the line being reset.
async fn prompt_redrawn(pane: &Pane, prompts: u64) {
    let mut progress = pane.progress();
    let _ = progress.until(|state| state.prompts > prompts || state.over()).await;
    line_editor_reading(pane).await;
}

/// How many looks in a row that find a sleeping process with no place
/// it sleeps in mean the kernel hides it ([`waiting_for_input`]).
const HIDDEN_WAIT_LOOKS: u32 = 5;

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
        line_editor_reading(pane).await;
        blocked_reading(pane).await;
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

/// Returns once a shell with prompt marks has drawn its prompt since its
/// last command (its `B` mark, drawn after its line editor has taken over
/// its signals; bracketed paste comes on a moment before that, and input
/// sent then lost its first byte), or the pane is over.
async fn line_editor_reading(pane: &Pane) {
    let mut progress = pane.progress();
    let _ = progress.until(|state| state.line_editor_reading || state.over()).await;
}

/// `ask`: submit, then wait for the end of the turn. The text is written
/// when `place` comes up in the pane's input line; a turn open by then
/// (another `ask` ahead in line started it) refuses this one.
pub(crate) async fn handle_ask(
    pane: Arc<Pane>,
    place: InputPlace,
    text: String,
    timeout_ms: Option<u64>,
) -> Result<Response, ErrorBody> {
    let id = &pane.info().id;
    if pane.completion() == CompletionSignal::Unobserved {
        return Err(ErrorBody::unsupported(
            limitation::COMPLETION_UNOBSERVED,
            format!("runtime {} gives no signal when a turn ends; use send and events instead", pane.info().runtime),
        ));
    }
    check_submitted_text(&text)?;
    wait_until_ready(&pane).await;
    let turn = place.wait().await;
    if pane.current_progress().exit.is_some() {
        return Err(ErrorBody::new(ErrorCode::PaneExited, format!("pane {id} has exited")));
    }
    // The turn's first signal comes after every signal recorded by now:
    // read from the turns themselves, which record a signal a moment
    // before its count is published (the previous ask, answered on seeing
    // its end in the turns, may come back before the count has moved).
    let (busy, first_seq) = idle_and_reading(&pane).await;
    if busy {
        return Err(ErrorBody::new(
            ErrorCode::TurnInProgress,
            format!("pane {id} is in a turn ({}); wait for it or interrupt it first", pane.activity()),
        ));
    }
    let timeout = timeout_ms.map(Duration::from_millis).unwrap_or(DEFAULT_TURN_TIMEOUT);
    let before = pane.snapshot();
    let started_offset = pane.current_progress().end;
    let started = Instant::now();
    submit(&pane, &turn, &SendParams { pane: id.clone(), text, ..SendParams::default() }).await?;
    drop(turn);

    let mut progress = pane.progress();
    // The predicate reads the turns on a copy of the progress: no lock is
    // held while it runs.
    let timed_out = tokio::time::timeout(
        timeout,
        progress
            .until(|state| state.exit.is_some() || completed_since(&pane, first_seq, Some(started_offset)).is_some()),
    )
    .await
    .is_err();
    let completed = completed_since(&pane, first_seq, Some(started_offset));
    let Some(TurnSignal { event: Event::TurnCompleted { offset, source, usage, exit_code }, .. }) = completed else {
        return Err(if timed_out {
            turn_timeout(&pane, timeout, started_offset, started)
        } else {
            ErrorBody::new(ErrorCode::PaneExited, format!("pane {id} exited before the turn ended"))
        });
    };
    // Let the screen catch up with the end of the turn before reading it.
    let mut parsed = pane.parsed_offset();
    let _ = tokio::time::timeout(limits::ASK_SCREEN_CATCH_UP, parsed.wait_for(|parsed| *parsed >= offset)).await;
    // A shell's command prints lines: its whole output, not what the
    // screen shows of it (see `turn_output_text`).
    let output_text = if source == panehost_ipc::turn::source::SHELL_INTEGRATION {
        turn_output_text(&pane, &before, started_offset, offset).await
    } else {
        None
    };
    let added_text = output_text.unwrap_or_else(|| added_lines(&before.text, &pane.snapshot().text));
    Ok(Response::Answered(TurnReport {
        source,
        started_offset,
        completed_offset: offset,
        duration_ms: started.elapsed().as_millis() as u64,
        added_text,
        usage,
        exit_code,
    }))
}

/// The first `turn_completed` signal from `first_seq` on; with `after`,
/// the first in output after that offset.
///
/// An ask passes where its output began: an end in output that was there
/// before the ask typed anything is not its own, though it may be told
/// after the ask began. That is a command the host did not type (keys, a
/// submission a killed host made, a terminal attached) whose marks were
/// parsed after the ask's busy check (the explorer, seed
/// 11151090909723198884: answered with the earlier command's status, its
/// `completed_offset` before its `started_offset`).
fn completed_since(pane: &Pane, first_seq: u64, after: Option<u64>) -> Option<TurnSignal> {
    pane.signals_from(first_seq).into_iter().find(|signal| match signal.event {
        Event::TurnCompleted { offset, .. } => after.is_none_or(|after| offset > after),
        _ => false,
    })
}

/// A timeout that says what was observed.
fn turn_timeout(pane: &Pane, timeout: Duration, started_offset: u64, started: Instant) -> ErrorBody {
    let progress = pane.current_progress();
    let message = format!(
        "no end of turn within {} ms (completion: {}, activity: {}, {} bytes of output since the prompt); \
         the turn is left running: interrupt it, or wait, before asking again",
        timeout.as_millis(),
        pane.completion().as_str(),
        pane.activity(),
        progress.end.saturating_sub(started_offset),
    );
    tracing::info!(pane = %pane.info().id, elapsed_ms = started.elapsed().as_millis() as u64, "turn timed out");
    ErrorBody::new(ErrorCode::TurnTimeout, message)
}

/// Lines of `after` that were not in `before`, in screen order.
fn added_lines(before: &str, after: &str) -> String {
    let mut remaining: HashMap<&str, usize> = HashMap::new();
    for line in before.lines() {
        *remaining.entry(line.trim_end()).or_default() += 1;
    }
    after
        .lines()
        .map(str::trim_end)
        .filter(|line| !line.is_empty())
        .filter(|line| match remaining.get_mut(line) {
            Some(count) if *count > 0 => {
                *count -= 1;
                false
            }
            _ => true,
        })
        .collect::<Vec<_>>()
        .join("\n")
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
        let reading = async {
            line_editor_reading(&pane).await;
            blocked_reading(&pane).await;
        };
        let _ = tokio::time::timeout(limits::PROMPT_REDRAW_WAIT, reading).await;
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
/// True when the process group in the foreground when the keys were sent
/// was a job of the pane's program (not the program itself) and is gone.
fn keys_ended_the_job(pane: &Pane, target: Option<rustix::process::Pid>) -> bool {
    target.is_some_and(|group| group.as_raw_nonzero().get() as u32 != pane.info().pid && !Pane::group_exists(group))
}

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

/// `notify`: a hook's report from inside the pane.
///
/// Accepted only from a process of the pane itself: the caller (the kernel
/// names it when it connects) must be in the pane's session (its process
/// leads a session of its own, and whatever it starts stays in it unless
/// it leaves) or descend from the pane's process, and must know the pane's
/// token. A process of another pane can neither join this pane's session
/// nor become a descendant of its process, so it cannot report this pane's
/// turns.
pub(crate) fn handle_notify(
    host: &HostState,
    caller: Option<&PeerProcess>,
    id: &PaneId,
    token: &str,
    event: &str,
    payload: &str,
) -> Result<Response, ErrorBody> {
    let pane = host.registry.find(id)?;
    // The process that connected, while it runs: once it has exited, its
    // pid may be the pane's own process's, and vouches for nothing.
    let running = caller.and_then(PeerProcess::pid_while_running);
    if !pane.is_own_process(running) {
        let message = match caller {
            Some(peer) if running.is_none() => format!(
                "the process that connected (pid {}) has exited, and its pid vouches for no other; only pane {id}'s \
                 own processes report its turns, while they run",
                peer.pid()
            ),
            Some(peer) => format!(
                "process {} is not one of pane {id}'s processes; only the pane's own processes report its turns",
                peer.pid()
            ),
            None => format!(
                "a process the kernel did not name is not one of pane {id}'s processes; only the pane's own \
                 processes report its turns"
            ),
        };
        return Err(ErrorBody::new(ErrorCode::NotifyRefused, message));
    }
    if !pane.report(token, event, payload) {
        return Err(ErrorBody::new(ErrorCode::NotifyRefused, format!("the notify token is not pane {id}'s")));
    }
    Ok(Response::Notified {})
}

/// Closes a pane once it has run `limit` (its wall-time limit).
pub(crate) fn enforce_wall_time(pane: Arc<Pane>, limit: Duration) {
    tokio::spawn(async move {
        let mut progress = pane.progress();
        let reached =
            tokio::time::timeout(limit, progress.until(|state| state.exit.is_some() || state.closed)).await.is_err();
        if reached {
            tracing::info!(pane = %pane.info().id, limit_ms = limit.as_millis() as u64, "wall-time limit reached; closing");
            let (_, swept) = pane.close().await;
            tracing::info!(pane = %pane.info().id, ended = swept.ended, survivors = ?swept.survivors, "closed at its wall-time limit");
        }
    });
}

#[cfg(test)]
mod tests {
    use super::{added_lines, without_paste_markers};

    #[test]
    fn text_cannot_end_a_bracketed_paste() {
        assert_eq!(without_paste_markers("echo AAA\x1b[201~\x15echo BBB"), "echo AAA\x15echo BBB");
        assert_eq!(without_paste_markers("\x1b[20\x1b[201~1~x"), "x", "a marker joined by a removal goes too");
        assert_eq!(without_paste_markers("\x1b[200~plain\x1b[A"), "plain\x1b[A");
    }

    #[test]
    fn added_lines_are_what_the_turn_put_on_the_screen() {
        let before = "$ ls\nfile\n$ ";
        let after = "$ ls\nfile\n$ ask\nanswer: ksa\n$ ";
        assert_eq!(added_lines(before, after), "$ ask\nanswer: ksa");
    }
}
