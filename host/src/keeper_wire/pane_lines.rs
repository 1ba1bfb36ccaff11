//! The lines on a pane's connection. Keeper to host: the greeting `pane
//! <pid> running` or `pane <pid> exited <code> <signal>` (sent with the
//! master fd), then `exited <code> <signal>` when the child ends while the
//! host is connected. Host to keeper: `release`. Every line ends with `\n`.

use panehost_ipc::ExitStatus;
use std::io;
use std::os::unix::process::ExitStatusExt;
use std::process::ExitStatus as ProcessStatus;

/// The longest line the keeper accepts from its host, newline included.
pub const MAX_REQUEST_LINE: usize = 256;

/// The longest line the host reads from a keeper's pane connection.
pub const MAX_KEEPER_LINE: usize = 256;

/// The host's line that lets a pane go: it has recorded the exit.
pub const RELEASE: &[u8] = b"release\n";

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
    pub fn from_status(status: ProcessStatus) -> Self {
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

/// Parses a greeting line (without its newline): `pane <pid> running` or
/// `pane <pid> exited <code> <signal|->`.
///
/// # Errors
/// Fails on any other line.
pub fn parse_greeting(line: &[u8]) -> io::Result<(u32, Option<ExitStatus>)> {
    let line = String::from_utf8_lossy(line);
    let words: Vec<&str> = line.split_whitespace().collect();
    match words.as_slice() {
        ["pane", pid, "running"] => Ok((pid.parse().map_err(io::Error::other)?, None)),
        ["pane", pid, "exited", code, signal] => {
            Ok((pid.parse().map_err(io::Error::other)?, Some(parse_exit(code, signal)?)))
        }
        _ => Err(io::Error::other(format!("unexpected keeper line {line:?}"))),
    }
}

/// Parses an `exited <code> <signal|->` line (without its newline); `None`
/// for any other line.
pub fn parse_exited(line: &str) -> Option<ExitStatus> {
    match line.split_whitespace().collect::<Vec<_>>().as_slice() {
        ["exited", code, signal] => parse_exit(code, signal).ok(),
        _ => None,
    }
}

/// Parses `<code> <signal|->`.
fn parse_exit(code: &str, signal: &str) -> io::Result<ExitStatus> {
    Ok(ExitStatus { code: code.parse().map_err(io::Error::other)?, signal: (signal != "-").then(|| signal.to_owned()) })
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
