//! The lines the keeper and its host exchange on a connection.
//!
//! Keeper to host: `pane <pid> running`, `pane <pid> exited <code> <signal>`
//! (the greeting, which carries the master fd) and `exited <code> <signal>`.
//! Host to keeper: `release`. Every line ends with `\n`.

use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus;

/// The longest line the keeper accepts from its host, newline included.
pub const MAX_REQUEST_LINE: usize = 256;

/// How the child ended: its exit code, or 128 + n and the signal's name for
/// death by signal n.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitReport {
    /// The exit code, or 128 + the signal number.
    pub code: i32,
    /// The conventional name of the signal that killed the child, if one did.
    pub signal: Option<String>,
}

impl ExitReport {
    /// The report for a status `waitpid` returned.
    pub fn from_status(status: ExitStatus) -> Self {
        match (status.code(), status.signal()) {
            (Some(code), _) => Self { code, signal: None },
            (None, Some(signal)) => Self { code: 128 + signal, signal: Some(signal_name(signal)) },
            (None, None) => Self::unknown(),
        }
    }

    /// The report for a status `waitpid` (rustix's) returned.
    pub fn from_wait(status: rustix::process::WaitStatus) -> Self {
        match (status.exit_status(), status.terminating_signal()) {
            (Some(code), _) => Self { code, signal: None },
            (None, Some(signal)) => Self { code: 128 + signal, signal: Some(signal_name(signal)) },
            (None, None) => Self::unknown(),
        }
    }

    /// The report when the status could not be obtained.
    pub fn unknown() -> Self {
        Self { code: 255, signal: None }
    }

    /// `<code> <signal-or-dash>`.
    fn fields(&self) -> String {
        format!("{} {}", self.code, self.signal.as_deref().unwrap_or("-"))
    }
}

/// The greeting each accepted connection receives, together with the
/// master fd.
pub fn greeting(child_pid: u32, exit: Option<&ExitReport>) -> String {
    match exit {
        None => format!("pane {child_pid} running\n"),
        Some(exit) => format!("pane {child_pid} exited {}\n", exit.fields()),
    }
}

/// The line sent to a connected host when the child exits.
pub fn exited(exit: &ExitReport) -> String {
    format!("exited {}\n", exit.fields())
}

/// A line from the host.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// `release`: the host has recorded the exit and forgets the pane.
    Release,
    /// Anything else; ignored, so a newer host can talk to an older keeper.
    Unknown,
}

/// The host sent a line longer than [`MAX_REQUEST_LINE`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineTooLong;

/// Splits the host's bytes into requests, one per line.
#[derive(Debug, Default)]
pub struct RequestReader {
    partial: Vec<u8>,
}

impl RequestReader {
    /// Adds bytes read from the connection and returns the complete
    /// requests they finish, in order.
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<Request>, LineTooLong> {
        let mut requests = Vec::new();
        for &byte in bytes {
            if byte == b'\n' {
                requests.push(parse_request(&self.partial));
                self.partial.clear();
            } else if self.partial.len() + 1 >= MAX_REQUEST_LINE {
                return Err(LineTooLong);
            } else {
                self.partial.push(byte);
            }
        }
        Ok(requests)
    }
}

fn parse_request(line: &[u8]) -> Request {
    let line = line.strip_suffix(b"\r").unwrap_or(line);
    match line {
        b"release" => Request::Release,
        _ => Request::Unknown,
    }
}

/// The conventional name of a Linux signal number.
fn signal_name(signal: i32) -> String {
    const NAMES: [&str; 31] = [
        "SIGHUP",
        "SIGINT",
        "SIGQUIT",
        "SIGILL",
        "SIGTRAP",
        "SIGABRT",
        "SIGBUS",
        "SIGFPE",
        "SIGKILL",
        "SIGUSR1",
        "SIGSEGV",
        "SIGUSR2",
        "SIGPIPE",
        "SIGALRM",
        "SIGTERM",
        "SIGSTKFLT",
        "SIGCHLD",
        "SIGCONT",
        "SIGSTOP",
        "SIGTSTP",
        "SIGTTIN",
        "SIGTTOU",
        "SIGURG",
        "SIGXCPU",
        "SIGXFSZ",
        "SIGVTALRM",
        "SIGPROF",
        "SIGWINCH",
        "SIGIO",
        "SIGPWR",
        "SIGSYS",
    ];
    usize::try_from(signal - 1)
        .ok()
        .and_then(|index| NAMES.get(index))
        .map_or_else(|| format!("SIG{signal}"), |name| (*name).to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_the_keepers_lines() {
        let signalled = ExitReport::from_status(ExitStatus::from_raw(15));
        assert_eq!(signalled, ExitReport { code: 143, signal: Some("SIGTERM".into()) });
        let exited_7 = ExitReport::from_status(ExitStatus::from_raw(7 << 8));
        assert_eq!(greeting(42, None), "pane 42 running\n");
        assert_eq!(greeting(42, Some(&exited_7)), "pane 42 exited 7 -\n");
        assert_eq!(exited(&signalled), "exited 143 SIGTERM\n");
        assert_eq!(signal_name(64), "SIG64");
    }

    #[test]
    fn reads_requests_across_reads() {
        let mut reader = RequestReader::default();
        assert_eq!(reader.feed(b"rel"), Ok(vec![]));
        assert_eq!(
            reader.feed(b"ease\nhello\r\nrelease\r\n"),
            Ok(vec![Request::Release, Request::Unknown, Request::Release])
        );
        assert_eq!(reader.feed(&[b'x'; MAX_REQUEST_LINE]), Err(LineTooLong));
    }
}
