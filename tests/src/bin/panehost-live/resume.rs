//! `resume_reference` and `resume_latest`: after the first pane is closed,
//! `start` with `resume: Reference(id)` (the id found in the CLI's own
//! session store, see `sessions.rs`) or `resume: Latest` must redraw the
//! earlier conversation: `PONG` on the screen (or, scrolled off it, in the
//! pane's output). A runtime without that form must be refused with the
//! limitation it declares; the step is then `not_applicable`.

use crate::close;
use crate::outcome::Outcome;
use crate::pane::{self, look, tail};
use crate::run::{Ctx, State};
use crate::sessions;
use panehost_adapters::descriptor::ResumeMode;
use panehost_client::ClientError;
use panehost_ipc::ResumeRequest;
use std::time::Duration;

/// A reference for the refusal check: the host must refuse the mode
/// before it looks at the reference.
const ANY_REFERENCE: &str = "00000000-0000-4000-8000-000000000000";

pub async fn reference(ctx: &Ctx<'_>, state: &mut State) -> Outcome {
    if ctx.descriptor.resume_form(ResumeMode::Reference).is_none() {
        return refusal(ctx, ResumeRequest::Reference(ANY_REFERENCE.into()), "an exact session").await;
    }
    let Some(since) = state.started_at else {
        return Outcome::fail("no session to resume: the first pane never started");
    };
    // Found right after the first answer; else looked for now.
    let found = match state.session.take() {
        Some(Ok(found)) => Ok(found),
        _ => sessions::find(&ctx.descriptor, &ctx.home, since),
    };
    match found {
        Ok(found) => {
            let what = format!("session {} ({})", found.reference, found.how);
            resume_and_check(ctx, ResumeRequest::Reference(found.reference), &what).await
        }
        Err(error) => Outcome::fail(format!("no session reference found: {error}")),
    }
}

pub async fn latest(ctx: &Ctx<'_>, _state: &mut State) -> Outcome {
    if ctx.descriptor.resume_form(ResumeMode::ProviderSelection).is_none() {
        return refusal(ctx, ResumeRequest::Latest, "its latest session").await;
    }
    resume_and_check(ctx, ResumeRequest::Latest, "the latest session").await
}

/// The host must refuse `request`, naming a limitation the adapter declares.
async fn refusal(ctx: &Ctx<'_>, request: ResumeRequest, what: &str) -> Outcome {
    match ctx.client.start(pane::start_params(ctx, Some(request))).await {
        Err(ClientError::Host(error)) if error.code == "OPERATION_UNSUPPORTED" => match &error.limitation {
            Some(code) if ctx.descriptor.limitations.contains(code) => {
                Outcome::not_applicable(format!("declared {code}: start resuming {what} was refused with {error}"))
            }
            _ => Outcome::fail(format!(
                "start resuming {what} was refused with {error}, naming no limitation the adapter declares"
            )),
        },
        Err(error) => Outcome::fail(format!("start resuming {what}: {error}")),
        Ok(summary) => {
            let closed = close::close_and_check(ctx, &summary).await;
            Outcome::fail(format!(
                "the adapter has no form for resuming {what}, yet the host started pane {} ({})",
                summary.id, closed.detail
            ))
        }
    }
}

/// Starts with `request` and looks for the earlier `PONG`.
async fn resume_and_check(ctx: &Ctx<'_>, request: ResumeRequest, what: &str) -> Outcome {
    let summary = match pane::start(ctx, Some(request)).await {
        Ok(summary) => summary,
        Err(error) => return Outcome::fail(format!("start resuming {what}: {error}")),
    };
    let settled = pane::wait_settled(&ctx.client, &summary.id, Duration::from_secs(50)).await;
    let seen = match look(&ctx.client, &summary.id).await {
        Ok((now, screen)) => {
            if screen.contains("PONG") {
                Ok(format!("PONG redrawn on the screen: {}", crate::send::lines_with(&screen, "PONG")))
            } else {
                match pane::output(&ctx.client, &summary.id, 0, now.offset).await {
                    Ok(bytes) if String::from_utf8_lossy(&bytes).contains("PONG") => {
                        Ok("PONG in the pane's output (no longer on the visible screen)".to_owned())
                    }
                    Ok(_) => {
                        Err(format!("no PONG on the screen or in the output; the screen ends: {}", tail(&screen, 8)))
                    }
                    Err(error) => Err(format!("no PONG on the screen ({}), and {error}", tail(&screen, 8))),
                }
            }
        }
        Err(error) => Err(error),
    };
    let closed = close::close_and_check(ctx, &summary).await;
    let settled_text = match &settled {
        Ok(settled) => format!("settled after {} ms", settled.after_ms),
        Err(error) => format!("did not settle: {error}"),
    };
    let detail = |seen: &str| format!("resuming {what}: pane {} {settled_text}; {seen}; {}", summary.id, closed.detail);
    match seen {
        Ok(seen) if closed.passed() => Outcome::pass(detail(&seen)),
        Ok(seen) => Outcome::fail(detail(&seen)),
        Err(error) => Outcome::fail(detail(&error)),
    }
}
