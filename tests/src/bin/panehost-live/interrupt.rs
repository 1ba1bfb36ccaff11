//! `interrupt`: while `SLOW` streams (the fixture sends one word every
//! 500 ms for about a minute), `interrupt` with the adapter's keys must stop
//! the answer and leave the CLI running: the fixture logs the client going
//! away, and the answer on the screen stops growing.
//!
//! An adapter that declares `INTERRUPT_KEEPS_REQUEST` (its keys stop the
//! answer on the screen, not the request) is held to that: the answer must
//! stop growing with the CLI still running, and the step is recorded as
//! `not_applicable` naming the limitation while the fixture streams on (a
//! pass when the request was closed after all: the declaration is then due
//! for removal, and the detail says so).
//!
//! When it fails and the adapter's keys are not Esc, the runner tries Esc
//! in a fresh pane once the other steps are done, and adds what it saw to
//! the step's detail, so that the record says whether another key would do.

use crate::close;
use crate::outcome::{pause, Outcome};
use crate::pane::{self, count, look, running, state_text, tail};
use crate::run::{Ctx, State};
use crate::submit::{self, How};
use panehost_ipc::{limitation, InterruptReport, PaneId};
use std::time::{Duration, Instant};

/// How long the answer may take to show once `SLOW` reached the model.
const STREAM_WAIT: Duration = Duration::from_secs(20);
/// How long the fixture may take to see the client go away.
const STOP_WAIT: Duration = Duration::from_secs(6);

/// A `SLOW` answer under way.
#[derive(Debug, Clone)]
pub struct Slow {
    /// The fixture log's mark before the prompt.
    pub mark: u64,
    /// How the prompt got there, when the host's submission did not do it.
    pub note: String,
    /// Whether the answer was seen on the screen while it streamed.
    pub visible: bool,
}

/// Submits `SLOW` and waits until the answer streams.
pub async fn start_slow(ctx: &Ctx<'_>, step: &'static str, pane: &PaneId) -> Result<Slow, String> {
    let mark = ctx.endpoint.mark();
    submit::send_enter(ctx, pane, "SLOW").await?;
    let submission = submit::confirm(ctx, step, pane, "SLOW", mark, "send with enter").await;
    if submission.how == How::Never {
        return Err(submission.detail);
    }
    let visible = pane::wait_for(&ctx.client, pane, "slow answer", STREAM_WAIT).await.is_ok();
    Ok(Slow { mark, note: submission.detail, visible })
}

/// What the fixture saw of the `SLOW` requests after `mark`, once they
/// have all ended or `STOP_WAIT` has passed. The answer counts as stopped
/// when one of them saw its client go away: a CLI may also send the prompt
/// in a side request (a title), which its interrupt need not cancel; the
/// screen tells whether the answer itself kept growing.
async fn stream_end(ctx: &Ctx<'_>, mark: u64) -> (bool, String) {
    let started = Instant::now();
    loop {
        let requests = ctx.endpoint.matching_since(mark, "SLOW");
        let all_ended = !requests.is_empty() && requests.iter().all(|r| r.end.is_some());
        if all_ended || started.elapsed() > STOP_WAIT {
            let stopped = requests.iter().any(|r| r.disconnected());
            let text: Vec<String> = requests
                .iter()
                .map(|r| format!("#{} {}", r.number, r.end.as_deref().unwrap_or("still streaming")))
                .collect();
            return (stopped, text.join("; "));
        }
        pause(200).await;
    }
}

/// The host's report, for people.
pub fn report_text(report: &InterruptReport) -> String {
    let steps: Vec<String> =
        report.steps.iter().map(|s| format!("{} {} @{} ms", s.action, s.detail, s.at_ms)).collect();
    format!("outcome {} [{}]", report.outcome, steps.join("; "))
}

pub async fn run(ctx: &Ctx<'_>, state: &mut State) -> Outcome {
    let Some(pane) = state.pane.clone() else { return Outcome::fail("no pane") };
    let slow = match start_slow(ctx, "interrupt", &pane.id).await {
        Ok(slow) => slow,
        Err(error) => return Outcome::fail(format!("SLOW never reached the model: {error}")),
    };
    let mut notes = Vec::new();
    if !slow.note.is_empty() {
        notes.push(format!("(submitting SLOW: {})", slow.note));
    }
    if !slow.visible {
        notes.push(format!("the answer did not show on the screen within {} s of the request", STREAM_WAIT.as_secs()));
    }
    let report = match ctx.client.interrupt(&pane.id).await {
        Ok(report) => report,
        Err(error) => return Outcome::fail(format!("interrupt: {error}")),
    };
    let (stopped, fixture) = stream_end(ctx, slow.mark).await;
    let first = look(&ctx.client, &pane.id).await.map(|(_, text)| count(&text, "slow")).unwrap_or(0);
    pause(2000).await;
    let (summary, screen) = match look(&ctx.client, &pane.id).await {
        Ok(seen) => seen,
        Err(error) => return Outcome::fail(format!("{}; {error}", report_text(&report))),
    };
    let second = count(&screen, "slow");
    let alive = running(&summary);
    let mut detail = format!(
        "the adapter's keys {}{}: {}; fixture: {fixture}; answer on the screen: {first} \"slow\", {second} two seconds later; the CLI {}; screen ends: {}",
        ctx.descriptor.interrupt_keys.escape_ascii(),
        if ctx.descriptor.interrupt_presses > 1 { format!(" x{}", ctx.descriptor.interrupt_presses) } else { String::new() },
        report_text(&report),
        if alive { "still runs".to_owned() } else { state_text(&summary) },
        tail(&screen, 3)
    );
    for note in &notes {
        detail.push_str("; ");
        detail.push_str(note);
    }
    let drawing_stopped = alive && first == second;
    if ctx.descriptor.interrupt_keeps_request && drawing_stopped {
        if stopped {
            return Outcome::pass(format!(
                "{detail}; the request was closed although {} is declared: the declaration is due for removal",
                limitation::INTERRUPT_KEEPS_REQUEST
            ));
        }
        return Outcome::not_applicable(format!(
            "declared {}: the answer stopped on the screen with the CLI running, and the request stayed open, as declared; {detail}",
            limitation::INTERRUPT_KEEPS_REQUEST
        ));
    }
    if stopped && drawing_stopped {
        return Outcome::pass(detail);
    }
    // Tried after the other steps: its pane's session must not become the
    // one the resume steps find.
    state.diagnose_interrupt = ctx.descriptor.interrupt_keys != b"\x1b";
    Outcome::fail(detail)
}

/// In a fresh pane: `SLOW`, then a lone Esc, and if that does not stop the
/// answer, a second one; what happened.
pub async fn try_escape(ctx: &Ctx<'_>) -> String {
    let summary = match pane::start(ctx, None).await {
        Ok(summary) => summary,
        Err(error) => return format!("Esc not tried: start: {error}"),
    };
    let verdict = async {
        pane::wait_settled(&ctx.client, &summary.id, Duration::from_secs(40)).await?;
        let slow = start_slow(ctx, "interrupt", &summary.id).await?;
        // Some CLIs take a second Esc within a short while ("esc again to
        // interrupt"): one second after the first.
        submit::type_raw(ctx, &summary.id, "\x1b").await?;
        pause(1000).await;
        let once = ctx.endpoint.matching_since(slow.mark, "SLOW").iter().any(|r| r.disconnected());
        let (stopped, fixture, what) = if once {
            let (stopped, fixture) = stream_end(ctx, slow.mark).await;
            (stopped, fixture, "one Esc stopped the answer")
        } else {
            submit::type_raw(ctx, &summary.id, "\x1b").await?;
            let (stopped, fixture) = stream_end(ctx, slow.mark).await;
            let what = if stopped {
                "one Esc did not stop the answer within 1 s; a second Esc then did"
            } else {
                "neither one Esc nor a second one 1 s later stopped the answer"
            };
            (stopped, fixture, what)
        };
        let _ = stopped;
        let (after, screen) = look(&ctx.client, &summary.id).await?;
        Ok::<String, String>(format!(
            "in a fresh pane, during SLOW, {what} (fixture: {fixture}); the CLI {}; screen ends: {}",
            if running(&after) { "still runs".to_owned() } else { state_text(&after) },
            tail(&screen, 2)
        ))
    }
    .await
    .unwrap_or_else(|error| format!("Esc not tried to the end: {error}"));
    let closed = close::close_and_check(ctx, &summary).await;
    format!("{verdict} (that pane's close: {})", closed.detail)
}
