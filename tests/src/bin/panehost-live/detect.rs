//! `detect`: the host's `runtimes` entry for the CLI: found, identified
//! (version, SHA-256), at or above the adapter's floor, ready.

use crate::outcome::Outcome;
use crate::run::{Ctx, State};

pub async fn run(ctx: &Ctx<'_>, state: &mut State) -> Outcome {
    let runtimes = match ctx.client.runtimes().await {
        Ok(runtimes) => runtimes,
        Err(error) => return Outcome::fail(format!("runtimes: {error}")),
    };
    let Some(info) = runtimes.into_iter().find(|r| r.id == ctx.descriptor.id) else {
        return Outcome::fail(format!("runtimes does not list {}", ctx.descriptor.id));
    };
    let detail = format!(
        "available {}, readiness {}{}; version {:?}; floor {} ({}); sha256 {}; path {}; completion {}; resume modes [{}]; limitations [{}]",
        info.available,
        info.readiness,
        info.readiness_reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default(),
        info.version.as_deref().unwrap_or("-"),
        info.version_floor.as_deref().unwrap_or("-"),
        info.floor_status.as_deref().unwrap_or("-"),
        info.sha256.as_deref().unwrap_or("-"),
        info.path.as_deref().unwrap_or("-"),
        info.completion,
        info.resume_modes.join(", "),
        info.limitations.join(", "),
    );
    // Before its receipt is taken, only the receipt gate may stop it.
    let gate_passed = info.readiness != "not_ready" || info.readiness_gate.as_deref() == Some("receipt");
    let ok = info.available && gate_passed && info.floor_status.as_deref() == Some("at_or_above");
    let unavailable = info.unavailable_reason.clone();
    state.info = Some(info);
    match (ok, unavailable) {
        (true, _) => Outcome::pass(detail),
        (false, Some(reason)) => Outcome::fail(format!("{reason}; {detail}")),
        (false, None) => Outcome::fail(detail),
    }
}
