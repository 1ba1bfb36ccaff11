//! `attach_terminal`: the host drives a terminal the client passed, as
//! `tmux attach` has its server do. Keys go from the terminal straight to
//! the pane and output from the pane straight to the terminal, without a
//! client process relaying each byte: a keystroke's echo costs what it
//! costs tmux. A client that cannot pass its terminal (over ssh, or from
//! another language) relays it with `events` and `send` instead.

mod terminal;
mod view;

pub(crate) use terminal::Terminal;
pub(crate) use view::TerminalView;

use crate::limits;
use crate::limits::INPUT_TIMEOUT;
use crate::pane::{OutputTap, Pane};
use crate::server::host_state::HostState;
use crate::server::subscription::{EventSink, SubscriptionTask};
use panehost_ipc::terminal::release_reason;
use panehost_ipc::{ErrorBody, ErrorCode, PaneId, Response, TerminalRelease};
use std::os::fd::OwnedFd;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

/// Draws the pane's screen on the terminal in `descriptors`, then relays
/// output and keys until the detach key, the pane's end, the terminal's
/// end, or the end of the client's requests (`requests_ended`). Answers
/// once the terminal is no longer used.
///
/// # Errors
/// `UNKNOWN_PANE`; `NO_TERMINAL` when the request brought no terminal.
pub(crate) async fn handle_attach_terminal(
    host: Arc<HostState>,
    id: PaneId,
    detach_key: u8,
    descriptors: Vec<OwnedFd>,
    requests_ended: CancellationToken,
) -> Result<Response, ErrorBody> {
    let pane = host.registry.find(&id)?;
    let terminal = Arc::new(Terminal::take(descriptors).map_err(|why| ErrorBody::new(ErrorCode::NoTerminal, why))?);
    let view = Arc::new(TerminalView::new(Arc::clone(&terminal)));
    // The screen as it is, then the output from there on.
    let snapshot = pane.snapshot();
    let task = SubscriptionTask {
        id: 0,
        pane: Arc::clone(&pane),
        cursor: snapshot.offset,
        size: pane.current_progress().size,
        next_signal: pane.first_signal_at(snapshot.offset),
        sink: EventSink::Terminal(Arc::clone(&view)),
    };
    tracing::info!(pane = %id, "terminal attached");
    let reason = if view.draw(&snapshot).await {
        // Echoes go straight to the terminal while the attachment lasts.
        let _tap = pane.tap_output(Arc::clone(&view) as Arc<dyn OutputTap>);
        tokio::select! {
            () = task.run() => view.end().reason.unwrap_or(release_reason::EXITED),
            reason = forward_keys(&pane, &terminal, detach_key) => reason,
            () = requests_ended.cancelled() => release_reason::CLIENT_ENDED,
        }
    } else {
        release_reason::TERMINAL_LOST
    };
    let exit = view.end().exit;
    // Everything that wrote to the terminal is gone with the select; its
    // descriptors close (their flags put back) before the answer.
    drop(view);
    drop(terminal);
    tracing::info!(pane = %id, reason, "terminal released");
    Ok(Response::TerminalReleased(TerminalRelease { pane: id, reason: reason.to_owned(), exit }))
}

/// Writes the keys read from the terminal to the pane, in line with every
/// other writer of its input, until the detach key (the keys before it in
/// the same read are written) or the terminal's end.
async fn forward_keys(pane: &Pane, terminal: &Terminal, detach_key: u8) -> &'static str {
    let mut buf = vec![0u8; limits::TERMINAL_KEY_READ_BYTES];
    loop {
        let read = match terminal.read(&mut buf).await {
            Ok(0) | Err(_) => return release_reason::TERMINAL_LOST,
            Ok(read) => read,
        };
        let (keys, detached) = match buf[..read].iter().position(|byte| *byte == detach_key) {
            Some(at) => (&buf[..at], true),
            None => (&buf[..read], false),
        };
        if !keys.is_empty() {
            let turn = pane.join_input_line().wait().await;
            // A pane that has exited takes no keys; its end reaches the
            // terminal through the output side.
            if let Err(err) = pane.write_input(&turn, keys, INPUT_TIMEOUT).await {
                tracing::debug!(%err, "keys not written");
            }
        }
        if detached {
            return release_reason::DETACHED;
        }
    }
}
