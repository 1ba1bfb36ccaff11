//! What a step found, and running a step against the clock.

use crate::record::{StepRecord, BLOCKED, FAIL, NOT_APPLICABLE, PASS};
use std::future::Future;
use std::time::{Duration, Instant};

/// A step's result and what was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub result: &'static str,
    pub detail: String,
}

impl Outcome {
    pub fn pass(detail: impl Into<String>) -> Outcome {
        Outcome { result: PASS, detail: detail.into() }
    }

    pub fn fail(detail: impl Into<String>) -> Outcome {
        Outcome { result: FAIL, detail: detail.into() }
    }

    /// A declared limitation: `detail` names it.
    pub fn not_applicable(detail: impl Into<String>) -> Outcome {
        Outcome { result: NOT_APPLICABLE, detail: detail.into() }
    }

    /// The CLI cannot do it offline: `reason` (short, no `: ` in it) is
    /// what stands in the way, `detail` the evidence.
    pub fn blocked(reason: &str, detail: impl Into<String>) -> Outcome {
        Outcome { result: BLOCKED, detail: format!("{reason}: {}", detail.into()) }
    }

    pub fn passed(&self) -> bool {
        self.result == PASS
    }
}

/// Runs `step` for at most `limit`; a step that runs out of time fails,
/// saying so (whatever it started is cleaned up by the runtime's run).
pub async fn timed<F>(name: &str, limit: Duration, step: F) -> StepRecord
where
    F: Future<Output = Outcome>,
{
    let started = Instant::now();
    eprintln!("[live]   {name} ...");
    let outcome = match tokio::time::timeout(limit, step).await {
        Ok(outcome) => outcome,
        Err(_) => Outcome::fail(format!("the step did not finish within its {} s", limit.as_secs())),
    };
    let ms = started.elapsed().as_millis() as u64;
    eprintln!("[live]   {name}: {} ({ms} ms) {}", outcome.result, short(&outcome.detail));
    StepRecord { name: name.to_owned(), result: outcome.result.to_owned(), detail: outcome.detail, ms }
}

/// A step that was not run, with the reason.
pub fn skipped(name: &str, why: &str) -> StepRecord {
    eprintln!("[live]   {name}: fail (not run: {why})");
    StepRecord { name: name.to_owned(), result: FAIL.to_owned(), detail: format!("not run: {why}"), ms: 0 }
}

/// A step that was not run because the CLI is blocked offline.
pub fn blocked_step(name: &str, reason: &str, why: &str) -> StepRecord {
    eprintln!("[live]   {name}: blocked (not run: {why})");
    StepRecord { name: name.to_owned(), result: BLOCKED.to_owned(), detail: format!("{reason}: not run: {why}"), ms: 0 }
}

/// Sleeps `ms` milliseconds.
pub async fn pause(ms: u64) {
    tokio::time::sleep(Duration::from_millis(ms)).await;
}

fn short(text: &str) -> String {
    let cut: String = text.chars().take(240).collect();
    if cut.len() < text.len() {
        format!("{cut} …")
    } else {
        cut
    }
}
