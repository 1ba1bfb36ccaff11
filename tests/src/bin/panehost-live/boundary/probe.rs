//! One probe: a pane started with the case's permission profile in the
//! working directory, the prompt that makes the model ask for the write,
//! the turn followed to its end (the fixture's log and the screen), an
//! approval prompt declined, the pane closed, and the disk checked.

use super::cases::{Case, NO_TOOL_MARK, RESULT_MARK};
use super::log::{self, Turn};
use super::verdict::{self, Observed};
use crate::outcome::{pause, Outcome};
use crate::pane::{self, tail};
use crate::run::Ctx;
use crate::submit::{self, How};
use crate::{close, start};
use panehost_client::ClientError;
use panehost_ipc::{limitation, PaneId};
use std::path::Path;
use std::time::{Duration, Instant};

/// How long the turn may take from the prompt to the model's last answer.
const TURN_WAIT: Duration = Duration::from_secs(60);
/// How long the screen must stay still, with a call made and no result,
/// to count as the CLI waiting for someone.
const WAITING_FOR: Duration = Duration::from_secs(4);
/// How long the last answer may take to show once the fixture sent it.
const ANSWER_WAIT: Duration = Duration::from_secs(20);
/// Esc: declines every approval prompt of the CLIs probed.
const DECLINE: &str = "\x1b";

/// Runs `case` for the runtime under test.
pub async fn run(ctx: &Ctx<'_>, case: &Case) -> Outcome {
    let runtime = ctx.descriptor.id.clone();
    let target = case.target(&runtime, &ctx.home, &ctx.work);
    let content = case.content(&runtime);
    if let Err(error) = prepare(&target) {
        return Outcome::fail(format!("cannot prepare {}: {error}", target.display()));
    }
    let mut params = pane::start_params(ctx, None);
    params.permission_profile = Some(case.profile.as_str().to_owned());
    let summary = match ctx.client.start(params).await {
        Ok(summary) => summary,
        Err(ClientError::Host(error))
            if error.limitation.as_deref() == Some(limitation::PERMISSION_PROFILE_UNENFORCED) =>
        {
            return Outcome::not_applicable(format!("the host refused the profile: {}", error.message));
        }
        Err(error) => return Outcome::fail(format!("start with {}: {error}", case.profile.as_str())),
    };
    let mut seen =
        Observed { pane: format!("pane {} argv {}", summary.id, start::argv(summary.pid)), ..Observed::default() };
    match pane::wait_settled(&ctx.client, &summary.id, start::SETTLE).await {
        Ok(_) => drive(ctx, &summary.id, &case.word(&runtime), &mut seen).await,
        Err(error) => seen.trouble.push(format!("the CLI did not reach its prompt: {error}")),
    }
    let closed = close::close_and_check(ctx, &summary).await;
    seen.pane.push_str(&format!("; {}", closed.detail));
    seen.file = std::fs::read_to_string(&target).ok();
    let mut outcome = verdict::judge(case, &content, &seen);
    if !closed.passed() {
        outcome = Outcome::fail(outcome.detail);
    }
    outcome
}

/// Removes an earlier probe's file and makes its directory.
fn prepare(target: &Path) -> std::io::Result<()> {
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir)?;
    }
    match std::fs::remove_file(target) {
        Err(error) if error.kind() != std::io::ErrorKind::NotFound => Err(error),
        _ => Ok(()),
    }
}

/// Submits the probe's prompt and follows the turn to its end.
async fn drive(ctx: &Ctx<'_>, pane: &PaneId, word: &str, seen: &mut Observed) {
    let mark = ctx.endpoint.mark();
    if let Err(error) = submit::send_enter(ctx, pane, word).await {
        seen.trouble.push(error);
        return;
    }
    let submission = submit::confirm(ctx, "boundary", pane, word, mark, "send with enter").await;
    if submission.how != How::Host {
        seen.trouble.push(submission.detail.clone());
    }
    if submission.how == How::Never {
        seen.screen = screen(ctx, pane).await;
        return;
    }
    seen.turn = follow(ctx, pane, mark, seen).await;
    let mark_text = if seen.turn.no_tool.is_some() { NO_TOOL_MARK } else { RESULT_MARK };
    if seen.turn.ended() {
        match pane::wait_for(&ctx.client, pane, mark_text, ANSWER_WAIT).await {
            Ok(text) => seen.screen = lines(&text, 10),
            Err(error) => {
                seen.trouble.push(format!("the model's last answer was sent but not seen: {error}"));
                seen.screen = screen(ctx, pane).await;
            }
        }
    } else {
        seen.screen = screen(ctx, pane).await;
    }
}

/// Waits for the model's last answer; when the CLI stops to ask with the
/// call pending, notes the screen, declines once, and waits again.
async fn follow(ctx: &Ctx<'_>, pane: &PaneId, mark: u64, seen: &mut Observed) -> Turn {
    let started = Instant::now();
    let mut last = String::new();
    let mut still_since = Instant::now();
    loop {
        let turn = log::read(ctx.endpoint, mark);
        if turn.ended() {
            return turn;
        }
        let (summary, text) = match pane::look(&ctx.client, pane).await {
            Ok(look) => look,
            Err(error) => {
                seen.trouble.push(error);
                return turn;
            }
        };
        if !pane::running(&summary) {
            seen.trouble.push(format!("the CLI {} during the turn", pane::state_text(&summary)));
            return turn;
        }
        if text != last {
            last = text;
            still_since = Instant::now();
        } else if turn.call.is_some() && still_since.elapsed() >= WAITING_FOR {
            if seen.asked.is_some() {
                seen.trouble
                    .push("after declining, the CLI sent the model nothing more (it waits for the person)".to_owned());
                return turn;
            }
            seen.asked = Some(lines(&last, 12));
            if let Err(error) = submit::type_raw(ctx, pane, DECLINE).await {
                seen.trouble.push(error);
                return turn;
            }
            still_since = Instant::now();
        }
        if started.elapsed() > TURN_WAIT {
            seen.trouble.push(format!("the turn did not end within {} s", TURN_WAIT.as_secs()));
            return turn;
        }
        pause(250).await;
    }
}

async fn screen(ctx: &Ctx<'_>, pane: &PaneId) -> String {
    match pane::look(&ctx.client, pane).await {
        Ok((_, text)) => lines(&text, 10),
        Err(error) => error,
    }
}

/// The last `count` lines of a screen that hold a letter or digit (rules
/// and box borders left out), as `tail` joins them.
fn lines(screen: &str, count: usize) -> String {
    let worded: Vec<&str> = screen.lines().filter(|line| line.chars().any(char::is_alphanumeric)).collect();
    tail(&worded.join("\n"), count)
}
