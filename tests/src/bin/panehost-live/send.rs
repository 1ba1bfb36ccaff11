//! `send`: `PING` reaches the model and `PONG` shows on the screen.
//! `completion`: the end of that turn is observed where the adapter claims
//! it (`ask` answers with the hook's or notify program's source, its added
//! text holds the answer, and no second end follows), and `ask`
//! is refused with `COMPLETION_UNOBSERVED` where the adapter declares it.
//!
//! Where the pane's completion is observed, the prompt goes in with `ask`
//! (which submits it exactly as `send` with `enter` does, then waits for
//! the turn's end); else with `send` and `enter`.

use crate::outcome::Outcome;
use crate::pane::{self, tail};
use crate::run::{Ctx, State};
use crate::sessions;
use crate::submit::{self, How};
use panehost_adapters::descriptor::ResumeMode;
use panehost_client::ClientError;
use panehost_ipc::{limitation, Event, PaneId};
use std::time::Duration;

/// How long `ask` may wait for the end of the `PING` turn.
const ASK_TIMEOUT: Duration = Duration::from_secs(40);
/// How long `PONG` may take to show once the prompt reached the model.
const PONG_WAIT: Duration = Duration::from_secs(20);

/// Whether the pane's completion signal ends turns (a hook, the notify
/// program, or the CLI's own terminal notification).
fn observed(completion: &str) -> bool {
    matches!(completion, "hook" | "notify_program" | "terminal_notification")
}

pub async fn run(ctx: &Ctx<'_>, state: &mut State) -> Outcome {
    let Some(pane) = state.pane.clone() else { return Outcome::fail("no pane") };
    let mark = ctx.endpoint.mark();
    let (submission, asked) = if observed(&pane.completion) {
        // A connection of its own: requests on one connection are answered
        // in order, and the runner must still look and type while ask waits.
        let client = match ctx.host.connect().await {
            Ok(client) => client,
            Err(error) => return Outcome::fail(format!("cannot open a second connection for ask: {error}")),
        };
        let id = pane.id.clone();
        let task = tokio::spawn(async move { client.ask(&id, "PING", Some(ASK_TIMEOUT)).await });
        let submission = submit::confirm(ctx, "send", &pane.id, "PING", mark, "ask").await;
        let asked = match tokio::time::timeout(ASK_TIMEOUT + Duration::from_secs(10), task).await {
            Ok(Ok(result)) => result.map_err(|e| e.to_string()),
            Ok(Err(join)) => Err(format!("the ask task failed: {join}")),
            Err(_) => Err("ask did not answer".to_owned()),
        };
        (submission, Some(asked))
    } else {
        if let Err(error) = submit::send_enter(ctx, &pane.id, "PING").await {
            return Outcome::fail(error);
        }
        (submit::confirm(ctx, "send", &pane.id, "PING", mark, "send with enter").await, None)
    };
    let requests: Vec<String> =
        ctx.endpoint.matching_since(mark, "PING").iter().map(|r| format!("#{}", r.number)).collect();
    let pong = pane::wait_for(&ctx.client, &pane.id, "PONG", PONG_WAIT).await;
    if ctx.descriptor.resume_form(ResumeMode::Reference).is_some() {
        if let Some(since) = state.started_at {
            state.session = Some(match sessions::find(&ctx.descriptor, &ctx.home, since) {
                Ok(found) => Ok(found),
                // No store to list: the reference the host captured.
                Err(_) => sessions::recorded(&ctx.host.state_dir(), &pane.id).await,
            });
        }
    }
    state.send_note = submission.detail.clone();
    let asked_text = match &asked {
        Some(Ok(report)) => format!("; ask answered (source {}, {} ms)", report.source, report.duration_ms),
        Some(Err(error)) => format!("; ask: {error}"),
        None => String::new(),
    };
    state.ask = asked;
    let via = if observed(&pane.completion) { "ask" } else { "send with enter" };
    match (submission.how, pong) {
        (How::Host, Ok(screen)) => Outcome::pass(format!(
            "{via}: PING reached the model (requests {}); PONG on the screen: {}{asked_text}",
            requests.join(", "),
            lines_with(&screen, "PONG")
        )),
        (How::Host, Err(error)) => Outcome::fail(format!(
            "{via}: PING reached the model (requests {}), but {error}{asked_text}",
            requests.join(", ")
        )),
        (_, Ok(screen)) => Outcome::fail(format!(
            "{}; then PONG on the screen: {}{asked_text}",
            submission.detail,
            lines_with(&screen, "PONG")
        )),
        (_, Err(error)) => Outcome::fail(format!("{}; {error}{asked_text}", submission.detail)),
    }
}

pub async fn completion(ctx: &Ctx<'_>, state: &mut State) -> Outcome {
    let Some(pane) = state.pane.clone() else { return Outcome::fail("no pane") };
    let declared = ctx.descriptor.completion.as_str();
    if observed(&pane.completion) {
        let note = if state.send_note.is_empty() {
            String::new()
        } else {
            "; the prompt itself only reached the model after the runner's help (see send)".to_owned()
        };
        return match &state.ask {
            Some(Ok(report)) if report.source == pane.completion => {
                let answered = format!(
                    "ask answered with source {} after {} ms (turn from offset {} to {}; usage {}); added text: {:?}{note}",
                    report.source,
                    report.duration_ms,
                    report.started_offset,
                    report.completed_offset,
                    report.usage.kind,
                    tail(&report.added_text, 4)
                );
                // An end of the turn reported before the CLI drew the
                // answer is no end a client can use: the report must carry it.
                if !report.added_text.contains("PONG") {
                    return Outcome::fail(format!(
                        "{answered}; but added_text lacks the answer (PONG): the end of the turn was reported before the CLI drew it"
                    ));
                }
                match strays(ctx, &pane.id, report.started_offset).await {
                    Ok(extra) if extra.is_empty() => Outcome::pass(format!("{answered}; no further turn signal within {} s", STRAY_WAIT.as_secs())),
                    Ok(extra) => Outcome::fail(format!(
                        "{answered}; but one prompt ended more than once: {} — a stray end would close the next turn as soon as it starts",
                        extra.join(", ")
                    )),
                    Err(error) => Outcome::fail(format!("{answered}; {error}")),
                }
            }
            Some(Ok(report)) => Outcome::fail(format!(
                "ask answered, but with source {} where the adapter claims {}{note}",
                report.source, pane.completion
            )),
            Some(Err(error)) => Outcome::fail(format!("the end of the PING turn was not observed: {error}{note}")),
            None => Outcome::fail("the send step did not ask"),
        };
    }
    if pane.completion != "unobserved" {
        return Outcome::fail(format!(
            "the pane's completion is {:?}, which the runner does not know",
            pane.completion
        ));
    }
    if declared != "unobserved" {
        return Outcome::fail(format!(
            "the adapter claims completion {declared}, but the pane started with completion unobserved (the hooks were not injected)"
        ));
    }
    match ctx.client.ask(&pane.id, "PING", Some(Duration::from_secs(5))).await {
        Err(ClientError::Host(error))
            if error.code == "OPERATION_UNSUPPORTED"
                && error.limitation.as_deref() == Some(limitation::COMPLETION_UNOBSERVED) =>
        {
            Outcome::not_applicable(format!(
                "declared {}: ask was refused with {error}, and nothing was written",
                limitation::COMPLETION_UNOBSERVED
            ))
        }
        Err(error) => {
            Outcome::fail(format!("ask was expected to be refused with COMPLETION_UNOBSERVED; it failed with {error}"))
        }
        Ok(report) => Outcome::fail(format!(
            "ask was expected to be refused with COMPLETION_UNOBSERVED; it answered (source {})",
            report.source
        )),
    }
}

/// How long after the answer further turn signals are waited for.
const STRAY_WAIT: Duration = Duration::from_secs(3);

/// The turn signals after the first `turn_completed` of the turn that
/// started at `from`, `STRAY_WAIT` after the answer (read back with
/// `events` from `from`: turn signals are replayed with the output).
async fn strays(ctx: &Ctx<'_>, pane: &PaneId, from: u64) -> Result<Vec<String>, String> {
    tokio::time::sleep(STRAY_WAIT).await;
    let end = ctx.client.inspect(pane).await.map_err(|e| format!("inspect: {e}"))?.pane.offset;
    let mut stream = ctx.client.subscribe(pane, Some(from)).await.map_err(|e| format!("events from {from}: {e}"))?;
    let mut completed = 0;
    let mut extra = Vec::new();
    let mut reached = from;
    let deadline = std::time::Instant::now() + Duration::from_secs(8);
    while std::time::Instant::now() < deadline {
        // Until the end of the output, and a moment more for signals at it.
        let wait = if reached < end { Duration::from_secs(5) } else { Duration::from_millis(500) };
        match tokio::time::timeout(wait, stream.next()).await {
            Ok(Some(Event::Output { offset, data })) => reached = offset + data.len() as u64,
            Ok(Some(Event::TurnCompleted { offset, source, .. })) => {
                completed += 1;
                if completed > 1 {
                    extra.push(format!("turn_completed ({source}) at offset {offset}"));
                }
            }
            Ok(Some(Event::TurnStarted { offset, source })) if completed > 0 => {
                extra.push(format!("turn_started ({source}) at offset {offset}"));
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => break,
        }
    }
    Ok(extra)
}

/// The screen's lines that contain `needle`, trimmed, joined with ` / `.
pub fn lines_with(screen: &str, needle: &str) -> String {
    let lines: Vec<&str> = screen.lines().map(str::trim).filter(|l| l.contains(needle)).collect();
    format!("{:?}", lines.join(" / "))
}
