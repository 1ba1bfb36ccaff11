//! Running OpenSSH's client: the command lines, the other side's answer,
//! and what a failure means.

use super::target::{check_socket_path, RemoteTarget, Shown};
use crate::error::ClientError;
use std::collections::VecDeque;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};

/// The longest line of the other side's output that is read.
const MAX_LINE: usize = 4096;

/// How many lines of the other side's output are looked through for its
/// answer (a login script may print a greeting first).
const MAX_LINES: usize = 64;

/// How much of ssh's standard error is kept for an error message.
const STDERR_TAIL_LINES: usize = 12;

/// What the other machine's `panehost up` says: its user's host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteHost {
    /// The host's socket on the other machine.
    pub socket: String,
    /// The user the host runs as there (its uid).
    pub uid: u32,
    /// The host's process id there.
    pub pid: u32,
    /// The host's name and version, as its handshake says.
    pub host: String,
}

impl RemoteHost {
    /// Reads the first line of `output` that is an answer of `panehost up`
    /// (one JSON object with `socket`, `uid`, `pid` and `host`), looking at
    /// most at [`MAX_LINES`] lines.
    pub(crate) fn find_in(output: &str) -> Option<RemoteHost> {
        output.lines().take(MAX_LINES).find_map(RemoteHost::parse_line)
    }

    /// One line of `panehost up`, or `None` when it is something else.
    pub(crate) fn parse_line(line: &str) -> Option<RemoteHost> {
        let line = line.trim();
        if !line.starts_with('{') || line.len() > MAX_LINE {
            return None;
        }
        let value: serde_json::Value = serde_json::from_str(line).ok()?;
        let socket = value.get("socket")?.as_str()?.to_owned();
        let uid = u32::try_from(value.get("uid")?.as_u64()?).ok()?;
        let pid = u32::try_from(value.get("pid")?.as_u64()?).ok()?;
        let host: String = value.get("host")?.as_str()?.chars().filter(|c| !c.is_control()).take(200).collect();
        Some(RemoteHost { socket, uid, pid, host })
    }

    /// The line `panehost up` prints for this host.
    pub fn to_line(&self) -> String {
        serde_json::json!({ "socket": self.socket, "uid": self.uid, "pid": self.pid, "host": self.host }).to_string()
    }
}

/// The last lines ssh wrote to standard error, for the error message when
/// it fails.
#[derive(Debug, Default)]
pub(crate) struct StderrTail {
    lines: Mutex<VecDeque<String>>,
}

impl StderrTail {
    /// Reads `stderr` to its end on a task of its own, keeping the last
    /// lines (each shortened) and logging every line.
    pub(crate) fn collect(stderr: impl AsyncRead + Unpin + Send + 'static) -> Arc<StderrTail> {
        let tail = Arc::new(StderrTail::default());
        let keep = Arc::clone(&tail);
        tokio::spawn(async move {
            let mut reader = BufReader::new(stderr);
            let mut line = Vec::new();
            loop {
                line.clear();
                match (&mut reader).take(MAX_LINE as u64).read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => keep.push(&String::from_utf8_lossy(&line)),
                }
            }
        });
        tail
    }

    fn push(&self, line: &str) {
        let line: String = line.trim_end().chars().filter(|c| !c.is_control()).take(300).collect();
        if line.is_empty() {
            return;
        }
        tracing::debug!(line = %line, "ssh");
        let mut lines = self.lines.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if lines.len() == STDERR_TAIL_LINES {
            lines.pop_front();
        }
        lines.push_back(line);
    }

    /// What ssh said, one line per line.
    pub(crate) fn text(&self) -> String {
        let lines = self.lines.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        lines.iter().cloned().collect::<Vec<_>>().join("\n")
    }
}

/// `ssh` with the options every run of it gets, ready for its own.
///
/// - `BatchMode=yes`: never a prompt (a password, an unknown host key): a
///   background process has no one to answer it, and `attach` owns the
///   terminal. A key, an agent or a known host key is what signs in.
/// - `ControlPath=none`: this process owns its connection, so ending it
///   ends the link (a shared master would outlive it).
/// - `ForwardAgent=no`, `ForwardX11=no`: the other side gets nothing of
///   this machine but the forwarded socket.
/// - `ServerAliveInterval=10`, `ServerAliveCountMax=3`: a link that went
///   silent (a cable, a suspended laptop) ends within about 30 s, and the
///   client reconnects, instead of waiting for TCP to give up.
pub(crate) fn base_command(target: &RemoteTarget) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(target.ssh_program_path());
    if let Some(config) = target.ssh_config_file() {
        command.arg("-F").arg(config);
    }
    let timeout = target.ready_timeout_value().as_secs().clamp(1, 3600);
    for option in [
        "BatchMode=yes".to_owned(),
        "ControlMaster=no".to_owned(),
        "ControlPath=none".to_owned(),
        "ForwardAgent=no".to_owned(),
        "ForwardX11=no".to_owned(),
        "RequestTTY=no".to_owned(),
        "ServerAliveInterval=10".to_owned(),
        "ServerAliveCountMax=3".to_owned(),
        format!("ConnectTimeout={timeout}"),
    ] {
        command.arg("-o").arg(option);
    }
    command.kill_on_drop(true);
    command
}

/// The command line the other machine's shell runs: its `panehost` with
/// `args`. Every word is checked to need no quoting in any shell.
pub(crate) fn remote_command(target: &RemoteTarget, args: &[&str]) -> String {
    let mut words = vec![target.remote_program_name().to_owned()];
    if let Some(socket) = target.remote_socket_path() {
        words.push("--socket".to_owned());
        words.push(socket.to_owned());
    }
    words.extend(args.iter().map(|arg| {
        debug_assert!(
            arg.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/')),
            "{arg:?} would need quoting"
        );
        (*arg).to_owned()
    }));
    words.join(" ")
}

/// What ssh's failure to run means, for people: OpenSSH's own exit status
/// 255 (it could not connect or sign in), the remote shell's 127 (no such
/// program) and 126 (not executable), or the remote program's own.
pub(crate) fn failure(target: &RemoteTarget, status: Option<ExitStatus>, stderr: &str, during: &str) -> ClientError {
    let destination = target.destination().to_owned();
    let program = target.remote_program_name();
    let said =
        if stderr.trim().is_empty() { String::new() } else { format!(": {}", stderr.trim().replace('\n', "; ")) };
    let (message, transient) = match status.and_then(|status| status.code()) {
        Some(255)
            if stderr.contains("Host key verification failed") || stderr.contains("REMOTE HOST IDENTIFICATION") =>
        {
            (
                format!(
                    "ssh refused the machine's host key{said} (it is not in known_hosts, or it changed: check it, \
                 then connect once with `ssh {destination}` to accept it; prompts are off here)"
                ),
                false,
            )
        }
        Some(255) if stderr.contains("Permission denied") => (
            format!("ssh could not sign in{said} (only keys and agents work here: no password prompt is shown)"),
            false,
        ),
        Some(255) => (format!("ssh failed {during}{said}"), true),
        Some(127) => (
            format!(
                "`{program}` was not found on the other machine{said} (install panehost there, or name it with \
                 --remote-panehost, e.g. ~/.cargo/bin/panehost: a non-interactive ssh session's PATH is short)"
            ),
            false,
        ),
        Some(126) => (format!("`{program}` cannot be run on the other machine{said}"), false),
        Some(2) if stderr.contains("unrecognized subcommand") => (
            format!(
                "the panehost on the other machine has no `up` command{said}: it is older than this one; update it"
            ),
            false,
        ),
        Some(code) => (format!("`{program} up` failed there (exit status {code}){said}"), false),
        None => (format!("ssh ended by a signal {during}{said}"), true),
    };
    ClientError::Remote { destination, message, transient }
}

/// `ssh` could not be started at all.
pub(crate) fn spawn_failure(target: &RemoteTarget, error: &std::io::Error) -> ClientError {
    let program = target.ssh_program_path().display().to_string();
    let message = if error.kind() == std::io::ErrorKind::NotFound {
        format!(
            "cannot run `{program}`: not found (install OpenSSH's client, e.g. the openssh-client package, or name \
             one with PANEHOST_SSH)"
        )
    } else {
        format!("cannot run `{program}`: {error}")
    };
    ClientError::Remote { destination: target.destination().to_owned(), message, transient: false }
}

/// Runs `panehost up` on the other machine once (starting its host there
/// when none answers) and reads where its host listens.
pub(crate) async fn up_once(target: &RemoteTarget) -> Result<RemoteHost, ClientError> {
    let mut command = base_command(target);
    command
        .arg("-n")
        .arg("--")
        .arg(target.destination())
        .arg(remote_command(target, &["up"]))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    tracing::debug!(destination = target.destination(), "asking the other machine for its host");
    let mut child = command.spawn().map_err(|error| spawn_failure(target, &error))?;
    let stdout = child.stdout.take().expect("piped");
    let tail = StderrTail::collect(child.stderr.take().expect("piped"));
    let run = async {
        let mut output = Vec::new();
        let _ = stdout.take((MAX_LINE * MAX_LINES) as u64).read_to_end(&mut output).await;
        let status = child.wait().await.ok();
        (output, status)
    };
    let limit = target.ready_timeout_value();
    let Ok((output, status)) = tokio::time::timeout(limit, run).await else {
        return Err(ClientError::Remote {
            destination: target.destination().to_owned(),
            message: format!("no answer within {} s (ssh signing in, or panehost up there)", limit.as_secs()),
            transient: true,
        });
    };
    // Let the task that reads standard error see its end.
    tokio::task::yield_now().await;
    let output = String::from_utf8_lossy(&output);
    match status {
        Some(status) if status.success() => {
            let host = RemoteHost::find_in(&output).ok_or_else(|| ClientError::Remote {
                destination: target.destination().to_owned(),
                message: format!("`{} up` printed no socket: {:?}", target.remote_program_name(), Shown(&output)),
                transient: false,
            })?;
            check_answer(target, &host)?;
            Ok(host)
        }
        status => Err(failure(target, status, &tail.text(), "while asking for the host")),
    }
}

/// The socket the other side names must be one ssh can forward.
pub(crate) fn check_answer(target: &RemoteTarget, host: &RemoteHost) -> Result<(), ClientError> {
    check_socket_path(&host.socket).map_err(|problem| ClientError::Remote {
        destination: target.destination().to_owned(),
        message: format!("the host's socket there, {:?}, {problem}", Shown(&host.socket)),
        transient: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::process::ExitStatusExt;

    fn exit(code: i32) -> Option<ExitStatus> {
        Some(ExitStatus::from_raw(code << 8))
    }

    fn message(error: ClientError) -> (String, bool) {
        match error {
            ClientError::Remote { message, transient, .. } => (message, transient),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn the_answer_of_up_is_found_after_a_greeting() {
        let output = "Welcome to build-3\n{not json\n{\"socket\":\"/run/user/1001/panehost/host.sock\",\"uid\":1001,\
                      \"pid\":4242,\"host\":\"panehost 0.1.0\"}\n";
        let host = RemoteHost::find_in(output).unwrap();
        assert_eq!(host.socket, "/run/user/1001/panehost/host.sock");
        assert_eq!((host.uid, host.pid), (1001, 4242));
        assert_eq!(RemoteHost::parse_line(&host.to_line()), Some(host));
        assert_eq!(RemoteHost::find_in("{\"socket\":1}\n"), None);
        assert_eq!(RemoteHost::find_in(""), None);
    }

    #[test]
    fn failures_say_what_to_do() {
        let target = RemoteTarget::new("ada@m").unwrap();
        let (text, transient) = message(failure(&target, exit(255), "Host key verification failed.", "x"));
        assert!(text.contains("host key") && text.contains("known_hosts"), "{text}");
        assert!(!transient);
        let (text, transient) = message(failure(&target, exit(255), "ada@m: Permission denied (publickey).", "x"));
        assert!(text.contains("could not sign in"), "{text}");
        assert!(!transient);
        let (text, transient) =
            message(failure(&target, exit(255), "connect to host m port 22: Connection refused", "x"));
        assert!(text.contains("Connection refused"), "{text}");
        assert!(transient);
        let (text, _) = message(failure(&target, exit(127), "sh: 1: panehost: not found", "x"));
        assert!(text.contains("`panehost` was not found") && text.contains("--remote-panehost"), "{text}");
        let (text, _) = message(failure(&target, exit(2), "error: unrecognized subcommand 'up'", "x"));
        assert!(text.contains("older"), "{text}");
        let (text, transient) = message(failure(&target, Some(ExitStatus::from_raw(9)), "", "x"));
        assert!(text.contains("signal") && transient, "{text}");
        let (text, _) = message(spawn_failure(&target, &std::io::Error::from(std::io::ErrorKind::NotFound)));
        assert!(text.contains("cannot run `ssh`: not found"), "{text}");
    }

    #[test]
    fn the_remote_command_is_plain_words() {
        let target = RemoteTarget::new("m").unwrap().remote_program("~/.cargo/bin/panehost").unwrap();
        assert_eq!(remote_command(&target, &["up", "--hold"]), "~/.cargo/bin/panehost up --hold");
        let target = target.remote_socket("/srv/panehost/host.sock").unwrap();
        assert_eq!(remote_command(&target, &["up"]), "~/.cargo/bin/panehost --socket /srv/panehost/host.sock up");
    }
}
