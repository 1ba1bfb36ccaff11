//! Ending a pane's processes.

use super::Pane;
use crate::limits::CLOSE_SIGNAL_WAIT;
use panehost_ipc::ExitStatus;
use rustix::process::{kill_process_group, Pid, Signal};

/// Sends SIGHUP, SIGTERM and SIGKILL in turn to the pane's process group
/// and its terminal's foreground group, stopping as soon as the exit is
/// recorded, then kills whatever is left of the group.
pub(super) async fn end_process_group(pane: &Pane) -> ExitStatus {
    for signal in [Signal::HUP, Signal::TERM, Signal::KILL] {
        if let Some(status) = pane.current_progress().exit {
            // Exited before this close: its group id may belong to someone
            // else by now, so nothing is signalled.
            return status;
        }
        signal_groups(pane, signal);
        if let Some(status) = pane.wait_exit(CLOSE_SIGNAL_WAIT).await {
            sweep(pane);
            return status;
        }
    }
    tracing::error!(pane = %pane.info.id, "process survived SIGKILL");
    ExitStatus { code: 255, signal: Some("SIGKILL".to_owned()) }
}

/// Background jobs of the pane may outlive its leader; end them too.
fn sweep(pane: &Pane) {
    signal_groups(pane, Signal::KILL);
}

fn signal_groups(pane: &Pane, signal: Signal) {
    let Some(leader) = Pid::from_raw(pane.info.pid as i32) else { return };
    let _ = kill_process_group(leader, signal);
    if let Ok(foreground) = rustix::termios::tcgetpgrp(pane.io.get_ref()) {
        if foreground != leader {
            let _ = kill_process_group(foreground, signal);
        }
    }
}

/// The terminal's foreground process group, or the pane's own group when
/// the terminal reports none.
pub(super) fn foreground_group(pane: &Pane) -> Option<Pid> {
    let leader = Pid::from_raw(pane.info.pid as i32)?;
    Some(rustix::termios::tcgetpgrp(pane.io.get_ref()).unwrap_or(leader))
}

/// Sends `signal` to process group `group`; says which, and how it went.
pub(super) fn signal_group(group: Pid, signal: Signal) -> String {
    match kill_process_group(group, signal) {
        Ok(()) => format!("process group {}", group.as_raw_nonzero()),
        Err(err) => format!("process group {}: {err}", group.as_raw_nonzero()),
    }
}

/// True while some process (a zombie too) is in process group `group`.
pub(super) fn group_exists(group: Pid) -> bool {
    rustix::process::test_kill_process_group(group).is_ok()
}

/// Sends `signal` to the terminal's foreground process group, or the
/// pane's own group when the terminal reports none; says which.
pub(super) fn signal_foreground(pane: &Pane, signal: Signal) -> String {
    let Some(leader) = Pid::from_raw(pane.info.pid as i32) else { return "no process".into() };
    let group = rustix::termios::tcgetpgrp(pane.io.get_ref()).unwrap_or(leader);
    match kill_process_group(group, signal) {
        Ok(()) => format!("process group {}", group.as_raw_nonzero()),
        Err(err) => format!("process group {}: {err}", group.as_raw_nonzero()),
    }
}
