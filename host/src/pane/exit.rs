//! The exit watcher: reaps the child and records how it ended.

use super::Pane;
use crate::limits::EXIT_DRAIN_GRACE;
use panehost_ipc::ExitStatus;
use rustix::process::{pidfd_open, waitpid, Pid, PidfdFlags, WaitOptions, WaitStatus};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::unix::AsyncFd;

/// Waits for the child to exit (through a pidfd, no thread per pane),
/// reaps it, lets its remaining output drain, and records the exit.
pub(super) async fn watch(pane: Arc<Pane>) {
    wait_for_process_exit(&pane).await;
    let status = reap(&pane).await;
    let mut progress = pane.progress();
    // `wait_for` answers with a read guard on the progress; it must not be
    // held across `record_exit`, which writes it.
    let drained = matches!(tokio::time::timeout(EXIT_DRAIN_GRACE, progress.wait_for(|_| pane.reader_done())).await, Ok(Ok(_)));
    if !drained {
        tracing::debug!(pane = %pane.info.id, "output still open after exit (a descendant holds the terminal)");
    }
    tracing::info!(pane = %pane.info.id, code = status.code, signal = ?status.signal, "process exited");
    pane.record_exit(status);
}

async fn wait_for_process_exit(pane: &Pane) {
    let pidfd = Pid::from_raw(pane.info.pid as i32)
        .ok_or(rustix::io::Errno::SRCH)
        .and_then(|pid| pidfd_open(pid, PidfdFlags::NONBLOCK));
    // Safety: the pidfd is moved into the AsyncFd, which keeps it open.
    let registered = pidfd
        .map_err(std::io::Error::from)
        .and_then(|pidfd| unsafe { AsyncFd::register(pidfd) }.map_err(std::io::Error::from));
    match registered {
        Ok(pidfd) => {
            // A pidfd becomes readable when the process exits.
            let _ = pidfd.readable().await;
        }
        Err(err) => {
            tracing::debug!(pane = %pane.info.id, %err, "no pidfd; polling for exit");
            while !process_has_exited(pane) {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

/// True once the child is a zombie (or gone), without reaping it.
fn process_has_exited(pane: &Pane) -> bool {
    match std::fs::read_to_string(format!("/proc/{}/stat", pane.info.pid)) {
        Ok(stat) => stat.rsplit(')').next().is_some_and(|rest| rest.trim_start().starts_with('Z')),
        Err(_) => true,
    }
}

async fn reap(pane: &Pane) -> ExitStatus {
    let Some(pid) = Pid::from_raw(pane.info.pid as i32) else {
        return ExitStatus { code: 255, signal: None };
    };
    loop {
        match waitpid(Some(pid), WaitOptions::NOHANG) {
            Ok(Some((_, status))) => return exit_status(status),
            Ok(None) => {}
            Err(err) => {
                tracing::warn!(pane = %pane.info.id, %err, "reaping failed");
                return ExitStatus { code: 255, signal: None };
            }
        }
        // The pidfd fired, so the status is about to be available.
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// The protocol's exit status: the code, or 128 + n and the signal's name
/// for death by signal n.
fn exit_status(status: WaitStatus) -> ExitStatus {
    match (status.exit_status(), status.terminating_signal()) {
        (Some(code), _) => ExitStatus { code: code as u32, signal: None },
        (None, Some(signal)) => ExitStatus { code: 128 + signal as u32, signal: Some(signal_name(signal)) },
        (None, None) => ExitStatus { code: 255, signal: None },
    }
}

/// The conventional name of a Linux signal number.
fn signal_name(signal: i32) -> String {
    const NAMES: [&str; 31] = [
        "SIGHUP", "SIGINT", "SIGQUIT", "SIGILL", "SIGTRAP", "SIGABRT", "SIGBUS", "SIGFPE", "SIGKILL", "SIGUSR1", "SIGSEGV",
        "SIGUSR2", "SIGPIPE", "SIGALRM", "SIGTERM", "SIGSTKFLT", "SIGCHLD", "SIGCONT", "SIGSTOP", "SIGTSTP", "SIGTTIN",
        "SIGTTOU", "SIGURG", "SIGXCPU", "SIGXFSZ", "SIGVTALRM", "SIGPROF", "SIGWINCH", "SIGIO", "SIGPWR", "SIGSYS",
    ];
    usize::try_from(signal - 1)
        .ok()
        .and_then(|index| NAMES.get(index))
        .map(|name| (*name).to_owned())
        .unwrap_or_else(|| format!("SIG{signal}"))
}

#[cfg(test)]
mod tests {
    use super::signal_name;

    #[test]
    fn signals_have_their_names() {
        assert_eq!(signal_name(1), "SIGHUP");
        assert_eq!(signal_name(9), "SIGKILL");
        assert_eq!(signal_name(15), "SIGTERM");
        assert_eq!(signal_name(64), "SIG64");
    }
}
