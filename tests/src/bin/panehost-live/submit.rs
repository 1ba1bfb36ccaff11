//! Did a prompt the host submitted reach the model? The fixture's log
//! says: a request answered by the rule for the prompt's word. When none
//! comes, the runner finds out why and gets the prompt through anyway, so
//! that the later steps still run; the step that submitted records it as
//! a failure with what was seen.

use crate::outcome::pause;
use crate::pane::{look, tail};
use crate::run::{Ctx, Submitted};
use panehost_ipc::{PaneId, SendParams};
use std::time::{Duration, Instant};

/// How long a submitted prompt may take to reach the model.
pub const REACH: Duration = Duration::from_secs(8);

/// How the prompt got to the model.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum How {
    /// The host's own submission did it.
    Host,
    /// It sat in the CLI's input until a second Enter.
    SecondEnter,
    /// It never showed up; typing it again (text, a pause, Enter) did it.
    Retyped,
    /// Nothing got it there.
    Never,
}

/// The result of [`confirm`].
#[derive(Debug, Clone)]
pub struct Submission {
    pub how: How,
    /// What happened, for the record (empty when the host did it).
    pub detail: String,
}

/// Types raw input (no Enter, no turn).
pub async fn type_raw(ctx: &Ctx<'_>, pane: &PaneId, text: &str) -> Result<(), String> {
    let params = SendParams { pane: pane.clone(), text: text.to_owned(), ..SendParams::default() };
    ctx.client.send(params).await.map(|_| ()).map_err(|e| format!("send: {e}"))
}

/// Submits `text` with `send` and `enter`.
pub async fn send_enter(ctx: &Ctx<'_>, pane: &PaneId, text: &str) -> Result<u64, String> {
    let params = SendParams { pane: pane.clone(), text: text.to_owned(), enter: true, ..SendParams::default() };
    ctx.client.send(params).await.map_err(|e| format!("send: {e}"))
}

/// Waits up to `limit` for a request for `word` logged after `mark`.
pub async fn reached(ctx: &Ctx<'_>, mark: u64, word: &str, limit: Duration) -> bool {
    let started = Instant::now();
    loop {
        if !ctx.endpoint.matching_since(mark, word).is_empty() {
            return true;
        }
        if started.elapsed() > limit {
            return false;
        }
        pause(200).await;
    }
}

/// What the model received for `word` after `mark`, as the fixture logs it.
fn received(ctx: &Ctx<'_>, mark: u64, word: &str) -> String {
    let prompts: Vec<String> = ctx.endpoint.matching_since(mark, word).into_iter().filter_map(|r| r.prompt).collect();
    match prompts.first() {
        Some(prompt) => format!(" (the model received the prompt {prompt})"),
        None => String::new(),
    }
}

/// After the host wrote `word` and Enter (by `how_sent`), confirms that it
/// reached the model; if it did not, presses Enter again, or types it
/// again, and says which worked.
pub async fn confirm(
    ctx: &Ctx<'_>,
    step: &'static str,
    pane: &PaneId,
    word: &str,
    mark: u64,
    how_sent: &str,
) -> Submission {
    let submission = get_through(ctx, pane, word, mark, how_sent).await;
    ctx.submissions.lock().unwrap_or_else(|p| p.into_inner()).push(Submitted {
        step,
        word: word.to_owned(),
        how: submission.how,
        detail: submission.detail.clone(),
    });
    submission
}

async fn get_through(ctx: &Ctx<'_>, pane: &PaneId, word: &str, mark: u64, how_sent: &str) -> Submission {
    if reached(ctx, mark, word, REACH).await {
        return Submission { how: How::Host, detail: String::new() };
    }
    let screen = look(&ctx.client, pane).await.map(|(_, text)| text).unwrap_or_default();
    let mut detail = format!(
        "{how_sent} wrote {word:?} and Enter, but no request for it reached the model within {} s",
        REACH.as_secs()
    );
    if screen.contains(word) {
        let lines: Vec<&str> = screen.lines().map(str::trim).filter(|l| l.contains(word)).collect();
        detail.push_str(&format!("; the screen still showed it, unsent: {:?}", lines.join(" / ")));
        if type_raw(ctx, pane, "\r").await.is_ok() && reached(ctx, mark, word, REACH).await {
            detail.push_str(&format!(
                "; a second Enter (a lone \\r written afterwards) sent it{}",
                received(ctx, mark, word)
            ));
            return Submission { how: How::SecondEnter, detail };
        }
        detail.push_str("; a second Enter did not send it either");
    } else {
        detail.push_str(&format!("; the screen does not show it: {}", tail(&screen, 6)));
    }
    let _ = type_raw(ctx, pane, word).await;
    pause(700).await;
    let _ = type_raw(ctx, pane, "\r").await;
    if reached(ctx, mark, word, REACH).await {
        detail.push_str(&format!("; typing it again, then Enter 0.7 s later, sent it{}", received(ctx, mark, word)));
        return Submission { how: How::Retyped, detail };
    }
    let screen = look(&ctx.client, pane).await.map(|(_, text)| text).unwrap_or_default();
    detail.push_str(&format!("; typing it again did not send it either; the screen: {}", tail(&screen, 8)));
    Submission { how: How::Never, detail }
}
