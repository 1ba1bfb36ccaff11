//! `panehost attach PANE [--detach-key KEY]`: this terminal becomes the
//! pane's terminal until the detach key is pressed or the pane ends.
//!
//! Output arrives through a [`PaneFollower`], so a lost host connection is
//! resumed without a gap. Keystrokes and resizes travel on a second
//! connection, so that waiting for their answers never stalls the output.

use super::context::Context;
use super::detach_key::{self, describe_key};
use super::output::print_line;
use super::output::write_stdout;
use super::terminal::{self, RawMode, CLEAR_SCREEN, LEAVE_MODES};
use super::{stdin_thread, UsageError};
use crate::{Client, ClientError, Connector, FollowItem, PaneFollower, ReconnectPolicy};
use anyhow::Context as _;
use panehost_ipc::{ErrorCode, Event, ExitStatus, PaneId, ScreenSnapshot, Size, StreamStart};
use std::time::Duration;
use tokio::signal::unix::{signal, Signal, SignalKind};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

/// How long input typed before a detach may take to reach the host.
const INPUT_DRAIN_TIMEOUT: Duration = Duration::from_secs(2);

/// Arguments of `attach`.
#[derive(Debug, clap::Args)]
pub(crate) struct AttachArgs {
    /// The pane.
    pane: String,
    /// The key that detaches: ^X, ctrl-X or 0xNN.
    #[arg(long, value_name = "KEY", default_value = detach_key::DEFAULT_DETACH_KEY, value_parser = detach_key::parse_detach_key)]
    detach_key: u8,
}

impl AttachArgs {
    /// Attach to `pane`, detaching on `detach_key`.
    pub(crate) fn new(pane: String, detach_key: u8) -> AttachArgs {
        AttachArgs { pane, detach_key }
    }
}

/// Input for the pane, in the order it happened.
#[derive(Debug)]
enum Input {
    Bytes(Vec<u8>),
    Resize(Size),
}

/// How an attachment ended.
#[derive(Debug)]
enum Outcome {
    Detached,
    Ended { status: Option<ExitStatus>, reason: String },
    Signal(&'static str),
}

/// Attaches, and restores the terminal however the attachment ends.
pub(crate) async fn run(context: &Context, args: AttachArgs) -> anyhow::Result<()> {
    if !terminal::stdin_is_terminal() {
        return Err(UsageError("attach needs a terminal on standard input".to_owned()).into());
    }
    let pane = PaneId(args.pane);
    let connector = context.connector()?;
    let policy = ReconnectPolicy::default();
    let input_client = connector.connect().await?;
    if let Some(size) = terminal::size() {
        // Resize first, so the snapshot is drawn at this terminal's size.
        match input_client.resize(&pane, size).await {
            Err(ClientError::Host(error)) if error.code == ErrorCode::PaneExited.as_str() => {}
            other => {
                other?;
            }
        }
    }
    let mut follower = PaneFollower::with_connector(connector.clone(), policy, pane.clone(), None).await?;
    let mut signals = Signals::new().context("cannot watch signals")?;
    let mut stdin = stdin_thread::spawn_chunk_reader().context("cannot read standard input")?;
    let (inputs, queued) = mpsc::channel(256);
    let mut input_task = tokio::spawn(forward_input(input_client, connector, policy, pane.clone(), queued));

    let raw_mode = RawMode::enter().context("cannot switch the terminal to raw mode")?;
    tracing::debug!(pane = %pane, detach_key = %describe_key(args.detach_key), "attached");
    let outcome = relay(&mut follower, &mut stdin, &inputs, &mut input_task, &mut signals, args.detach_key).await;
    let _ = write_stdout(LEAVE_MODES);
    drop(raw_mode);

    // Let input typed before the detach key reach the pane.
    drop(inputs);
    if !input_task.is_finished() {
        let _ = tokio::time::timeout(INPUT_DRAIN_TIMEOUT, &mut input_task).await;
    }
    input_task.abort();

    let outcome = outcome?;
    if let Some(message) = farewell(&pane, &outcome) {
        print_line(&message)?;
    }
    match outcome {
        Outcome::Signal(name) => anyhow::bail!("stopped by {name}"),
        Outcome::Detached | Outcome::Ended { .. } => Ok(()),
    }
}

/// The line printed once the terminal is restored.
fn farewell(pane: &PaneId, outcome: &Outcome) -> Option<String> {
    match outcome {
        Outcome::Detached => Some(format!("\n[detached from {pane}; `panehost attach {pane}` to come back]")),
        Outcome::Ended { status: Some(status), .. } => Some(format!("\n[{pane} exited with code {}]", status.code)),
        Outcome::Ended { status: None, reason } => Some(format!("\n[{pane} {reason}]")),
        Outcome::Signal(_) => None,
    }
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
                        | Event::PaneList { .. } => true,
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
            _ = signals.terminate.recv() => return Ok(Outcome::Signal("SIGTERM")),
            _ = signals.hangup.recv() => return Ok(Outcome::Signal("SIGHUP")),
            _ = signals.interrupt.recv() => return Ok(Outcome::Signal("SIGINT")),
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
    let mut bytes = Vec::with_capacity(CLEAR_SCREEN.len() + snapshot.formatted.len());
    bytes.extend_from_slice(CLEAR_SCREEN);
    bytes.extend_from_slice(snapshot.formatted.as_slice());
    write_stdout(&bytes)
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

/// The signals an attachment reacts to.
#[derive(Debug)]
struct Signals {
    window_change: Signal,
    terminate: Signal,
    hangup: Signal,
    interrupt: Signal,
}

impl Signals {
    fn new() -> std::io::Result<Signals> {
        Ok(Signals {
            window_change: signal(SignalKind::window_change())?,
            terminate: signal(SignalKind::terminate())?,
            hangup: signal(SignalKind::hangup())?,
            interrupt: signal(SignalKind::interrupt())?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn farewell_lines() {
        let pane = PaneId::from("p1");
        assert_eq!(
            farewell(&pane, &Outcome::Detached).unwrap(),
            "\n[detached from p1; `panehost attach p1` to come back]"
        );
        let exited = Outcome::Ended { status: Some(ExitStatus { code: 2, signal: None }), reason: "exited".into() };
        assert_eq!(farewell(&pane, &exited).unwrap(), "\n[p1 exited with code 2]");
        let closed = Outcome::Ended { status: None, reason: "closed".into() };
        assert_eq!(farewell(&pane, &closed).unwrap(), "\n[p1 closed]");
        assert_eq!(farewell(&pane, &Outcome::Signal("SIGTERM")), None);
    }
}
