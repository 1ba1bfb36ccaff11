//! A pane's events shown on a terminal the host drives: output as it
//! came, a snapshot drawn where output was skipped, and the pane's end
//! remembered for the answer.

use super::terminal::Terminal;
use panehost_ipc::terminal::release_reason;
use panehost_ipc::{Event, ExitStatus};
use std::sync::{Arc, Mutex};

/// The pane's side of an attachment: what its subscription delivers.
#[derive(Debug)]
pub(crate) struct TerminalView {
    terminal: Arc<Terminal>,
    end: Mutex<End>,
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
        TerminalView { terminal, end: Mutex::new(End::default()) }
    }

    fn end_mut(&self) -> std::sync::MutexGuard<'_, End> {
        self.end.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// How the pane's side ended, as far as it has.
    pub(crate) fn end(&self) -> End {
        self.end_mut().clone()
    }

    /// Draws a screen snapshot; false when the terminal is gone.
    pub(crate) async fn draw(&self, snapshot: &panehost_ipc::ScreenSnapshot) -> bool {
        self.write(&snapshot.drawing()).await
    }

    /// Shows one event; false when the terminal is gone.
    pub(crate) async fn show(&self, event: Event) -> bool {
        match event {
            Event::Output { data, .. } => self.write(data.as_slice()).await,
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
