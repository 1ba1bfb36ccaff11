//! The handlers that drive turns: `send` (input that submits), `ask` and
//! `notify` (`interrupt` is in [`super::interrupt`]).

use crate::handlers::shell_reading::idle_and_reading;
use crate::handlers::submitted_text::{check_submitted_text, check_unpasted_text};
use crate::handlers::turn_output_text::turn_output_text;
use crate::handlers::wait_for::until_screen_shows;
use crate::jitter::{self, Point};
use crate::limits::{self, DEFAULT_TURN_TIMEOUT, RAW_MODE_POLL, READY_QUIET, READY_TIMEOUT, START_SETTLE_LIMIT};
use crate::pane::TurnSignal;
use crate::pane::{InputPlace, InputTurn, Pane};
use crate::server::host_state::HostState;
use crate::server::peer_process::PeerProcess;
use panehost_adapters::CompletionSignal;
use panehost_ipc::{limitation, ErrorBody, ErrorCode, Event, PaneId, Response, SendParams, TurnReport};
use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

const PASTE_START: &[u8] = b"\x1b[200~";
const PASTE_END: &[u8] = b"\x1b[201~";

pub(super) fn write_error(id: &PaneId, err: std::io::Error) -> ErrorBody {
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
pub(super) async fn wait_until_ready(pane: &Pane) {
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
pub(super) fn completed_since(pane: &Pane, first_seq: u64, after: Option<u64>) -> Option<TurnSignal> {
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
