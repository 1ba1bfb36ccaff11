//! A `panehost host` of the bench's own: its socket and state in a
//! directory of their own, ended by its pid.

use crate::BenchResult;
use panehost_client::{Client, ClientOptions};
use panehost_ipc::{PaneId, PaneState, PaneSummary, Size, StartParams};
use panehost_tests::procfs;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// How long the host may take to listen, or to exit once asked to.
const HOST_WAIT: Duration = Duration::from_secs(30);

/// A running host, ended (SIGTERM, then SIGKILL) when dropped.
#[derive(Debug)]
pub struct PanehostHost {
    child: Option<Child>,
    /// The socket it listens on.
    pub socket: PathBuf,
    /// Its directory: socket, state, HOME, log.
    dir: PathBuf,
}

impl PanehostHost {
    /// Starts `bin host` with its socket, state and HOME under `dir` (which
    /// must not exist yet), and waits until it accepts connections.
    pub fn start(bin: &Path, dir: &Path, extra_env: &[(&str, String)]) -> BenchResult<PanehostHost> {
        std::fs::create_dir_all(dir.join("home"))?;
        let socket = dir.join("run").join("host.sock");
        let log = std::fs::File::create(dir.join("host.log"))?;
        let child = Command::new(bin)
            .arg("--socket")
            .arg(&socket)
            .arg("--state-dir")
            .arg(dir.join("state"))
            .arg("host")
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", dir.join("home"))
            .env("SHELL", "/bin/sh")
            .env("LANG", "C.UTF-8")
            .envs(extra_env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .spawn()
            .map_err(|e| format!("cannot run {}: {e}", bin.display()))?;
        let host = PanehostHost { child: Some(child), socket, dir: dir.to_path_buf() };
        let deadline = Instant::now() + HOST_WAIT;
        while UnixStream::connect(&host.socket).is_err() {
            if Instant::now() > deadline {
                return Err(format!(
                    "the host did not listen within {HOST_WAIT:?}; see {}",
                    dir.join("host.log").display()
                )
                .into());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        Ok(host)
    }

    /// The host's pid.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map(Child::id).unwrap_or(0)
    }

    /// The host's resident memory, in KiB.
    pub fn rss_kib(&self) -> u64 {
        procfs::rss_kib(self.pid()).unwrap_or(0)
    }

    /// The host's open file descriptors.
    pub fn fd_count(&self) -> usize {
        procfs::fd_count(self.pid()).unwrap_or(0)
    }

    /// The pane keeper processes of this host (`panehost-keeper`, each
    /// holding a group of panes, where the host keeps its PTYs in keepers),
    /// found by the state directory on their command lines.
    pub fn keepers(&self) -> Vec<u32> {
        match self.dir.to_str() {
            Some(dir) => procfs::processes("panehost-keeper", dir),
            None => Vec::new(),
        }
    }

    /// The keepers' memory, in KiB: the sum of their proportional set
    /// sizes, so that the pages they share (the keeper binary, libc) count
    /// once in all.
    pub fn keepers_pss_kib(&self) -> u64 {
        self.keepers().into_iter().filter_map(procfs::pss_kib).sum()
    }

    /// The keepers' open file descriptors, summed.
    pub fn keepers_fd_count(&self) -> usize {
        self.keepers().into_iter().filter_map(procfs::fd_count).sum()
    }

    /// A new connection to the host (bincode, as a Rust client would use).
    pub async fn connect(&self) -> BenchResult<Client> {
        self.connect_buffering(panehost_client::DEFAULT_EVENT_BUFFER).await
    }

    /// A new connection whose subscriptions buffer `events` events each
    /// before the connection stops reading its socket.
    pub async fn connect_buffering(&self, events: usize) -> BenchResult<Client> {
        let options = ClientOptions {
            request_timeout: Some(Duration::from_secs(300)),
            event_buffer: events,
            ..ClientOptions::named("panehost-bench")
        };
        Ok(Client::connect(&self.socket, &options).await?)
    }

    /// Ends the host: SIGTERM (it closes its panes), then SIGKILL by pid
    /// if it has not exited within the wait.
    pub fn stop(mut self) {
        self.end();
    }

    fn end(&mut self) {
        if let Some(child) = self.child.take() {
            panehost_tests::child_process::terminate(child, HOST_WAIT);
        }
    }
}

impl Drop for PanehostHost {
    fn drop(&mut self) {
        self.end();
    }
}

/// Start parameters for a `shell` pane at 80x24 running `command` (the
/// interactive shell when empty).
pub fn shell_pane(command: &[&str]) -> StartParams {
    sized_shell_pane(command, Size::DEFAULT)
}

/// Start parameters for a `shell` pane of `size` running `command`.
pub fn sized_shell_pane(command: &[&str], size: Size) -> StartParams {
    StartParams {
        runtime: "shell".into(),
        size: Some(size),
        command: command.iter().map(|s| s.to_string()).collect(),
        ..Default::default()
    }
}

/// Polls `list` until `ready` holds for every pane in `panes`.
pub async fn wait_for_panes(
    client: &Client,
    panes: &[PaneId],
    timeout: Duration,
    ready: impl Fn(&PaneSummary) -> bool,
) -> BenchResult<Vec<PaneSummary>> {
    let deadline = Instant::now() + timeout;
    loop {
        let list = client.list().await?;
        let wanted: Vec<PaneSummary> = list.into_iter().filter(|p| panes.contains(&p.id)).collect();
        if wanted.len() == panes.len() && wanted.iter().all(&ready) {
            return Ok(wanted);
        }
        if Instant::now() > deadline {
            let done = wanted.iter().filter(|p| ready(p)).count();
            return Err(format!("only {done} of {} panes were ready after {timeout:?}", panes.len()).into());
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Polls `inspect` until the pane's screen model has parsed `offset`.
pub async fn wait_for_screen(client: &Client, pane: &PaneId, offset: u64, timeout: Duration) -> BenchResult<()> {
    let deadline = Instant::now() + timeout;
    loop {
        let detail = client.inspect(pane).await?;
        if detail.screen.offset >= offset {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err(format!(
                "pane {pane}'s screen reached {} of {offset} bytes within {timeout:?}",
                detail.screen.offset
            )
            .into());
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// True when the pane's process has exited.
pub fn has_exited(pane: &PaneSummary) -> bool {
    matches!(pane.state, PaneState::Exited(_))
}
