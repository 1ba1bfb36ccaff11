//! `panehost attach PANE [--detach-key KEY]`: this terminal becomes the
//! pane's terminal until the detach key is pressed or the pane ends.
//!
//! Two ways, one behaviour. With a host on this machine the terminal is
//! handed to the host ([`handover`]), which reads the keys and writes the
//! output itself, as `tmux attach` has its server do: nothing is relayed
//! through this process. Over `--remote`, or with a host too old to take a
//! terminal, this process relays ([`relay`]): output through a
//! [`crate::PaneFollower`], keys with `send`.

mod handover;
mod relay;

use super::context::Context;
use super::detach_key::{self, describe_key};
use super::output::print_line;
use super::terminal;
use super::UsageError;
use crate::{Client, ClientError};
use panehost_ipc::{ErrorCode, ExitStatus, PaneId};
use tokio::signal::unix::{signal, Signal, SignalKind};

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
    let mut signals = Signals::new().map_err(|err| anyhow::anyhow!("cannot watch signals: {err}"))?;
    tracing::debug!(pane = %pane, detach_key = %describe_key(args.detach_key), "attaching");
    let handed_over = match context.remote {
        None if terminal::stdout_is_terminal() => {
            handover::attach(context, &pane, args.detach_key, &mut signals).await?
        }
        _ => None,
    };
    let outcome = match handed_over {
        Some(outcome) => outcome,
        None => relay::attach(context, &pane, args.detach_key, &mut signals).await?,
    };
    if let Some(message) = farewell(&pane, &outcome) {
        // The pane's last line may have no end.
        print_line("")?;
        print_line(&message)?;
    }
    match outcome {
        Outcome::Signal(name) => anyhow::bail!("stopped by {name}"),
        Outcome::Detached | Outcome::Ended { .. } => Ok(()),
    }
}

/// Resizes the pane to this terminal first, so that its screen is drawn
/// at this terminal's size. A pane that has exited keeps its size (its end
/// is shown all the same).
async fn resize_to_terminal(client: &Client, pane: &PaneId) -> Result<(), ClientError> {
    let Some(size) = terminal::size() else { return Ok(()) };
    match client.resize(pane, size).await {
        Err(ClientError::Host(error)) if error.code == ErrorCode::PaneExited.as_str() => Ok(()),
        other => other.map(drop),
    }
}

/// The line printed once the terminal is restored (on a line of its own).
fn farewell(pane: &PaneId, outcome: &Outcome) -> Option<String> {
    match outcome {
        Outcome::Detached => Some(format!("[detached from {pane}; `panehost attach {pane}` to come back]")),
        Outcome::Ended { status: Some(status), .. } => Some(format!("[{pane} exited with code {}]", status.code)),
        Outcome::Ended { status: None, reason } => Some(format!("[{pane} {reason}]")),
        Outcome::Signal(_) => None,
    }
}

/// The signals an attachment reacts to.
#[derive(Debug)]
struct Signals {
    window_change: Signal,
    ending: EndingSignals,
}

/// The signals that end an attachment.
#[derive(Debug)]
struct EndingSignals {
    terminate: Signal,
    hangup: Signal,
    interrupt: Signal,
}

impl Signals {
    fn new() -> std::io::Result<Signals> {
        Ok(Signals {
            window_change: signal(SignalKind::window_change())?,
            ending: EndingSignals {
                terminate: signal(SignalKind::terminate())?,
                hangup: signal(SignalKind::hangup())?,
                interrupt: signal(SignalKind::interrupt())?,
            },
        })
    }
}

impl EndingSignals {
    /// The next one to arrive, by name.
    async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.terminate.recv() => "SIGTERM",
            _ = self.hangup.recv() => "SIGHUP",
            _ = self.interrupt.recv() => "SIGINT",
        }
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
            "[detached from p1; `panehost attach p1` to come back]"
        );
        let exited = Outcome::Ended { status: Some(ExitStatus { code: 2, signal: None }), reason: "exited".into() };
        assert_eq!(farewell(&pane, &exited).unwrap(), "[p1 exited with code 2]");
        let closed = Outcome::Ended { status: None, reason: "closed".into() };
        assert_eq!(farewell(&pane, &closed).unwrap(), "[p1 closed]");
        assert_eq!(farewell(&pane, &Outcome::Signal("SIGTERM")), None);
    }
}
