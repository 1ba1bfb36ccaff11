//! Running a CLI's version or help probe: a timeout, a scratch HOME, a
//! scrubbed environment, optionally the canary's sandbox (none of the
//! user's files, and no network unless asked), and every process it started
//! ended afterwards.

use crate::sandbox::Sandbox;
use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// How long a version probe may take. Some CLIs are slow to print their
/// version offline (tens of seconds).
pub const PROBE_TIMEOUT: Duration = Duration::from_secs(60);

/// Most output a probe keeps.
const MAX_PROBE_OUTPUT: u64 = 64 * 1024;

/// What a probe printed, or why it printed nothing usable.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ProbeOutcome {
    /// It exited 0; its standard output (or, if empty, its standard error),
    /// trimmed.
    Printed(String),
    /// It failed to run, exited non-zero, or timed out.
    Failed(String),
}

/// One probe: a program, its arguments, and what may vary around them.
#[derive(Debug, Clone, Copy)]
pub struct ProbeRequest<'a> {
    /// The executable.
    pub program: &'a Path,
    /// Its arguments.
    pub args: &'a [String],
    /// `PATH` for it; `/usr/bin:/bin` when `None`.
    pub search_path: Option<&'a str>,
    /// Variables set beyond the scrubbed base.
    pub extra_env: &'a [(String, String)],
    /// How long it may run.
    pub timeout: Duration,
    /// `None`: it runs as any child of the host does (detection probes an
    /// installed CLI so). `Some`: in this sandbox (the canary's candidates),
    /// and when the sandbox cannot be made, not at all
    /// ([`ProbeError::SandboxRefused`]).
    pub sandbox: Option<&'a Sandbox>,
}

/// How a probe's process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeExit {
    /// It exited with this code.
    Code(i32),
    /// A signal ended it.
    Signal(i32),
    /// It did not end within the timeout and was killed.
    TimedOut,
}

/// What a probe printed, and how it ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProbeRun {
    /// How it ended.
    pub exit: ProbeExit,
    /// Its standard output (at most 64 KiB).
    pub stdout: String,
    /// Its standard error (at most 64 KiB).
    pub stderr: String,
}

impl ProbeRun {
    /// True when it exited 0.
    pub fn succeeded(&self) -> bool {
        self.exit == ProbeExit::Code(0)
    }

    /// The standard output, or the standard error when the output is
    /// empty, trimmed.
    pub fn text(&self) -> &str {
        if self.stdout.trim().is_empty() {
            self.stderr.trim()
        } else {
            self.stdout.trim()
        }
    }
}

/// Why a probe did not run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProbeError {
    /// Its scratch home could not be made.
    #[error("cannot make a scratch home: {0}")]
    ScratchHome(String),
    /// The sandbox could not be made (bubblewrap missing, or the kernel
    /// refused a namespace or a mount): the program did not run.
    #[error("the sandbox was refused: {0}")]
    SandboxRefused(String),
    /// The program could not be started.
    #[error("cannot run {program}: {reason}")]
    Spawn {
        /// The program.
        program: String,
        /// The system's words.
        reason: String,
    },
    /// Waiting for it failed.
    #[error("waiting for it failed: {0}")]
    Wait(String),
}

/// Runs `program args` with only `PATH` (from `search_path`), a fresh
/// scratch `HOME`, `LANG=C.UTF-8`, `TERM=dumb` and `extra_env`, with no
/// input, in its own process group, which is killed when the probe ends or
/// times out.
pub fn run_probe(
    program: &Path,
    args: &[String],
    search_path: Option<&str>,
    extra_env: &[(String, String)],
    timeout: Duration,
) -> ProbeOutcome {
    let request = ProbeRequest { program, args, search_path, extra_env, timeout, sandbox: None };
    match run_probe_capturing(&request) {
        Err(err) => ProbeOutcome::Failed(err.to_string()),
        Ok(run) if run.exit == ProbeExit::TimedOut => {
            ProbeOutcome::Failed(format!("no answer within {}s", timeout.as_secs()))
        }
        Ok(run) if run.succeeded() => ProbeOutcome::Printed(run.text().to_owned()),
        Ok(run) => ProbeOutcome::Failed(format!(
            "{}: {}",
            describe_exit(run.exit),
            run.text().chars().take(200).collect::<String>()
        )),
    }
}

/// Runs a probe as [`run_probe`] does, in a sandbox when one is asked for,
/// and returns both streams and how it ended, whatever the exit status.
///
/// # Errors
/// Fails when the probe could not run at all, and with
/// [`ProbeError::SandboxRefused`] when a sandbox was asked for and could not
/// be made.
pub fn run_probe_capturing(request: &ProbeRequest<'_>) -> Result<ProbeRun, ProbeError> {
    let scratch = scratch_home().map_err(|err| ProbeError::ScratchHome(err.to_string()))?;
    let run = run_in(request, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    run
}

/// How an exit reads in a report: `exit status 2`, `signal 9`.
pub fn describe_exit(exit: ProbeExit) -> String {
    match exit {
        ProbeExit::Code(code) => format!("exit status: {code}"),
        ProbeExit::Signal(signal) => format!("signal: {signal}"),
        ProbeExit::TimedOut => "timed out".to_owned(),
    }
}

fn run_in(request: &ProbeRequest<'_>, home: &Path) -> Result<ProbeRun, ProbeError> {
    let Some(sandbox) = request.sandbox else {
        let mut command = Command::new(request.program);
        command.args(request.args);
        return run_captured(scrubbed(command, request, home), request.timeout);
    };
    let prepared = sandbox
        .prepare(request.program, request.args, request.search_path, home)
        .map_err(ProbeError::SandboxRefused)?;
    let run = match run_captured(scrubbed(prepared.command, request, home), request.timeout) {
        Err(ProbeError::Spawn { reason, .. }) => {
            return Err(ProbeError::SandboxRefused(format!("cannot start bwrap: {reason}")))
        }
        other => other?,
    };
    if run.exit == ProbeExit::TimedOut {
        return Ok(run);
    }
    match prepared.status.exit_code() {
        Some(code) => Ok(ProbeRun { exit: sandboxed_exit(code), ..run }),
        None => Err(not_run(request.program, &run)),
    }
}

/// `command` with no variables but `PATH`, a scratch `HOME` (also its
/// working directory), `LANG`, `TERM` and the request's own.
fn scrubbed(mut command: Command, request: &ProbeRequest<'_>, home: &Path) -> Command {
    command
        .env_clear()
        .env("PATH", request.search_path.unwrap_or("/usr/bin:/bin"))
        .env("HOME", home)
        .env("LANG", "C.UTF-8")
        .env("TERM", "dumb")
        .envs(request.extra_env.iter().map(|(name, value)| (name, value)))
        .current_dir(home);
    command
}

/// How a sandboxed program ended: bwrap reports a program killed by signal
/// N as 128+N, as a shell does, and so the canary reads it.
fn sandboxed_exit(code: i32) -> ProbeExit {
    match code {
        129..=192 => ProbeExit::Signal(code - 128),
        code => ProbeExit::Code(code),
    }
}

/// Why a sandboxed program did not run, from bwrap's words: it could not
/// be executed there, or the sandbox could not be made.
fn not_run(program: &Path, run: &ProbeRun) -> ProbeError {
    let words: Vec<&str> = run.stderr.lines().filter_map(|line| line.strip_prefix("bwrap: ")).map(str::trim).collect();
    match words.iter().find_map(|line| line.strip_prefix("execvp ")) {
        Some(reason) => ProbeError::Spawn { program: program.display().to_string(), reason: reason.to_owned() },
        None if words.is_empty() => {
            ProbeError::SandboxRefused(format!("bwrap ended ({}) before the program ran", describe_exit(run.exit)))
        }
        None => ProbeError::SandboxRefused(format!("bwrap: {}", words.join(" / "))),
    }
}

/// Runs `command` (its program, arguments, environment and directory
/// already set) with no input, in a process group of its own, keeping up
/// to 64 KiB of each output stream, and kills the whole group when it
/// exits or `timeout` passes, whichever comes first: nothing it started
/// outlives it. Used by the probes here and by the completion receipt.
///
/// # Errors
/// Fails when the program cannot be started or waited for.
pub fn run_captured(mut command: Command, timeout: Duration) -> Result<ProbeRun, ProbeError> {
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let program = command.get_program().to_string_lossy().into_owned();
    let mut child = command.spawn().map_err(|err| ProbeError::Spawn { program, reason: err.to_string() })?;
    let group = child.id();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        // Standard error drains on a thread of its own, so that a flood on
        // one stream cannot stall the other.
        let errors = std::thread::spawn(move || read_bounded(stderr));
        let out = read_bounded(stdout);
        let err = errors.join().unwrap_or_default();
        let status = child.wait();
        let _ = done.send((status, out, err));
    });
    let result = finished.recv_timeout(timeout);
    // Whatever happened, nothing the command started may outlive it.
    if let Some(pid) = rustix::process::Pid::from_raw(group as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    match result {
        Err(_) => Ok(ProbeRun { exit: ProbeExit::TimedOut, stdout: String::new(), stderr: String::new() }),
        Ok((Err(err), _, _)) => Err(ProbeError::Wait(err.to_string())),
        Ok((Ok(status), stdout, stderr)) => {
            let exit = match (status.code(), std::os::unix::process::ExitStatusExt::signal(&status)) {
                (Some(code), _) => ProbeExit::Code(code),
                (None, Some(signal)) => ProbeExit::Signal(signal),
                (None, None) => ProbeExit::Code(-1),
            };
            Ok(ProbeRun { exit, stdout, stderr })
        }
    }
}

/// Reads a pipe to its end, keeping the first [`MAX_PROBE_OUTPUT`] bytes
/// and discarding the rest (so the writer never blocks on a full pipe).
fn read_bounded(pipe: Option<impl Read>) -> String {
    let Some(mut pipe) = pipe else { return String::new() };
    let mut kept = Vec::new();
    let _ = (&mut pipe).take(MAX_PROBE_OUTPUT).read_to_end(&mut kept);
    let _ = std::io::copy(&mut pipe, &mut std::io::sink());
    String::from_utf8_lossy(&kept).into_owned()
}

fn scratch_home() -> std::io::Result<std::path::PathBuf> {
    let base = std::env::temp_dir();
    for attempt in 0..100u32 {
        let nanos =
            std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().subsec_nanos();
        let dir = base.join(format!("panehost-probe-{}-{nanos}-{attempt}", std::process::id()));
        match std::fs::DirBuilder::new().mode_private().create(&dir) {
            Ok(()) => return Ok(dir),
            Err(err) if err.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(err),
        }
    }
    Err(std::io::Error::other("no free scratch directory name"))
}

trait PrivateDir {
    fn mode_private(&mut self) -> &mut Self;
}

impl PrivateDir for std::fs::DirBuilder {
    fn mode_private(&mut self) -> &mut Self {
        std::os::unix::fs::DirBuilderExt::mode(self, 0o700)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::SandboxNetwork;

    #[test]
    fn a_probe_reads_output_in_a_scrubbed_environment() {
        std::env::set_var("PANEHOST_PROBE_TEST_SECRET", "leak");
        let args =
            vec!["-c".to_owned(), "echo 1.2.3; echo HOME=$HOME; echo SECRET=$PANEHOST_PROBE_TEST_SECRET".to_owned()];
        match run_probe(Path::new("/bin/sh"), &args, None, &[], Duration::from_secs(10)) {
            ProbeOutcome::Printed(text) => {
                assert!(text.starts_with("1.2.3"));
                assert!(text.contains("HOME=/") && text.contains("panehost-probe-"), "{text}");
                assert!(text.contains("SECRET=\n") || text.ends_with("SECRET="), "{text}");
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_probe_that_hangs_is_ended() {
        let args = vec!["-c".to_owned(), "sleep 30 & wait".to_owned()];
        let outcome = run_probe(Path::new("/bin/sh"), &args, None, &[], Duration::from_millis(300));
        assert!(matches!(outcome, ProbeOutcome::Failed(ref reason) if reason.contains("no answer")), "{outcome:?}");
    }

    fn shell(script: &str, sandbox: Option<&Sandbox>) -> Result<ProbeRun, ProbeError> {
        let args = vec!["-c".to_owned(), script.to_owned()];
        let request = ProbeRequest {
            program: Path::new("/bin/sh"),
            args: &args,
            search_path: None,
            extra_env: &[],
            timeout: Duration::from_secs(10),
            sandbox,
        };
        run_probe_capturing(&request)
    }

    fn offline(hidden: Vec<std::path::PathBuf>) -> Sandbox {
        Sandbox { network: SandboxNetwork::Private, hidden, read_only: Vec::new(), writable: Vec::new() }
    }

    #[test]
    fn a_sandboxed_probe_sees_no_network_no_hidden_file_and_its_own_ids() {
        let dir = std::env::temp_dir().join(format!("panehost-probe-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("secret"), "s3cret").unwrap();
        let script = format!(
            "id -u; cat /proc/net/dev; cat {dir}/secret; touch {dir}/planted /usr/planted /planted $HOME/ok && echo wrote",
            dir = dir.display()
        );
        match shell(&script, Some(&offline(vec![dir.clone()]))) {
            Ok(run) => {
                let mut lines = run.stdout.lines();
                assert_eq!(lines.next(), Some(rustix::process::getuid().as_raw().to_string().as_str()));
                let interfaces: Vec<&str> =
                    lines.skip(2).filter_map(|line| line.split_once(':').map(|(name, _)| name.trim())).collect();
                assert_eq!(interfaces, ["lo"], "{run:?}");
                assert!(!run.stdout.contains("s3cret") && !run.stdout.contains("wrote"), "{run:?}");
                assert!(run.stderr.contains("Read-only file system"), "{run:?}");
                assert!(!dir.join("planted").exists());
            }
            // Where the sandbox cannot be made, the probe never runs without it.
            Err(ProbeError::SandboxRefused(reason)) => eprintln!("skipped: {reason}"),
            Err(other) => panic!("{other:?}"),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_sandboxed_probe_keeps_its_exit_code_and_its_signal() {
        match shell("echo out; kill -SEGV $$", Some(&offline(Vec::new()))) {
            Ok(run) => assert_eq!((run.exit, run.stdout.as_str()), (ProbeExit::Signal(11), "out\n")),
            Err(ProbeError::SandboxRefused(reason)) => eprintln!("skipped: {reason}"),
            Err(other) => panic!("{other:?}"),
        }
        if let Ok(run) = shell("exit 3", Some(&offline(Vec::new()))) {
            assert_eq!(run.exit, ProbeExit::Code(3));
        }
    }

    #[test]
    fn a_sandboxed_probe_that_hangs_is_ended_with_all_it_started() {
        // A duration no other process is sleeping for, to find it by.
        let duration = format!("{}.{}", 40 + std::process::id() % 50, std::process::id());
        let started = std::time::Instant::now();
        let args = vec!["-c".to_owned(), format!("setsid sleep {duration} & sleep {duration}")];
        let sandbox = offline(Vec::new());
        let request = ProbeRequest {
            program: Path::new("/bin/sh"),
            args: &args,
            search_path: None,
            extra_env: &[],
            timeout: Duration::from_millis(500),
            sandbox: Some(&sandbox),
        };
        match run_probe_capturing(&request) {
            Ok(run) => assert_eq!(run.exit, ProbeExit::TimedOut, "{run:?}"),
            Err(ProbeError::SandboxRefused(reason)) => return eprintln!("skipped: {reason}"),
            Err(other) => panic!("{other:?}"),
        }
        assert!(started.elapsed() < Duration::from_secs(10));
        let sleeping = || {
            std::fs::read_dir("/proc")
                .unwrap()
                .flatten()
                .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
                .filter(|cmdline| String::from_utf8_lossy(cmdline).contains(&duration))
                .count()
        };
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while sleeping() > 0 {
            assert!(std::time::Instant::now() < deadline, "a process of the probe outlived it");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    #[test]
    fn a_sandbox_that_cannot_be_made_runs_nothing() {
        // Showing a directory that holds a hidden one would show it.
        let sandbox = Sandbox { read_only: vec!["/home".into()], ..offline(vec!["/home/someone".into()]) };
        match shell("echo ran", Some(&sandbox)) {
            Err(ProbeError::SandboxRefused(reason)) => assert!(reason.contains("cannot be shown"), "{reason}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_probe_keeps_both_streams_and_the_exit_code() {
        let run = shell("echo out; echo err >&2; exit 3", None).unwrap();
        assert_eq!((run.exit, run.stdout.as_str(), run.stderr.as_str()), (ProbeExit::Code(3), "out\n", "err\n"));
    }
}
