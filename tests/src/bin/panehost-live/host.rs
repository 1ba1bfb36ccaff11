//! The `panehost host` the CLIs run under: its own socket and state in the
//! scratch directory, the scratch HOME, PATH = the CLIs' bin directories +
//! node's + `/usr/bin:/bin`, and the fixture's variables. Ended by its pid.
//!
//! The host's executable (`panehost`, which is its keepers too) is copied
//! into the scratch directory first: the host runs `panehost notify` from
//! its own path for the CLIs' hooks, and a rebuild of the workspace during
//! the run must not swap the program under it.

use panehost_client::{Client, ClientOptions};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// How long the host may take to listen, or to exit once asked to.
const HOST_WAIT: Duration = Duration::from_secs(30);

/// The binaries the host needs.
const HOST_BINARIES: &[&str] = &["panehost"];

/// A running host.
#[derive(Debug)]
pub struct Host {
    child: Mutex<Option<Child>>,
    /// How it was started, to start it again after a reboot.
    launch: Launch,
    pub socket: PathBuf,
    pub log: PathBuf,
}

/// What starts the host.
#[derive(Debug, Clone)]
struct Launch {
    program: PathBuf,
    dir: PathBuf,
    home: PathBuf,
    path: String,
    variables: Vec<(String, String)>,
}

impl Launch {
    fn spawn(&self, socket: &Path, log: &Path) -> Result<Child, String> {
        let log_file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(log)
            .map_err(|e| format!("cannot open {}: {e}", log.display()))?;
        Command::new(&self.program)
            .arg("--socket")
            .arg(socket)
            .arg("--state-dir")
            .arg(self.dir.join("state"))
            .arg("host")
            .env_clear()
            .env("PATH", &self.path)
            .env("HOME", &self.home)
            .env("SHELL", "/bin/sh")
            .env("LANG", "C.UTF-8")
            .env("PANEHOST_LOG", "debug")
            .envs(self.variables.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .current_dir(&self.home)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log_file)
            .spawn()
            .map_err(|e| format!("cannot run the host: {e}"))
    }
}

impl Host {
    /// Copies the host's binaries from `bin_dir` into `dir/bin`, starts the
    /// host there, and waits until it accepts connections.
    pub fn start(
        bin_dir: &Path,
        dir: &Path,
        home: &Path,
        path: &str,
        variables: &[(String, String)],
    ) -> Result<Host, String> {
        let own_bin = dir.join("bin");
        std::fs::create_dir_all(&own_bin).map_err(|e| format!("cannot create {}: {e}", own_bin.display()))?;
        for name in HOST_BINARIES {
            let from = bin_dir.join(name);
            if from.is_file() {
                std::fs::copy(&from, own_bin.join(name)).map_err(|e| format!("cannot copy {}: {e}", from.display()))?;
            } else if *name == "panehost" {
                return Err(format!("{} is missing: cargo build -p panehost-host -p panehost-tests", from.display()));
            }
        }
        let socket = dir.join("run").join("host.sock");
        let log = dir.join("host.log");
        let _ = std::fs::remove_file(&log);
        let launch = Launch {
            program: own_bin.join("panehost"),
            dir: dir.to_path_buf(),
            home: home.to_path_buf(),
            path: path.to_owned(),
            variables: variables.to_vec(),
        };
        let child = launch.spawn(&socket, &log)?;
        let host = Host { child: Mutex::new(Some(child)), launch, socket, log };
        host.wait_listening()?;
        Ok(host)
    }

    /// Waits until the host accepts connections.
    fn wait_listening(&self) -> Result<(), String> {
        let deadline = Instant::now() + HOST_WAIT;
        while UnixStream::connect(&self.socket).is_err() {
            if let Some(child) = self.child().as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(format!("the host exited ({status}) before listening; see {}", self.log.display()));
                }
            }
            if Instant::now() > deadline {
                self.stop();
                return Err(format!("the host did not listen within {HOST_WAIT:?}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }

    fn child(&self) -> std::sync::MutexGuard<'_, Option<Child>> {
        self.child.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// The host's state directory (pane records, keepers' sockets).
    pub fn state_dir(&self) -> PathBuf {
        self.launch.dir.join("state")
    }

    /// A reboot, as far as the panes can tell: SIGKILL to the host, to every
    /// keeper it started and to every process of the process groups
    /// `groups`; then a new host on the same socket and state directory,
    /// which restores the panes from their records.
    pub fn reboot(&self, groups: &[u32]) -> Result<(), String> {
        if let Some(mut child) = self.child().take() {
            let _ = child.kill();
            let _ = child.wait();
        }
        let keepers = self.state_dir().join("panes").join("keepers").display().to_string();
        let mut doomed = crate::procs::with_cmdline(&keepers);
        for group in groups {
            doomed.extend(crate::procs::group(*group));
        }
        for process in &doomed {
            if let Some(pid) = rustix::process::Pid::from_raw(process.pid as i32) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        let deadline = Instant::now() + HOST_WAIT;
        while doomed.iter().any(|process| crate::procs::alive(process.pid)) {
            if Instant::now() > deadline {
                return Err(format!("still alive after SIGKILL: {}", crate::procs::list(&doomed)));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        *self.child() = Some(self.launch.spawn(&self.socket, &self.log)?);
        self.wait_listening()
    }

    /// The environment the host runs with (PATH, HOME, LANG and the
    /// fixture's variables), for a CLI run beside it.
    pub fn environment(&self) -> Vec<(String, String)> {
        let mut environment = vec![
            ("PATH".to_owned(), self.launch.path.clone()),
            ("HOME".to_owned(), self.launch.home.display().to_string()),
            ("LANG".to_owned(), "C.UTF-8".to_owned()),
        ];
        environment.extend(self.launch.variables.iter().cloned());
        environment
    }

    /// The host's pid.
    pub fn pid(&self) -> u32 {
        self.child().as_ref().map(Child::id).unwrap_or(0)
    }

    /// A new connection (bincode, as a Rust API server would use).
    pub async fn connect(&self) -> Result<Client, String> {
        let options =
            ClientOptions { request_timeout: Some(Duration::from_secs(120)), ..ClientOptions::named("panehost-live") };
        Client::connect(&self.socket, &options).await.map_err(|e| e.to_string())
    }

    /// SIGTERM (the host closes its panes), then SIGKILL by pid.
    pub fn stop(&self) {
        if let Some(child) = self.child().take() {
            panehost_tests::child_process::terminate(child, HOST_WAIT);
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.stop();
    }
}
