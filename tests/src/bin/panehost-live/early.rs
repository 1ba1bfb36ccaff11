//! `ask_at_start`: a prompt submitted right after `start`, with no wait,
//! is answered as if the client had waited for the CLI's prompt
//! (PROTOCOL.md, `ask`: any timing gives the same answer).
//!
//! A fresh pane is started and, with no pause at all, `EARLYBIRD` goes in
//! with `ask` where the pane's completion is observed (else with `send` and
//! `enter`). The fixture answers it by its rule for the word. What must
//! hold: a request with the word reached the model (Codex sends a second,
//! for the title of the conversation, as it does for any first prompt);
//! the answer
//! (`EARLYBIRD-ANSWERED`) shows on the screen; and `ask` answered with the
//! end of that turn, its added text holding the answer. The CLI is then
//! closed.

use crate::close;
use crate::outcome::Outcome;
use crate::pane::{self, tail};
use crate::run::Ctx;
use panehost_ipc::SendParams;
use std::time::{Duration, Instant};

/// The prompt: a word no other step sends, with a rule of its own in the
/// fixture.
const WORD: &str = "EARLYBIRD";
/// The fixture's answer to it.
const ANSWER: &str = "EARLYBIRD-ANSWERED";
/// How long the answer may take to show, from the start.
const ANSWER_WAIT: Duration = Duration::from_secs(60);

pub async fn run(ctx: &Ctx<'_>) -> Outcome {
    let mark = ctx.endpoint.mark();
    let summary = match pane::start(ctx, None).await {
        Ok(summary) => summary,
        Err(error) => return Outcome::fail(format!("start: {error}")),
    };
    let started = Instant::now();
    let observed = matches!(summary.completion.as_str(), "hook" | "notify_program" | "terminal_notification");
    let submitted = if observed {
        ctx.client.ask(&summary.id, WORD, Some(ANSWER_WAIT)).await.map(Some).map_err(|error| format!("ask: {error}"))
    } else {
        let params =
            SendParams { pane: summary.id.clone(), text: WORD.to_owned(), enter: true, ..SendParams::default() };
        ctx.client.send(params).await.map(|_| None).map_err(|error| format!("send: {error}"))
    };
    let shown = pane::wait_for(&ctx.client, &summary.id, ANSWER, ANSWER_WAIT.saturating_sub(started.elapsed())).await;
    let requests: Vec<String> =
        ctx.endpoint.matching_since(mark, WORD).iter().map(|request| format!("#{}", request.number)).collect();
    let mut problems = Vec::new();
    match &submitted {
        Ok(Some(report)) if !report.added_text.contains(ANSWER) => problems.push(format!(
            "ask answered (source {}, {} ms) without the answer in its added text: {:?}",
            report.source,
            report.duration_ms,
            tail(&report.added_text, 4)
        )),
        Ok(_) => {}
        Err(error) => problems.push(error.clone()),
    }
    if requests.is_empty() {
        problems.push(format!("no request with {WORD} reached the model"));
    }
    if let Err(error) = &shown {
        problems.push(error.clone());
    }
    let closed = close::close_and_check(ctx, &summary).await;
    let how = match &submitted {
        Ok(Some(report)) => format!("ask answered (source {}, {} ms)", report.source, report.duration_ms),
        Ok(None) => "send with enter".to_owned(),
        Err(_) => "the submission failed".to_owned(),
    };
    let detail = format!(
        "pane {}: {WORD} submitted with no wait after start; {how}; requests {}; {}",
        summary.id,
        requests.join(", "),
        closed.detail
    );
    if problems.is_empty() && closed.passed() {
        Outcome::pass(detail)
    } else {
        Outcome::fail(format!("{detail}; {}", problems.join("; ")))
    }
}
