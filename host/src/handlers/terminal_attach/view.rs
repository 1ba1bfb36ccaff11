//! A pane's events shown on a terminal the host drives: output as it
//! came, a snapshot drawn where output was skipped, and the pane's end
//! remembered for the answer.
//!
//! Output reaches the terminal two ways: the attachment's subscription
//! writes it, and the pane's reader offers each short read (an echo) as an
//! output tap, written at once when the terminal has been given all the
//! output before it. Both go through `delivered`, the offset the terminal
//! has been given the output up to, which moves only once a write is done:
//! the subscription writes only from there, and a tap only a read that
//! starts there. While the subscription writes, `delivered` is behind the
//! bytes it writes, which are in the ring already, so no read that is
//! offered starts there. Nothing is written twice or out of order, and
//! what a tap could not write the subscription does.

use super::terminal::Terminal;
use crate::pane::OutputTap;
use panehost_ipc::terminal::release_reason;
use panehost_ipc::{Event, ExitStatus};
use std::sync::{Arc, Mutex};

/// The pane's side of an attachment: what its subscription delivers.
#[derive(Debug)]
pub(crate) struct TerminalView {
    terminal: Arc<Terminal>,
    end: Mutex<End>,
    /// The offset of the next output byte the terminal needs; `None` until
    /// its screen is drawn.
    delivered: Mutex<Option<u64>>,
}

/// How the pane's side ended, as far as it has.
#[derive(Debug, Default, Clone)]
pub(crate) struct End {
    /// The process's status, once it exited.
    pub exit: Option<ExitStatus>,
    /// Why the stream ended (`exited`, `closed`, `terminal_lost`).
    pub reason: Option<&'static str>,
}

impl TerminalView {
    /// A view that draws on `terminal`.
    pub(crate) fn new(terminal: Arc<Terminal>) -> Self {
        TerminalView { terminal, end: Mutex::new(End::default()), delivered: Mutex::new(None) }
    }

    fn delivered_mut(&self) -> std::sync::MutexGuard<'_, Option<u64>> {
        self.delivered.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The offset of the next output byte the terminal needs, once its
    /// screen is drawn: the subscription goes on from there.
    pub(crate) fn delivered(&self) -> Option<u64> {
        *self.delivered_mut()
    }

    fn end_mut(&self) -> std::sync::MutexGuard<'_, End> {
        self.end.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How the pane's side ended, as far as it has.
    pub(crate) fn end(&self) -> End {
        self.end_mut().clone()
    }

    /// Draws a screen snapshot, after which the terminal needs the output
    /// from the snapshot's offset; false when the terminal is gone.
    pub(crate) async fn draw(&self, snapshot: &panehost_ipc::ScreenSnapshot) -> bool {
        let drawn = self.write(&snapshot.drawing()).await;
        *self.delivered_mut() = Some(snapshot.offset);
        drawn
    }

    /// Writes the output `data` at `offset`, from where the terminal has
    /// been given up to (a tap may have written its start).
    async fn write_output(&self, offset: u64, data: &[u8]) -> bool {
        let end = offset + data.len() as u64;
        let from = self.delivered().unwrap_or(offset).max(offset);
        if from >= end {
            return true;
        }
        let shown = self.write(&data[(from - offset) as usize..]).await;
        *self.delivered_mut() = Some(end);
        shown
    }

    /// Shows one event; false when the terminal is gone.
    pub(crate) async fn show(&self, event: Event) -> bool {
        match event {
            Event::Output { offset, data } => self.write_output(offset, data.as_slice()).await,
            Event::Resync { snapshot, .. } => self.draw(&snapshot).await,
            Event::Exited { status, .. } => {
                self.end_mut().exit = Some(status);
                true
            }
            Event::Ended { reason } => {
                let reason =
                    if reason == release_reason::CLOSED { release_reason::CLOSED } else { release_reason::EXITED };
                self.end_mut().reason.get_or_insert(reason);
                true
            }
            // The terminal is the size it is; turns are for clients that
            // ask.
            _ => true,
        }
    }

    async fn write(&self, bytes: &[u8]) -> bool {
        if self.terminal.write_all(bytes).await.is_ok() {
            return true;
        }
        self.end_mut().reason.get_or_insert(release_reason::TERMINAL_LOST);
        false
    }
}

impl OutputTap for TerminalView {
    fn offer(&self, offset: u64, data: &[u8]) {
        // Never wait: a subscription that holds the lock delivers these
        // bytes itself.
        let Ok(mut delivered) = self.delivered.try_lock() else { return };
        if *delivered != Some(offset) {
            return;
        }
        let written = self.terminal.try_write(data);
        *delivered = Some(offset + written as u64);
    }
}
