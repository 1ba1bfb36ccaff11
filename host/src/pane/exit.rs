//! The exit watcher: learns from the pane's keeper how its child ended.
//!
//! The keeper reaps the child and reports `exited <code> <signal|->` on the
//! control connection. Should the keeper itself be lost (killed), the
//! watcher falls back to a pidfd on the child: it learns that the child
//! ended, but not how.

use super::Pane;
use crate::keeper_wire::pane_lines::{parse_exited, MAX_KEEPER_LINE};
use crate::limits;
use crate::limits::{EXIT_DRAIN_GRACE, EXIT_DRAIN_LIMIT};
use futures_util::StreamExt;
use panehost_ipc::ExitStatus;
use rustix::process::{pidfd_open, Pid, PidfdFlags};
use std::sync::Arc;
use tokio::io::unix::AsyncFd;
use tokio::net::unix::OwnedReadHalf;
use tokio_util::codec::{FramedRead, LinesCodec, LinesCodecError};

/// Waits for the keeper's exit report (or the child's end), lets the
/// remaining output drain, and records the exit.
pub(super) async fn watch(pane: Arc<Pane>, control: OwnedReadHalf, already: Option<ExitStatus>) {
    let status = match already {
        Some(status) => status,
        None => match read_exit_report(control).await {
            Some(status) => status,
            None => {
                tracing::warn!(pane = %pane.info.id, "keeper lost; watching the child directly");
                wait_for_child(&pane).await;
                ExitStatus { code: 255, signal: None }
            }
        },
    };
    if !drain(&pane).await {
        tracing::debug!(pane = %pane.info.id, "output still open after exit (a descendant holds the terminal)");
    }
    tracing::info!(pane = %pane.info.id, code = status.code, signal = ?status.signal, "process exited");
    pane.record_exit(status);
}

/// Waits until the reader has taken the last of the output: true then;
/// false once neither the output nor the terminal model it may wait for
/// has moved for [`EXIT_DRAIN_GRACE`], or after [`EXIT_DRAIN_LIMIT`] in
/// all. A reader held up by a model that parses slowly (a loaded machine,
/// a small ring) is waited for, not cut off.
async fn drain(pane: &Pane) -> bool {
    let mut progress = pane.progress();
    let mut parsed = pane.parsed_offset();
    let deadline = tokio::time::Instant::now() + EXIT_DRAIN_LIMIT;
    loop {
        progress.mark_seen();
        parsed.borrow_and_update();
        if pane.reader_done() {
            return true;
        }
        let moved = async {
            tokio::select! {
                changed = progress.changed() => changed.is_ok(),
                changed = parsed.changed() => changed.is_ok(),
            }
        };
        match tokio::time::timeout_at(deadline, tokio::time::timeout(EXIT_DRAIN_GRACE, moved)).await {
            Ok(Ok(true)) => {}
            // Quiet for the grace, the pane gone, or the limit reached.
            _ => return pane.reader_done(),
        }
    }
}

/// The keeper's `exited` line; `None` when the connection ends first (or
/// breaks: it carries only the keeper's short lines, so bytes that are not
/// text end it too). A line over [`MAX_KEEPER_LINE`] is skipped.
async fn read_exit_report(control: OwnedReadHalf) -> Option<ExitStatus> {
    let mut lines = FramedRead::new(control, LinesCodec::new_with_max_length(MAX_KEEPER_LINE));
    while let Some(line) = lines.next().await {
        match line {
            Ok(line) => match parse_exited(&line) {
                Some(status) => return Some(status),
                None => tracing::debug!(line, "unexpected keeper line"),
            },
            Err(LinesCodecError::MaxLineLengthExceeded) => tracing::debug!("a keeper line over the limit, skipped"),
            Err(LinesCodecError::Io(_)) => return None,
        }
    }
    None
}

/// Waits until the child process is gone (it is not our child: no status).
async fn wait_for_child(pane: &Pane) {
    let Some(pid) = Pid::from_raw(pane.info.pid as i32) else { return };
    match exit_pidfd(pid) {
        Ok(pidfd) => {
            let _ = pidfd.readable().await;
        }
        Err(_) => {
            while std::path::Path::new(&format!("/proc/{}", pane.info.pid)).exists() {
                tokio::time::sleep(limits::CHILD_EXIT_POLL).await;
            }
        }
    }
}

/// A pidfd for `pid` on the runtime: readable once the process has exited.
///
/// # Errors
/// Fails where the kernel has no pidfds (before Linux 5.3), the process is
/// gone, or no fd is to spare.
pub(super) fn exit_pidfd(pid: Pid) -> std::io::Result<AsyncFd<std::os::fd::OwnedFd>> {
    let pidfd = pidfd_open(pid, PidfdFlags::NONBLOCK)?;
    // Safety: the pidfd is moved into the AsyncFd, which keeps it open.
    unsafe { AsyncFd::register(pidfd) }.map_err(std::io::Error::from)
}

#[cfg(test)]
mod tests {
    use crate::pane::fake_keeper::{behaviour, exit_of, shell_pane, FakeKeeper, Handing, SIZE};
    use crate::pane::PaneLimits;
    use panehost_adapters::CompletionSignal;
    use panehost_ipc::PaneState;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_exit_code_the_keeper_reports_is_the_panes() {
        let (_keeper, pane) = shell_pane("exit 3").await;
        let status = exit_of(&pane).await;
        assert_eq!((status.code, status.signal.clone()), (3, None));
        assert_eq!(pane.summary().state, PaneState::Exited(status));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_death_by_signal_is_told_with_the_signals_name() {
        let (_keeper, pane) = shell_pane("kill -TERM $$").await;
        let status = exit_of(&pane).await;
        assert_eq!((status.code, status.signal.as_deref()), (143, Some("SIGTERM")));
    }

    /// A keeper lost (its connection closed without a report): the pane
    /// watches its process itself, and records 255 once it ends.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn without_its_keeper_the_pane_sees_its_process_end() {
        let (keeper, pane) = shell_pane("read -r x").await;
        keeper.lose_connection();
        keeper.kill();
        let status = exit_of(&pane).await;
        assert_eq!((status.code, status.signal), (255, None));
    }

    /// A keeper that reaped the program before the host connected says
    /// so in its greeting; the output still waits in the PTY (3,000
    /// bytes, well within what a PTY holds, which a ring of 64 bytes
    /// takes in 47 reads, each after the model has parsed the one
    /// before), and all of it is read before the exit is recorded.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_exit_handed_over_waits_for_the_output_to_drain() {
        let (_keeper, pane) = FakeKeeper::pane_handed(
            &["/bin/sh", "-c", "head -c 3000 /dev/zero | tr '\\000' x; exit 5"],
            SIZE,
            behaviour(CompletionSignal::Unobserved),
            PaneLimits { ring_bytes: 64, ..PaneLimits::default() },
            Handing::AfterExit,
        )
        .await;
        let status = exit_of(&pane).await;
        let end = pane.current_progress().end;
        assert_eq!(status.code, 5);
        assert_eq!(end, 3_000, "the exit was recorded with output left in the PTY");
    }
}
