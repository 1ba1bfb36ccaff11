//! Starting the host on demand when no host answers.

use crate::connection::Client;
use crate::error::ClientError;
use crate::options::ClientOptions;
use std::ffi::OsString;
use std::fs::{DirBuilder, OpenOptions};
use std::future::Future;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::time::Instant;

/// How long a started host has to answer, by default.
pub const DEFAULT_READY_TIMEOUT: Duration = Duration::from_secs(5);

/// How often to try connecting while a started host comes up.
const POLL_INTERVAL: Duration = Duration::from_millis(25);

/// How long to keep trying after the started host exited (another client
/// may have started a host at the same moment, and that one may win).
const GRACE_AFTER_EXIT: Duration = Duration::from_secs(1);

/// The command that runs the host in the foreground.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AutostartCommand {
    /// The program to run.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<OsString>,
    /// Environment variables to set on top of the inherited environment.
    pub env: Vec<(OsString, OsString)>,
    /// Where the host's standard error goes (appended; the directory is
    /// created with mode 0700). Discarded when `None`.
    pub log_file: Option<PathBuf>,
    /// How long the started host has to answer.
    pub ready_timeout: Duration,
    /// A line written to standard error once a host this command started
    /// answers, with `{pid}` replaced by the host's pid: a command line
    /// tells its user that a background host now runs. Nothing is written
    /// when `None` (the default: a library stays quiet), nor when another
    /// client's host answered first.
    pub announce: Option<String>,
}

impl AutostartCommand {
    /// Runs `program` with no arguments, logging nowhere.
    pub fn new(program: impl Into<PathBuf>) -> Self {
        AutostartCommand {
            program: program.into(),
            args: Vec::new(),
            env: Vec::new(),
            log_file: None,
            ready_timeout: DEFAULT_READY_TIMEOUT,
            announce: None,
        }
    }

    /// Writes `line` to standard error once the host this starts answers
    /// (see [`AutostartCommand::announce`]).
    #[must_use]
    pub fn announce(mut self, line: impl Into<String>) -> Self {
        self.announce = Some(line.into());
        self
    }

    /// Adds arguments.
    #[must_use]
    pub fn args<I, A>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = A>,
        A: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    /// Sets an environment variable.
    #[must_use]
    pub fn env(mut self, key: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((key.into(), value.into()));
        self
    }

    /// Sends the host's standard error to this file.
    #[must_use]
    pub fn log_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.log_file = Some(path.into());
        self
    }

    /// Spawns the host detached: in its own process group, with standard
    /// input and output on `/dev/null`. The child is not waited for here;
    /// the runtime reaps it if it exits while this process lives.
    fn spawn(&self) -> Result<tokio::process::Child, ClientError> {
        let failed = |message: String| ClientError::Autostart { program: self.program.clone(), message };
        let stderr = match &self.log_file {
            Some(log_file) => {
                if let Some(dir) = log_file.parent().filter(|dir| !dir.as_os_str().is_empty()) {
                    DirBuilder::new()
                        .recursive(true)
                        .mode(0o700)
                        .create(dir)
                        .map_err(|error| failed(format!("cannot create {}: {error}", dir.display())))?;
                }
                let file = OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(log_file)
                    .map_err(|error| failed(format!("cannot open {}: {error}", log_file.display())))?;
                Stdio::from(file)
            }
            None => Stdio::null(),
        };
        let mut command = tokio::process::Command::new(&self.program);
        command
            .args(&self.args)
            .envs(self.env.iter().map(|(key, value)| (key, value)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(stderr)
            .kill_on_drop(false);
        // A session of its own, without a controlling terminal, as a
        // daemon runs: the terminal's job control (Ctrl-C, the hang-up of
        // a closed terminal) does not reach the host, and a terminal handed
        // to it (`attach_terminal`) is never its own controlling terminal,
        // which it could not read from a background process group (the
        // kernel would stop the whole host with SIGTTIN).
        // It also gets back the open-file limit this process had before it
        // raised its own (`open_file_limit`).
        // Safety: `setsid`, `getrlimit` and `setrlimit` are
        // async-signal-safe, allocate nothing and touch no memory of the
        // parent.
        unsafe {
            command.pre_exec(|| {
                rustix::process::setsid().map_err(std::io::Error::from)?;
                crate::open_file_limit::restore_in_child()
            });
        }
        let child = command.spawn().map_err(|error| failed(error.to_string()))?;
        tracing::info!(program = %self.program.display(), pid = child.id(), "started the host");
        Ok(child)
    }
}

/// Connects to the host at `path`, starting it with `command` when nothing
/// answers there (no socket file, or a stale one).
///
/// # Errors
/// As [`Client::connect`]; [`ClientError::Autostart`] when the host cannot
/// be spawned or exits before it answers; [`ClientError::Timeout`] when it
/// does not answer within `command.ready_timeout`.
pub async fn connect_or_start(
    path: &Path,
    options: &ClientOptions,
    command: &AutostartCommand,
) -> Result<Client, ClientError> {
    connect_or_start_with(command, || Client::connect(path, options)).await
}

/// Like [`connect_or_start`] for any kind of connection: `connect` makes
/// one attempt, and an unreachable host ([`ClientError::is_unreachable`])
/// makes this start `command` and try again until the host answers.
///
/// # Errors
/// As [`connect_or_start`].
pub async fn connect_or_start_with<T, F, Fut>(command: &AutostartCommand, mut connect: F) -> Result<T, ClientError>
where
    F: FnMut() -> Fut,
    Fut: Future<Output = Result<T, ClientError>>,
{
    match connect().await {
        Err(error) if error.is_unreachable() => {
            tracing::info!(%error, "no host answers; starting one");
        }
        other => return other,
    }
    let mut child = command.spawn()?;
    let started = Instant::now();
    let mut deadline = started + command.ready_timeout;
    let mut exit_status = None;
    loop {
        tokio::time::sleep(POLL_INTERVAL).await;
        let last_error = match connect().await {
            Err(error) if error.is_unreachable() => error,
            Ok(connected) => {
                announce_started(command, &mut child);
                return Ok(connected);
            }
            other => return other,
        };
        if exit_status.is_none() {
            if let Ok(Some(status)) = child.try_wait() {
                tracing::warn!(%status, "the started host exited before it answered");
                exit_status = Some(status);
                deadline = deadline.min(Instant::now() + GRACE_AFTER_EXIT);
            }
        }
        if Instant::now() >= deadline {
            let log_hint = match &command.log_file {
                Some(log_file) => format!("; see {}", log_file.display()),
                None => String::new(),
            };
            return Err(match exit_status {
                Some(status) => ClientError::Autostart {
                    program: command.program.clone(),
                    message: match command.log_file.as_deref().and_then(last_error_in_log) {
                        Some(reason) => format!("it exited ({status}) before it answered: {reason}{log_hint}"),
                        None => format!("it exited ({status}) before it answered{log_hint}"),
                    },
                },
                None => {
                    tracing::warn!(error = %last_error, "the started host did not answer in time{log_hint}");
                    ClientError::Timeout { what: "the started host to answer", after: started.elapsed() }
                }
            });
        }
    }
}

/// Writes the command's announcement, unless the host it started has
/// exited (another client's host answered).
fn announce_started(command: &AutostartCommand, child: &mut tokio::process::Child) {
    let (Some(line), Some(pid)) = (&command.announce, child.id()) else { return };
    if matches!(child.try_wait(), Ok(None)) {
        eprintln!("{}", line.replace("{pid}", &pid.to_string()));
    }
}

/// The last `error: ...` line the host wrote to its log (the reason it
/// gave up), looked for in the log's last 16 KiB.
fn last_error_in_log(log: &Path) -> Option<String> {
    use std::io::{Read, Seek, SeekFrom};
    let mut file = std::fs::File::open(log).ok()?;
    let length = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(length.saturating_sub(16 * 1024))).ok()?;
    let mut tail = Vec::new();
    file.read_to_end(&mut tail).ok()?;
    let tail = String::from_utf8_lossy(&tail);
    tail.lines().rev().find_map(|line| line.strip_prefix("error: ")).map(str::to_owned)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::Cell;

    #[test]
    fn the_reason_a_started_host_gave_up_is_read_from_its_log() {
        let dir = tempfile_dir();
        let log = dir.join("host.log");
        std::fs::write(&log, "2026 INFO starting\nerror: socket directory: /run/x has mode 755; it must be 0700\n")
            .unwrap();
        assert_eq!(last_error_in_log(&log).as_deref(), Some("socket directory: /run/x has mode 755; it must be 0700"));
        std::fs::write(&log, "nothing went wrong\n").unwrap();
        assert_eq!(last_error_in_log(&log), None);
        assert_eq!(last_error_in_log(&dir.join("missing.log")), None);
        let _ = std::fs::remove_dir_all(dir);
    }

    fn tempfile_dir() -> PathBuf {
        let dir = std::env::temp_dir().join(format!("panehost-autostart-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }
    use std::io;

    fn unreachable() -> ClientError {
        ClientError::Connect { path: PathBuf::from("/nowhere"), source: io::Error::from(io::ErrorKind::NotFound) }
    }

    #[tokio::test]
    async fn an_answering_host_is_not_started_again() {
        let command = AutostartCommand::new("/nonexistent/panehost");
        let result = connect_or_start_with(&command, || async { Ok::<_, ClientError>(7) }).await;
        assert_eq!(result.unwrap(), 7);
    }

    #[tokio::test]
    async fn other_connect_errors_do_not_start_a_host() {
        let command = AutostartCommand::new("/nonexistent/panehost");
        let result: Result<(), _> = connect_or_start_with(&command, || async {
            Err(ClientError::Refused { code: "PROTOCOL_MISMATCH".into(), message: String::new(), protocol: 2 })
        })
        .await;
        assert!(matches!(result, Err(ClientError::Refused { .. })));
    }

    #[tokio::test]
    async fn a_missing_program_is_reported() {
        let command = AutostartCommand::new("/nonexistent/panehost");
        let result: Result<(), _> = connect_or_start_with(&command, || async { Err(unreachable()) }).await;
        assert!(matches!(result, Err(ClientError::Autostart { .. })), "{result:?}");
    }

    #[tokio::test]
    async fn polls_until_the_started_host_answers() {
        // `sleep` stands in for a host that takes a few polls to listen.
        let command = AutostartCommand::new("sleep").args(["1"]);
        let calls = Cell::new(0);
        let result = connect_or_start_with(&command, || {
            calls.set(calls.get() + 1);
            let n = calls.get();
            async move {
                if n < 4 {
                    Err(unreachable())
                } else {
                    Ok(n)
                }
            }
        })
        .await;
        assert_eq!(result.unwrap(), 4);
    }

    #[tokio::test]
    async fn a_host_that_exits_without_answering_is_reported() {
        let dir = std::env::temp_dir().join(format!("panehost-client-autostart-{}", std::process::id()));
        let log_file = dir.join("state").join("host.log");
        let command = AutostartCommand::new("sh").args(["-c", "echo broken >&2; exit 3"]).log_file(&log_file);
        let result: Result<(), _> = connect_or_start_with(&command, || async { Err(unreachable()) }).await;
        match result {
            Err(ClientError::Autostart { message, .. }) => assert!(message.contains("exit status: 3"), "{message}"),
            other => panic!("expected an autostart error, got {other:?}"),
        }
        assert_eq!(std::fs::read_to_string(&log_file).unwrap(), "broken\n");
        std::fs::remove_dir_all(dir).unwrap();
    }
}
