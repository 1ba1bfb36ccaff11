//! `start`: the CLI in a pane, at its prompt, no dialog in the way.

use crate::outcome::Outcome;
use crate::pane::{self, tail};
use crate::run::{Ctx, State};
use std::time::{Duration, SystemTime};

/// How long a CLI may take to settle at its prompt.
pub const SETTLE: Duration = Duration::from_secs(50);

pub async fn run(ctx: &Ctx<'_>, state: &mut State) -> Outcome {
    let missing: Vec<&str> = ctx
        .profile
        .variables
        .iter()
        .copied()
        .filter(|name| !ctx.descriptor.reads_environment.iter().any(|n| n == name))
        .collect();
    let environment = if missing.is_empty() {
        String::new()
    } else {
        format!("; not passed to the pane (absent from the descriptor's reads_environment): {}", missing.join(", "))
    };
    state.started_at = Some(SystemTime::now());
    let summary = match pane::start(ctx, None).await {
        Ok(summary) => summary,
        Err(error) => return Outcome::fail(format!("start: {error}{environment}")),
    };
    let described = format!(
        "pane {} (pid {}, completion {}, argv {})",
        summary.id,
        summary.pid,
        summary.completion,
        argv(summary.pid)
    );
    let id = summary.id.clone();
    state.pane = Some(summary);
    let settled = pane::wait_settled(&ctx.client, &id, SETTLE).await;
    // A CLI that insists on its vendor's sign-in shows it here.
    if let Some(wall) = ctx.profile.wall {
        let screen = match &settled {
            Ok(settled) => settled.text.clone(),
            Err(_) => pane::look(&ctx.client, &id).await.map(|(_, text)| text).unwrap_or_default(),
        };
        if let Some(phrase) = wall.phrases.iter().find(|phrase| screen.contains(**phrase)) {
            state.blocked = Some(wall.reason);
            return Outcome::blocked(
                wall.reason,
                format!(
                    "{described}: the CLI stops at its sign-in ({phrase:?}) and reaches no prompt; the screen ends: {}{environment}",
                    tail(&screen, 8)
                ),
            );
        }
    }
    match settled {
        Ok(settled) => Outcome::pass(format!(
            "{described}: the screen settled after {} ms with no dialog; it ends: {}{environment}",
            settled.after_ms,
            tail(&settled.text, 4)
        )),
        Err(error) => Outcome::fail(format!("{described}: {error}{environment}")),
    }
}

/// The process's command line, as the host built it, each argument quoted.
pub fn argv(pid: u32) -> String {
    match std::fs::read(format!("/proc/{pid}/cmdline")) {
        Ok(bytes) => {
            let args: Vec<String> = bytes
                .split(|b| *b == 0)
                .filter(|a| !a.is_empty())
                .map(|a| format!("{:?}", String::from_utf8_lossy(a)))
                .collect();
            format!("[{}]", args.join(" "))
        }
        Err(error) => format!("unreadable: {error}"),
    }
}
