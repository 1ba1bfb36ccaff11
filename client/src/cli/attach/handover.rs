//! Attaching by handing the terminal to the host: the host reads the keys
//! and writes the pane's output itself; this process sets the terminal's
//! modes, passes the host window-size changes, and waits for the terminal
//! to come back.

use super::{resize_to_terminal, Outcome, Signals};
use crate::cli::context::Context;
use crate::cli::output::write_stdout;
use crate::cli::terminal::{self, RawMode, LEAVE_MODES};
use crate::{ClientError, ReconnectPolicy, TerminalHandover};
use anyhow::Context as _;
use panehost_ipc::terminal::release_reason;
use panehost_ipc::{Encoding, ErrorCode, PaneId, TerminalRelease};
use std::os::fd::AsFd;
use std::time::Duration;

/// How long the host may take to give the terminal back once this process
/// has been told to stop.
const RELEASE_WAIT: Duration = Duration::from_secs(2);

/// One handover's end.
enum Handover {
    /// The attachment ended.
    Ended(Outcome),
    /// This host cannot take the terminal: relay instead.
    NotTaken,
    /// The connection to the host was lost (it stopped): the host holds
    /// the terminal no more; attach again once a host answers.
    HostLost,
}

/// Attaches by handing the terminal over; `None` when the host cannot
/// take it (it is older than revision 4, or refused what was passed), for
/// the caller to relay instead. A host that stops meanwhile is waited for
/// (it is started again on demand) and the terminal handed over again.
pub(super) async fn attach(
    context: &Context,
    pane: &PaneId,
    detach_key: u8,
    signals: &mut Signals,
) -> anyhow::Result<Option<Outcome>> {
    let connector = context.connector()?;
    let policy = ReconnectPolicy::default();
    loop {
        match hand_over(context, &connector, pane, detach_key, signals).await? {
            Handover::Ended(outcome) => return Ok(Some(outcome)),
            Handover::NotTaken => return Ok(None),
            Handover::HostLost => {
                tracing::warn!("lost the host while it held the terminal; attaching again");
                policy.retry(|| connector.connect()).await?;
            }
        }
    }
}

/// Hands the terminal over once and waits for it to come back.
async fn hand_over(
    context: &Context,
    connector: &crate::Connector,
    pane: &PaneId,
    detach_key: u8,
    signals: &mut Signals,
) -> anyhow::Result<Handover> {
    // Through the connector first: it starts a host when none answers.
    let control = connector.connect().await?;
    resize_to_terminal(&control, pane).await?;
    let handover = TerminalHandover::connect(&context.socket, &context.client_options(Encoding::Json)).await?;
    if !handover.host_takes_terminals() {
        return Ok(Handover::NotTaken);
    }
    let raw_mode = RawMode::enter().context("cannot switch the terminal to raw mode")?;
    let (stdin, stdout) = (std::io::stdin(), std::io::stdout());
    let released = async {
        let mut attachment = handover.attach(pane, detach_key, stdin.as_fd(), stdout.as_fd()).await?;
        loop {
            tokio::select! {
                released = attachment.released() => return released.map(|release| (release, None)),
                _ = signals.window_change.recv() => {
                    if let Some(size) = terminal::size() {
                        let _ = control.resize(pane, size).await;
                    }
                }
                name = signals.ending.next() => {
                    let _ = attachment.end();
                    return match tokio::time::timeout(RELEASE_WAIT, attachment.released()).await {
                        Ok(released) => released.map(|release| (release, Some(name))),
                        Err(_) => Err(ClientError::Timeout { what: "the host to give the terminal back", after: RELEASE_WAIT }),
                    };
                }
            }
        }
    }
    .await;
    // The host put the descriptors' flags back; a host that stopped could
    // not have.
    clear_non_blocking(&stdin);
    clear_non_blocking(&stdout);
    let _ = write_stdout(LEAVE_MODES);
    drop(raw_mode);
    match released {
        Ok((_, Some(signal))) => Ok(Handover::Ended(Outcome::Signal(signal))),
        Ok((release, None)) => Ok(Handover::Ended(outcome(release))),
        Err(ClientError::Host(error)) if error.code == ErrorCode::NoTerminal.as_str() => {
            tracing::debug!(%error, "the host did not take the terminal");
            Ok(Handover::NotTaken)
        }
        Err(error) if error.is_connection_lost() => Ok(Handover::HostLost),
        Err(error) => Err(error.into()),
    }
}

/// What the host's answer means for the person at the terminal.
fn outcome(release: TerminalRelease) -> Outcome {
    match release.reason.as_str() {
        release_reason::DETACHED => Outcome::Detached,
        release_reason::TERMINAL_LOST => Outcome::Signal("the terminal's end"),
        _ => Outcome::Ended { status: release.exit, reason: release.reason },
    }
}

/// Puts a descriptor of the terminal back in blocking mode.
fn clear_non_blocking(descriptor: &impl AsFd) {
    if let Ok(flags) = rustix::fs::fcntl_getfl(descriptor) {
        if flags.contains(rustix::fs::OFlags::NONBLOCK) {
            let _ = rustix::fs::fcntl_setfl(descriptor, flags - rustix::fs::OFlags::NONBLOCK);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use panehost_ipc::ExitStatus;

    #[test]
    fn the_hosts_reasons_become_outcomes() {
        let release = |reason: &str, exit| TerminalRelease { pane: PaneId::from("p1"), reason: reason.into(), exit };
        assert!(matches!(outcome(release("detached", None)), Outcome::Detached));
        let status = ExitStatus { code: 3, signal: None };
        assert!(matches!(
            outcome(release("exited", Some(status.clone()))),
            Outcome::Ended { status: Some(ref got), ref reason } if *got == status && reason == "exited"
        ));
        assert!(
            matches!(outcome(release("closed", None)), Outcome::Ended { status: None, ref reason } if reason == "closed")
        );
        assert!(matches!(outcome(release("terminal_lost", None)), Outcome::Signal(_)));
    }
}
