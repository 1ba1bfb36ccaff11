//! Attaching by relaying: output arrives through a [`PaneFollower`], so a
//! lost host connection is resumed without a gap; keystrokes and resizes
//! travel on a second connection, so that waiting for their answers never
//! stalls the output. For a host this process cannot hand its terminal to
//! (over `--remote`, or an older one).

use super::{resize_to_terminal, Outcome, Signals};
use crate::cli::context::Context;
use crate::cli::output::write_stdout;
use crate::cli::stdin_thread;
use crate::cli::terminal::{self, RawMode, LEAVE_MODES};
use crate::{Client, ClientError, Connector, FollowItem, PaneFollower, ReconnectPolicy};
use anyhow::Context as _;
use panehost_ipc::{Event, PaneId, ScreenSnapshot, Size, StreamStart};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How long input typed before a detach may take to reach the host.
const INPUT_DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// Input for the pane, in the order it happened.
#[derive(Debug)]
enum Input {
    Bytes(Vec<u8>),
    Resize(Size),
}

/// Attaches by relaying, and restores the terminal however the
/// attachment ends.
pub(super) async fn attach(
    context: &Context,
    pane: &PaneId,
    detach_key: u8,
    signals: &mut Signals,
) -> anyhow::Result<Outcome> {
    let connector = context.connector()?;
    let policy = ReconnectPolicy::default();
    let input_client = connector.connect().await?;
    resize_to_terminal(&input_client, pane).await?;
    let mut follower = PaneFollower::with_connector(connector.clone(), policy, pane.clone(), None).await?;
    let mut stdin = stdin_thread::spawn_chunk_reader().context("cannot read standard input")?;
    let (inputs, queued) = mpsc::channel(256);
    let mut input_task = tokio::spawn(forward_input(input_client, connector, policy, pane.clone(), queued));

    let raw_mode = RawMode::enter().context("cannot switch the terminal to raw mode")?;
    let outcome = relay(&mut follower, &mut stdin, &inputs, &mut input_task, signals, detach_key).await;
    let _ = write_stdout(LEAVE_MODES);
    drop(raw_mode);

    // Let input typed before the detach key reach the pane.
    drop(inputs);
    if !input_task.is_finished() {
        let _ = tokio::time::timeout(INPUT_DRAIN_TIMEOUT, &mut input_task).await;
    }
    input_task.abort();
    outcome
}

/// Copies output to the terminal and keystrokes to the pane until one side
/// ends.
async fn relay(
    follower: &mut PaneFollower,
    stdin: &mut mpsc::Receiver<std::io::Result<Vec<u8>>>,
    inputs: &mpsc::Sender<Input>,
    input_task: &mut JoinHandle<Result<(), ClientError>>,
    signals: &mut Signals,
    detach_key: u8,
) -> anyhow::Result<Outcome> {
    let mut exit_status = None;
    loop {
        tokio::select! {
            item = follower.next() => {
                let shown = match item? {
                    None => return Ok(Outcome::Ended { status: exit_status, reason: "ended".to_owned() }),
                    Some(FollowItem::Start(StreamStart::Replay { .. })) => true,
                    Some(FollowItem::Start(
                        StreamStart::Snapshot { snapshot, .. } | StreamStart::GenerationChanged { snapshot, .. },
                    )) => draw(&snapshot)?,
                    Some(FollowItem::Event(event)) => match event {
                        Event::Output { data, .. } => write_stdout(data.as_slice())?,
                        Event::Resync { snapshot, .. } => draw(&snapshot)?,
                        Event::Resized { .. }
                        | Event::TurnStarted { .. }
                        | Event::TurnCompleted { .. }
                        | Event::AwaitingInput { .. }
                        | Event::ApprovalRequested { .. }
                        | Event::PaneStarted { .. }
                        | Event::PaneActivity { .. }
                        | Event::PaneExited { .. }
                        | Event::PaneEnded { .. }
                        | Event::PaneList { .. }
                        | Event::PaneChanged { .. } => true,
                        Event::Exited { status, .. } => {
                            exit_status = Some(status);
                            true
                        }
                        Event::Ended { reason } => return Ok(Outcome::Ended { status: exit_status, reason }),
                    },
                };
                if !shown {
                    return Ok(Outcome::Detached);
                }
            }
            chunk = stdin.recv() => match chunk {
                None => return Ok(Outcome::Detached),
                Some(Err(error)) => return Err(error).context("cannot read the terminal"),
                Some(Ok(bytes)) => match bytes.iter().position(|byte| *byte == detach_key) {
                    Some(at) => {
                        if at > 0 {
                            let _ = inputs.send(Input::Bytes(bytes[..at].to_vec())).await;
                        }
                        return Ok(Outcome::Detached);
                    }
                    None => {
                        let _ = inputs.send(Input::Bytes(bytes)).await;
                    }
                },
            },
            _ = signals.window_change.recv() => {
                if let Some(size) = terminal::size() {
                    let _ = inputs.send(Input::Resize(size)).await;
                }
            }
            name = signals.ending.next() => return Ok(Outcome::Signal(name)),
            finished = &mut *input_task => {
                finished.context("the input task failed")??;
                anyhow::bail!("input to the pane stopped");
            }
        }
    }
}

/// Clears the terminal and draws a screen snapshot. False when the
/// terminal is gone.
fn draw(snapshot: &ScreenSnapshot) -> std::io::Result<bool> {
    write_stdout(&snapshot.drawing())
}

/// Sends keystrokes and resizes to the pane, reconnecting after a loss.
///
/// Keystrokes whose answer was lost with the connection are not sent again:
/// they may have reached the pane, and typing them twice is worse than
/// losing them. A resize is sent again (it is idempotent). Refusals of the
/// host (such as `PANE_EXITED`) are ignored: the output side reports the
/// pane's end.
async fn forward_input(
    mut client: Client,
    connector: Connector,
    policy: ReconnectPolicy,
    pane: PaneId,
    mut inputs: mpsc::Receiver<Input>,
) -> Result<(), ClientError> {
    while let Some(input) = inputs.recv().await {
        let result = match &input {
            Input::Bytes(bytes) => client.send_input(&pane, bytes, false).await.map(drop),
            Input::Resize(size) => client.resize(&pane, *size).await.map(drop),
        };
        match result {
            Ok(()) => {}
            Err(ClientError::Host(error)) => tracing::debug!(%error, "the host refused input"),
            Err(error) if error.is_connection_lost() => {
                tracing::warn!(%error, "lost the input connection; reconnecting");
                client = policy.retry(|| connector.connect()).await?;
                if let Input::Resize(size) = input {
                    let _ = client.resize(&pane, size).await;
                }
            }
            Err(error) => return Err(error),
        }
    }
    Ok(())
}
