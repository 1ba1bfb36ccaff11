//! `close`: the host ends the pane's process group and reaps it; afterwards
//! neither the CLI's process nor anything of its process group is left.
//! Whatever is, is ended by its pid and named in the record.

use crate::outcome::{pause, Outcome};
use crate::procs;
use crate::run::{Ctx, State};
use panehost_ipc::PaneSummary;
use std::time::{Duration, Instant};

/// How long the pane's processes may take to be gone after `close`.
const GONE_WAIT: Duration = Duration::from_secs(5);

pub async fn run(ctx: &Ctx<'_>, state: &mut State) -> Outcome {
    let Some(pane) = state.pane.take() else { return Outcome::fail("no pane") };
    close_and_check(ctx, &pane).await
}

/// Closes `pane` and checks that its process and process group are gone.
pub async fn close_and_check(ctx: &Ctx<'_>, pane: &PaneSummary) -> Outcome {
    let status = match ctx.client.close(&pane.id).await {
        Ok(status) => status,
        Err(error) => return Outcome::fail(format!("close {}: {error}", pane.id)),
    };
    let how = match &status.signal {
        Some(signal) => format!("ended by {signal} (code {})", status.code),
        None => format!("exited with code {}", status.code),
    };
    let started = Instant::now();
    loop {
        let group = procs::group(pane.pid);
        let alive = procs::alive(pane.pid);
        if !alive && group.is_empty() {
            return Outcome::pass(format!("closed: {how}; pid {} and its process group are gone", pane.pid));
        }
        if started.elapsed() > GONE_WAIT {
            let mut left = group;
            if alive && !left.iter().any(|p| p.pid == pane.pid) {
                left.push(procs::Proc { pid: pane.pid, name: "the pane's process".into() });
            }
            procs::end(&left).await;
            return Outcome::fail(format!(
                "closed: {how}; but {} s later still running, now ended by pid: {}",
                GONE_WAIT.as_secs(),
                procs::list(&left)
            ));
        }
        pause(200).await;
    }
}
