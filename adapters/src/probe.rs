//! Running a CLI's version probe: a timeout, a scratch HOME, a scrubbed
//! environment, and every process it started ended afterwards.

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
    let scratch = match scratch_home() {
        Ok(dir) => dir,
        Err(err) => return ProbeOutcome::Failed(format!("cannot make a scratch home: {err}")),
    };
    let outcome = run_in(program, args, search_path, extra_env, timeout, &scratch);
    let _ = std::fs::remove_dir_all(&scratch);
    outcome
}

fn run_in(
    program: &Path,
    args: &[String],
    search_path: Option<&str>,
    extra_env: &[(String, String)],
    timeout: Duration,
    home: &Path,
) -> ProbeOutcome {
    let mut command = Command::new(program);
    command
        .args(args)
        .env_clear()
        .env("PATH", search_path.unwrap_or("/usr/bin:/bin"))
        .env("HOME", home)
        .env("LANG", "C.UTF-8")
        .env("TERM", "dumb")
        .envs(extra_env.iter().map(|(name, value)| (name, value)))
        .current_dir(home);
    match run_captured(command, timeout) {
        Err(reason) => ProbeOutcome::Failed(reason),
        Ok(Captured { status, stdout, stderr }) => {
            let text = if stdout.trim().is_empty() { stderr.trim() } else { stdout.trim() };
            if status.success() {
                ProbeOutcome::Printed(text.to_owned())
            } else {
                ProbeOutcome::Failed(format!("{status}: {}", text.chars().take(200).collect::<String>()))
            }
        }
    }
}

/// What a finished command printed.
#[derive(Debug)]
pub(crate) struct Captured {
    pub(crate) status: std::process::ExitStatus,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

/// Runs `command` (its environment, directory and arguments already set)
/// with no input, in a process group of its own, keeping up to 64 KiB of
/// each output, and kills the whole group when it exits or `timeout`
/// passes, whichever comes first: nothing it started outlives it.
pub(crate) fn run_captured(mut command: Command, timeout: Duration) -> Result<Captured, String> {
    command.stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let program = command.get_program().to_string_lossy().into_owned();
    let mut child = command.spawn().map_err(|err| format!("cannot run {program}: {err}"))?;
    let group = child.id();
    let stdout = child.stdout.take();
    let stderr = child.stderr.take();
    let (done, finished) = mpsc::channel();
    std::thread::spawn(move || {
        let read_all = |pipe: Option<Box<dyn Read + Send>>| {
            let mut text = String::new();
            if let Some(pipe) = pipe {
                let _ = pipe.take(MAX_PROBE_OUTPUT).read_to_string(&mut text);
            }
            text
        };
        let err_reader =
            std::thread::spawn(move || read_all(stderr.map(|pipe| Box::new(pipe) as Box<dyn Read + Send>)));
        let out = read_all(stdout.map(|pipe| Box::new(pipe) as Box<dyn Read + Send>));
        let err = err_reader.join().unwrap_or_default();
        let status = child.wait();
        let _ = done.send((status, out, err));
    });
    let result = finished.recv_timeout(timeout);
    // Whatever happened, nothing the command started may outlive it.
    if let Some(pid) = rustix::process::Pid::from_raw(group as i32) {
        let _ = rustix::process::kill_process_group(pid, rustix::process::Signal::KILL);
    }
    match result {
        Err(_) => Err(format!("no answer within {}s", timeout.as_secs())),
        Ok((Err(err), _, _)) => Err(format!("waiting for it failed: {err}")),
        Ok((Ok(status), stdout, stderr)) => Ok(Captured { status, stdout, stderr }),
    }
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
}
