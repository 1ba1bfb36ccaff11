//! The `panehost host` the CLIs run under: its own socket and state in the
//! scratch directory, the scratch HOME, PATH = the CLIs' bin directories +
//! node's + `/usr/bin:/bin`, and the fixture's variables. Ended by its pid.
//!
//! The host's binaries (`panehost`, and `panehost-keeper` when the build
//! has one) are copied into the scratch directory first: the host runs
//! `panehost notify` from its own path for the CLIs' hooks, and a rebuild
//! of the workspace during the run must not swap the program under it.

use panehost_client::{Client, ClientOptions};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the host may take to listen, or to exit once asked to.
const HOST_WAIT: Duration = Duration::from_secs(30);

/// The binaries the host needs next to each other.
const HOST_BINARIES: &[&str] = &["panehost", "panehost-keeper"];

/// A running host.
#[derive(Debug)]
pub struct Host {
    child: Option<Child>,
    pub socket: PathBuf,
    pub log: PathBuf,
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
        let log_file = std::fs::File::create(&log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
        let child = Command::new(own_bin.join("panehost"))
            .arg("--socket")
            .arg(&socket)
            .arg("--state-dir")
            .arg(dir.join("state"))
            .arg("host")
            .env_clear()
            .env("PATH", path)
            .env("HOME", home)
            .env("SHELL", "/bin/sh")
            .env("LANG", "C.UTF-8")
            .env("PANEHOST_LOG", "debug")
            .envs(variables.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .current_dir(home)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log_file)
            .spawn()
            .map_err(|e| format!("cannot run the host: {e}"))?;
        let mut host = Host { child: Some(child), socket, log };
        let deadline = Instant::now() + HOST_WAIT;
        while UnixStream::connect(&host.socket).is_err() {
            if let Some(child) = host.child.as_mut() {
                if let Ok(Some(status)) = child.try_wait() {
                    return Err(format!("the host exited ({status}) before listening; see {}", host.log.display()));
                }
            }
            if Instant::now() > deadline {
                host.stop();
                return Err(format!("the host did not listen within {HOST_WAIT:?}"));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(host)
    }

    /// The host's pid.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(Child::id).unwrap_or(0)
    }

    /// A new connection (bincode, as a Rust API server would use).
    pub async fn connect(&self) -> Result<Client, String> {
        let options =
            ClientOptions { request_timeout: Some(Duration::from_secs(120)), ..ClientOptions::named("panehost-live") };
        Client::connect(&self.socket, &options).await.map_err(|e| e.to_string())
    }

    /// SIGTERM (the host closes its panes), then SIGKILL by pid.
    pub fn stop(&mut self) {
        let Some(mut child) = self.child.take() else { return };
        if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        }
        let deadline = Instant::now() + HOST_WAIT;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        let _ = child.wait();
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        self.stop();
    }
}
