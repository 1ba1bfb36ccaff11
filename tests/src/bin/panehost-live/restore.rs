//! `restore_reference`: a reboot, for one pane. A fresh pane answers
//! `PING`; once the host has recorded the pane's session reference (from
//! the CLI's output, hook payloads or session store, as its adapter
//! declares) and the CLI has saved the answer in its own store (where the
//! runner knows it: `sessions::wait_saved`), the host, every keeper and
//! the pane's processes are killed
//! with SIGKILL and a new host starts on the same state directory. The pane
//! must come back as generation 2, restored by `native_reference`, with the
//! earlier conversation (`PONG`) redrawn. A runtime that resumes no exact
//! session is `not_applicable`: a reboot restores it by its latest session
//! or fresh, as its limitations say.
//!
//! It runs last: the reboot ends the runner's connection, and the next
//! runtime connects anew.

use crate::outcome::Outcome;
use crate::pane::{self, tail};
use crate::run::Ctx;
use crate::{sessions, submit};
use panehost_adapters::descriptor::ResumeMode;
use panehost_client::Client;
use panehost_ipc::PaneId;
use std::time::{Duration, Instant};

/// How long the restored CLI may take to redraw the conversation.
const REDRAW_WAIT: Duration = Duration::from_secs(50);

pub async fn run(ctx: &Ctx<'_>) -> Outcome {
    if ctx.descriptor.resume_form(ResumeMode::Reference).is_none() {
        return Outcome::not_applicable(
            "the adapter declares no resume by exact reference; a reboot restores the pane by its latest session or fresh",
        );
    }
    let summary = match pane::start(ctx, None).await {
        Ok(summary) => summary,
        Err(error) => return Outcome::fail(format!("start: {error}")),
    };
    if let Err(error) = pane::wait_settled(&ctx.client, &summary.id, Duration::from_secs(50)).await {
        return Outcome::fail(format!("pane {} never reached its prompt: {error}", summary.id));
    }
    let mark = ctx.endpoint.mark();
    if let Err(error) = submit::send_enter(ctx, &summary.id, "PING").await {
        return Outcome::fail(error);
    }
    let submission = submit::confirm(ctx, "restore_reference", &summary.id, "PING", mark, "send with enter").await;
    if let Err(error) = pane::wait_for(&ctx.client, &summary.id, "PONG", Duration::from_secs(20)).await {
        return Outcome::fail(format!("before the reboot: {error}; {}", submission.detail));
    }
    let reference = match sessions::recorded(&ctx.host.state_dir(), &summary.id).await {
        Ok(found) => found.reference,
        Err(error) => return Outcome::fail(error),
    };
    // The reboot comes once the CLI has saved the answer: a crash between
    // drawing and saving loses the turn in the CLI itself.
    let saved = sessions::wait_saved(&ctx.descriptor, &ctx.home, &reference, "PONG").await;

    let rebooted = Instant::now();
    if let Err(error) = ctx.host.reboot(&[summary.pid]) {
        return Outcome::fail(format!("the reboot: {error}"));
    }
    let client = match ctx.host.connect().await {
        Ok(client) => client,
        Err(error) => return Outcome::fail(format!("no connection to the new host: {error}")),
    };
    let checked = check_restored(&client, &summary.id, &reference).await;
    let closed = match client.close(&summary.id).await {
        Ok(status) => format!("closed ({status:?})"),
        Err(error) => format!("close failed: {error}"),
    };
    let took = rebooted.elapsed().as_millis();
    match checked {
        Ok(seen) => Outcome::pass(format!(
            "session {reference} recorded before the reboot ({saved}); after it, {seen} ({took} ms after the kill); \
             {closed}"
        )),
        Err(error) => {
            Outcome::fail(format!("session {reference} recorded before the reboot ({saved}); {error}; {closed}"))
        }
    }
}

/// The pane is back, replaced by native resume, and shows the answer.
async fn check_restored(client: &Client, pane: &PaneId, reference: &str) -> Result<String, String> {
    let listed = client.list().await.map_err(|e| format!("list: {e}"))?;
    let back = listed.iter().find(|listed| listed.id == *pane).ok_or("the pane is not back")?;
    if (back.generation, back.restored_by.as_str()) != (2, "native_reference") {
        return Err(format!("the pane came back as generation {} by {}", back.generation, back.restored_by));
    }
    match pane::wait_for(client, pane, "PONG", REDRAW_WAIT).await {
        Ok(screen) => Ok(format!(
            "generation 2 resumed session {reference} by native_reference and redrew PONG: {}",
            crate::send::lines_with(&screen, "PONG")
        )),
        Err(error) => Err(format!("restored by native_reference, but {error}; screen: {}", tail(&error, 4))),
    }
}
