//! Running the `panehost` command as a subprocess against a [`TestHost`],
//! the way an operator or a script does.

use super::{bin_dir, panehost_bin, TestHost, WAIT};
use serde_json::Value;
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// Where a `panehost` command points: a socket, a state directory and a home.
pub struct Cli {
    pub socket: PathBuf,
    pub state_dir: PathBuf,
    pub home: PathBuf,
}

/// What a finished command left behind.
#[derive(Debug)]
pub struct Outcome {
    pub status: ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Outcome {
    pub fn code(&self) -> Option<i32> {
        self.status.code()
    }
}

impl Cli {
    /// The command line aimed at a [`TestHost`].
    pub fn for_host(host: &TestHost) -> Cli {
        Cli { socket: host.socket.clone(), state_dir: host.state_dir.clone(), home: host.home.clone() }
    }

    /// `panehost --socket S --state-dir D ARGS...` with an environment built
    /// from scratch, like the one TestHost gives its host.
    pub fn command<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        let mut command = Command::new(panehost_bin());
        command
            .arg("--socket")
            .arg(&self.socket)
            .arg("--state-dir")
            .arg(&self.state_dir)
            .args(args)
            .env_clear()
            .env("PATH", format!("{}:/usr/local/bin:/usr/bin:/bin", bin_dir().display()))
            .env("HOME", &self.home)
            .env("SHELL", "/bin/sh")
            .env("LANG", "C.UTF-8");
        command
    }

    /// Runs the command to its end (within [`WAIT`]) with no input.
    pub fn run<S: AsRef<OsStr>>(&self, args: &[S]) -> Outcome {
        run_to_end(self.command(args), None)
    }

    /// Runs the command to its end with `input` on its standard input.
    pub fn run_with_input<S: AsRef<OsStr>>(&self, args: &[S], input: &[u8]) -> Outcome {
        run_to_end(self.command(args), Some(input))
    }

    /// Runs the command and fails the test unless it exits 0; returns its
    /// standard output.
    pub fn ok<S: AsRef<OsStr> + std::fmt::Debug>(&self, args: &[S]) -> String {
        let outcome = self.run(args);
        assert!(outcome.status.success(), "panehost {args:?} failed: {outcome:?}");
        outcome.stdout
    }

    /// Like [`ok`](Self::ok), parsing standard output as one JSON value.
    pub fn json<S: AsRef<OsStr> + std::fmt::Debug>(&self, args: &[S]) -> Value {
        let stdout = self.ok(args);
        serde_json::from_str(stdout.trim_end())
            .unwrap_or_else(|error| panic!("panehost {args:?} printed no JSON ({error}): {stdout:?}"))
    }

    /// Runs a `--json` command and decodes what it printed as the
    /// protocol's type `T` (its `--json` prints the protocol's own JSON).
    pub fn answer<T: serde::de::DeserializeOwned, S: AsRef<OsStr> + std::fmt::Debug>(&self, args: &[S]) -> T {
        let value = self.json(args);
        serde_json::from_value(value.clone()).unwrap_or_else(|error| {
            panic!("panehost {args:?} printed no {} ({error}): {value}", std::any::type_name::<T>())
        })
    }
}

/// A child process that is killed (by its own pid) and reaped if the test
/// ends while it still runs.
pub struct ChildGuard(pub Option<Child>);

impl ChildGuard {
    pub fn child(&mut self) -> &mut Child {
        self.0.as_mut().unwrap()
    }

    /// Waits up to [`WAIT`] for the process to exit on its own.
    pub fn wait_for_exit(&mut self, what: &str) -> ExitStatus {
        let deadline = Instant::now() + WAIT;
        loop {
            if let Some(status) = self.child().try_wait().unwrap() {
                self.0 = None;
                return status;
            }
            assert!(Instant::now() < deadline, "{what} did not exit within {WAIT:?}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for ChildGuard {
    fn drop(&mut self) {
        if let Some(mut child) = self.0.take() {
            if child.try_wait().ok().flatten().is_none() {
                let _ = child.kill();
            }
            let _ = child.wait();
        }
    }
}

/// Reads a pipe to its end on a thread.
pub fn read_all_on_thread(mut pipe: impl Read + Send + 'static) -> std::thread::JoinHandle<Vec<u8>> {
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = pipe.read_to_end(&mut bytes);
        bytes
    })
}

/// Spawns `command` with piped output, feeds it `input` (or nothing), and
/// waits up to [`WAIT`] for it to exit; a command still running then is
/// killed and the test fails.
pub fn run_to_end(command: Command, input: Option<&[u8]>) -> Outcome {
    run_to_end_within(command, input, WAIT)
}

/// Like [`run_to_end`], waiting up to `wait`.
pub fn run_to_end_within(mut command: Command, input: Option<&[u8]>, wait: Duration) -> Outcome {
    command
        .stdin(if input.is_some() { Stdio::piped() } else { Stdio::null() })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let description = format!("{command:?}");
    let mut guard =
        ChildGuard(Some(command.spawn().unwrap_or_else(|error| panic!("cannot run {description}: {error}"))));
    let writer = input.map(|input| {
        let mut stdin = guard.child().stdin.take().unwrap();
        let input = input.to_vec();
        // Dropping stdin at the end of the thread closes the pipe.
        std::thread::spawn(move || {
            let _ = stdin.write_all(&input);
        })
    });
    let stdout = read_all_on_thread(guard.child().stdout.take().unwrap());
    let stderr = read_all_on_thread(guard.child().stderr.take().unwrap());
    let deadline = Instant::now() + wait;
    let status = loop {
        if let Some(status) = guard.child().try_wait().unwrap() {
            guard.0 = None;
            break status;
        }
        if Instant::now() >= deadline {
            drop(guard); // kills it
            let stdout = String::from_utf8_lossy(&stdout.join().unwrap()).into_owned();
            let stderr = String::from_utf8_lossy(&stderr.join().unwrap()).into_owned();
            panic!("{description} did not exit within {wait:?}\nstdout: {stdout}\nstderr: {stderr}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    if let Some(writer) = writer {
        writer.join().unwrap();
    }
    Outcome {
        status,
        stdout: String::from_utf8_lossy(&stdout.join().unwrap()).into_owned(),
        stderr: String::from_utf8_lossy(&stderr.join().unwrap()).into_owned(),
    }
}

/// Polls `probe` until it yields a value, failing after [`WAIT`] with the
/// last thing it reported.
pub fn wait_for<T>(what: &str, mut probe: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + WAIT;
    loop {
        match probe() {
            Ok(value) => return value,
            Err(last) => {
                assert!(Instant::now() < deadline, "timed out after {WAIT:?} waiting for {what}; last seen: {last}")
            }
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// The pane with this id in what `ls --json` printed, the `panes` answer.
pub fn find_pane<'a>(list: &'a Value, id: &str) -> Option<&'a Value> {
    list["panes"].as_array().expect("ls --json prints {\"panes\": [...]}").iter().find(|pane| pane["id"] == id)
}
