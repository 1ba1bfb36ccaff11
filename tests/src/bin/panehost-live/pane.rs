//! Panes as the runner sees them: started through the client library,
//! read through `inspect` (the screen) and `events` (the output bytes).

use crate::outcome::pause;
use crate::run::Ctx;
use panehost_client::{Client, ClientError};
use panehost_ipc::{Event, PaneId, PaneState, PaneSummary, ResumeRequest, Size, StartParams, StreamStart};
use std::time::{Duration, Instant};

/// Every pane's size: the size docs/LIVE.md's runs used.
pub const SIZE: Size = Size { cols: 120, rows: 40 };

/// How long the screen must stay unchanged to count as settled.
const STABLE_FOR: Duration = Duration::from_millis(1500);

/// Phrases of the dialogs each CLI's configuration must prevent.
pub const DIALOGS: &[&str] = &[
    "Do you trust the files in this folder",
    "Confirm folder trust",
    "Select Authentication Method",
    "Do you trust this folder",
    "Unable to connect to Anthropic services",
    "Missing environment variable",
    "Invalid auth method",
    "Choose the text style",
    "Sign in with",
];

/// The start request for the runtime under test.
pub fn start_params(ctx: &Ctx<'_>, resume: Option<ResumeRequest>) -> StartParams {
    StartParams {
        runtime: ctx.descriptor.id.clone(),
        cwd: Some(ctx.work.display().to_string()),
        size: Some(SIZE),
        model: ctx.profile.model.map(str::to_owned),
        resume,
        ..StartParams::default()
    }
}

/// Whether the pane's process still runs.
pub fn running(summary: &PaneSummary) -> bool {
    matches!(summary.state, PaneState::Running)
}

/// How the pane's process ended, for people.
pub fn state_text(summary: &PaneSummary) -> String {
    match &summary.state {
        PaneState::Running => "running".into(),
        PaneState::Exited(status) => match &status.signal {
            Some(signal) => format!("exited by {signal} (code {})", status.code),
            None => format!("exited with code {}", status.code),
        },
    }
}

/// The pane and its screen text.
pub async fn look(client: &Client, pane: &PaneId) -> Result<(PaneSummary, String), String> {
    let detail = client.inspect(pane).await.map_err(|e| format!("inspect: {e}"))?;
    Ok((detail.pane, detail.screen.text))
}

/// What a settled screen looked like.
#[derive(Debug, Clone)]
pub struct Settled {
    pub after_ms: u64,
    pub text: String,
}

/// Waits until the screen is non-empty and unchanged for 1.5 s, then
/// checks that no known dialog is on it.
pub async fn wait_settled(client: &Client, pane: &PaneId, limit: Duration) -> Result<Settled, String> {
    let started = Instant::now();
    let mut last = String::new();
    let mut since = Instant::now();
    loop {
        let (summary, text) = look(client, pane).await?;
        if !running(&summary) {
            return Err(format!("the CLI {}; its screen: {}", state_text(&summary), tail(&text, 8)));
        }
        if text != last {
            last = text;
            since = Instant::now();
        } else if !last.trim().is_empty() && since.elapsed() >= STABLE_FOR {
            if let Some(dialog) = DIALOGS.iter().find(|d| last.contains(*d)) {
                return Err(format!("a dialog is in the way ({dialog:?}): {}", tail(&last, 12)));
            }
            return Ok(Settled { after_ms: started.elapsed().as_millis() as u64, text: last });
        }
        if started.elapsed() > limit {
            return Err(if last.trim().is_empty() {
                format!("the screen stayed empty for {} s", limit.as_secs())
            } else {
                format!("the screen did not settle within {} s; it shows: {}", limit.as_secs(), tail(&last, 8))
            });
        }
        pause(250).await;
    }
}

/// Waits until the screen contains `needle`; returns the screen.
pub async fn wait_for(client: &Client, pane: &PaneId, needle: &str, limit: Duration) -> Result<String, String> {
    let started = Instant::now();
    loop {
        let (summary, text) = look(client, pane).await?;
        if text.contains(needle) {
            return Ok(text);
        }
        if !running(&summary) {
            return Err(format!(
                "the CLI {} before {needle:?} appeared; its screen: {}",
                state_text(&summary),
                tail(&text, 8)
            ));
        }
        if started.elapsed() > limit {
            return Err(format!(
                "{needle:?} did not appear within {} s; the screen: {}",
                limit.as_secs(),
                tail(&text, 10)
            ));
        }
        pause(250).await;
    }
}

/// The pane's output from `from` up to at least `until` (the end offset
/// of an earlier look), read with `events`.
pub async fn output(client: &Client, pane: &PaneId, from: u64, until: u64) -> Result<Vec<u8>, String> {
    let mut stream = client.subscribe(pane, Some(from)).await.map_err(|e| format!("events from {from}: {e}"))?;
    match stream.start() {
        StreamStart::Replay { from: start } if *start == from => {}
        other => return Err(format!("events from {from} did not replay from there: {other:?}")),
    }
    let mut bytes = Vec::new();
    while from + (bytes.len() as u64) < until {
        match tokio::time::timeout(Duration::from_secs(10), stream.next()).await {
            Ok(Some(Event::Output { offset, data })) => {
                if offset != from + bytes.len() as u64 {
                    return Err(format!(
                        "events from {from}: output at {offset}, expected {}",
                        from + bytes.len() as u64
                    ));
                }
                bytes.extend_from_slice(data.as_slice());
            }
            Ok(Some(Event::Exited { .. } | Event::Ended { .. })) | Ok(None) => break,
            Ok(Some(_)) => {}
            Err(_) => return Err(format!("events from {from}: no output for 10 s at {}", from + bytes.len() as u64)),
        }
    }
    drop(stream);
    Ok(bytes)
}

/// Starts a pane for the runtime under test.
pub async fn start(ctx: &Ctx<'_>, resume: Option<ResumeRequest>) -> Result<PaneSummary, ClientError> {
    ctx.client.start(start_params(ctx, resume)).await
}

/// How many times `needle` occurs in `text`.
pub fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

/// The last `lines` non-blank lines of a screen, joined with ` / `, each
/// trimmed.
pub fn tail(text: &str, lines: usize) -> String {
    let kept: Vec<&str> = text.lines().map(str::trim).filter(|l| !l.is_empty()).collect();
    let start = kept.len().saturating_sub(lines);
    kept[start..].join(" / ")
}
