//! `receipt`: the completion receipt (`probe_runtime`). The host runs the
//! CLI's one-shot mode inside the read-only boundary, asking for one JSON
//! object with a fresh value; the fixture answers with the object the
//! prompt asks for, as a model that follows the instruction would. The
//! step passes when the receipt passes and `runtimes` then reports the
//! runtime ready. A runtime without a one-shot mode must be refused with
//! `RECEIPT_UNAVAILABLE` (`not_applicable`); one that cannot hold the
//! read-only boundary is probed with the weaker boundary accepted, and the
//! record says so.

use crate::outcome::Outcome;
use crate::run::Ctx;
use panehost_adapters::descriptor::PermissionProfile;
use panehost_client::ClientError;
use panehost_ipc::limitation;

pub async fn run(ctx: &Ctx<'_>) -> Outcome {
    let weaker = ctx.descriptor.profile_form(PermissionProfile::ReadOnly).is_none();
    let probed = ctx.client.probe_runtime(&ctx.descriptor.id, ctx.profile.model, weaker).await;
    let receipt = match probed {
        Ok(receipt) => receipt,
        Err(ClientError::Host(error)) if error.limitation.as_deref() == Some(limitation::RECEIPT_UNAVAILABLE) => {
            return if ctx.descriptor.limitations.iter().any(|code| code == limitation::RECEIPT_UNAVAILABLE) {
                Outcome::not_applicable(format!("declared RECEIPT_UNAVAILABLE: probe_runtime was refused with {error}"))
            } else {
                Outcome::fail(format!("refused with {error}, which the adapter does not declare"))
            };
        }
        Err(error) => return Outcome::fail(format!("probe_runtime: {error}")),
    };
    let boundary = if receipt.read_only_enforced { "read-only boundary" } else { "weaker boundary, accepted" };
    let detail = format!("{} in {} ms ({boundary}): {}", verdict(receipt.passed), receipt.elapsed_ms, receipt.detail);
    if !receipt.passed {
        return Outcome::fail(detail);
    }
    match ctx.client.runtimes().await {
        Ok(runtimes) => match runtimes.iter().find(|info| info.id == ctx.descriptor.id) {
            Some(info) if info.receipt_valid && info.readiness == "ready" => {
                Outcome::pass(format!("{detail}; runtimes then reports it ready"))
            }
            Some(info) => Outcome::fail(format!(
                "{detail}; but runtimes reports {} ({})",
                info.readiness,
                info.readiness_reason.as_deref().unwrap_or("no reason")
            )),
            None => Outcome::fail(format!("{detail}; runtimes no longer lists it")),
        },
        Err(error) => Outcome::fail(format!("{detail}; runtimes: {error}")),
    }
}

fn verdict(passed: bool) -> &'static str {
    if passed {
        "passed"
    } else {
        "failed"
    }
}
