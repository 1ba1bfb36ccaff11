//! The explorer's own `panehost host`, one per schedule: its directory
//! (socket, state, HOME, log), starting it with a cleared environment and
//! bash as the user's shell, SIGKILL and a start again on the same socket
//! and state, finding its keepers, and ending by pid whatever it left.

use panehost_tests::procfs;
use rustix::process::{kill_process, kill_process_group, Pid, Signal};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

/// The prompt the panes' bash draws (from the HOME's `.bashrc`).
pub const PROMPT: &str = "ready> ";

/// Where one host lives.
#[derive(Debug, Clone)]
pub struct HostDir {
    /// The socket.
    pub socket: PathBuf,
    /// The state directory (pane records, keeper sockets).
    pub state: PathBuf,
    /// The HOME of the host and its panes.
    pub home: PathBuf,
    /// The host's log (its stderr), appended to by every incarnation.
    pub log: PathBuf,
}

impl HostDir {
    /// The layout under `root`, created, with a `.bashrc` that sets the
    /// prompt after sleeping `EXP_STARTUP` seconds when that is set.
    pub fn create(root: &Path) -> std::io::Result<HostDir> {
        let dir = HostDir {
            socket: root.join("run").join("host.sock"),
            state: root.join("state"),
            home: root.join("home"),
            log: root.join("host.log"),
        };
        std::fs::create_dir_all(&dir.home)?;
        // A startup file that takes a moment when the pane's start asks so
        // (as a system's bash completion does).
        let bashrc = format!("[ -n \"$EXP_STARTUP\" ] && sleep \"$EXP_STARTUP\"\nPS1='{PROMPT}'\n");
        std::fs::write(dir.home.join(".bashrc"), bashrc)?;
        Ok(dir)
    }

    /// The keepers of this directory's panes: processes named
    /// `panehost-keeper` whose command line holds the state directory.
    pub fn keepers(&self) -> Vec<u32> {
        match self.state.to_str() {
            Some(state) => procfs::processes("panehost-keeper", state),
            None => Vec::new(),
        }
    }

    /// The processes of this directory's panes and their children: every
    /// process whose environment names this host's socket.
    pub fn pane_processes(&self) -> Vec<u32> {
        let needle = format!("PANEHOST_SOCKET={}", self.socket.display());
        let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
        entries
            .flatten()
            .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
            .filter(|pid| {
                std::fs::read(format!("/proc/{pid}/environ"))
                    .map(|environ| environ.split(|&b| b == 0).any(|var| var == needle.as_bytes()))
                    .unwrap_or(false)
            })
            .filter(|pid| procfs::stat(*pid).is_some_and(|stat| !stat.is_zombie()))
            .collect()
    }
}

/// The host process of one schedule; at most one incarnation at a time.
#[derive(Debug)]
pub struct ExploreHost {
    /// Its directory.
    pub dir: HostDir,
    program: PathBuf,
    jitter: Option<String>,
    child: Option<Child>,
}

impl ExploreHost {
    /// A host that has not been started yet; `jitter` is the value of
    /// its `PANEHOST_JITTER` (`SEED:MAX_MS`), when given.
    pub fn new(dir: HostDir, program: PathBuf, jitter: Option<String>) -> ExploreHost {
        ExploreHost { dir, program, jitter, child: None }
    }

    /// Starts `panehost host` with a cleared environment (bash as the
    /// shell, so shell panes get the host's shell integration), in a
    /// process group of its own. Does not wait for it to listen.
    pub fn spawn(&mut self) -> Result<u32, String> {
        if self.child.is_some() {
            return Err("the host is already running".into());
        }
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.dir.log)
            .map_err(|e| format!("cannot open {}: {e}", self.dir.log.display()))?;
        let mut command = Command::new(&self.program);
        command
            .arg("--socket")
            .arg(&self.dir.socket)
            .arg("--state-dir")
            .arg(&self.dir.state)
            .arg("host")
            .env_clear()
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env("HOME", &self.dir.home)
            .env("SHELL", "/bin/bash")
            .env("LANG", "C.UTF-8")
            // The explorer's own PANEHOST_LOG, to look closer (`debug`).
            .env("PANEHOST_LOG", std::env::var("PANEHOST_LOG").unwrap_or_else(|_| "info".to_owned()))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .process_group(0);
        if let Some(jitter) = &self.jitter {
            command.env("PANEHOST_JITTER", jitter);
        }
        let child = command.spawn().map_err(|e| format!("cannot run {}: {e}", self.program.display()))?;
        let pid = child.id();
        self.child = Some(child);
        Ok(pid)
    }

    /// SIGKILL by pid, and reaps it. Its keepers live on.
    pub fn kill_hard(&mut self) -> Result<(), String> {
        let mut child = self.child.take().ok_or("no host is running")?;
        child.kill().map_err(|e| format!("cannot kill the host: {e}"))?;
        child.wait().map_err(|e| format!("cannot reap the host: {e}"))?;
        Ok(())
    }

    /// SIGTERM (the host closes every pane), then SIGKILL when it has not
    /// exited within `wait`. Gives its exit status, and whether it exited
    /// by itself.
    pub fn stop(&mut self, wait: Duration) -> Option<(ExitStatus, bool)> {
        let mut child = self.child.take()?;
        if let Some(pid) = Pid::from_raw(child.id() as i32) {
            let _ = kill_process(pid, Signal::TERM);
        }
        let deadline = Instant::now() + wait;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = child.try_wait() {
                return Some((status, true));
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        let _ = child.kill();
        child.wait().ok().map(|status| (status, false))
    }

    /// Ends by pid what is left: the host (SIGTERM, then SIGKILL), then
    /// every pane process (its process group) and keeper of this host's
    /// directory. Says what it had to end.
    pub fn end_everything(&mut self) -> Vec<String> {
        let mut ended = Vec::new();
        if let Some((status, by_itself)) = self.stop(Duration::from_secs(20)) {
            if !by_itself {
                ended.push(format!("the host needed SIGKILL ({status})"));
            }
        }
        for round in 0..3 {
            let panes = self.dir.pane_processes();
            let keepers = self.dir.keepers();
            if panes.is_empty() && keepers.is_empty() {
                break;
            }
            if round == 0 {
                let described: Vec<String> = panes.iter().chain(&keepers).map(|pid| procfs::describe(*pid)).collect();
                ended.push(format!(
                    "{} pane process(es) and {} keeper(s) left: {}",
                    panes.len(),
                    keepers.len(),
                    described.join("; ")
                ));
            }
            for pid in &panes {
                if let Some(pid) = Pid::from_raw(*pid as i32) {
                    let _ = kill_process_group(pid, Signal::KILL);
                    let _ = kill_process(pid, Signal::KILL);
                }
            }
            for pid in &keepers {
                if let Some(pid) = Pid::from_raw(*pid as i32) {
                    let _ = kill_process(pid, Signal::KILL);
                }
            }
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline && panes.iter().chain(&keepers).any(|pid| procfs::is_alive(*pid)) {
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        ended
    }
}

impl Drop for ExploreHost {
    fn drop(&mut self) {
        for what in self.end_everything() {
            eprintln!("[explore] at exit: {what}");
        }
    }
}

/// Sends SIGKILL to one process by pid.
pub fn kill_pid(pid: u32) -> Result<(), String> {
    let target = Pid::from_raw(pid as i32).ok_or_else(|| format!("bad pid {pid}"))?;
    kill_process(target, Signal::KILL).map_err(|e| format!("cannot kill {pid}: {e}"))
}

/// Waits until something accepts connections on `socket` (polling: a
/// listening socket announces nothing), at most `timeout`.
pub async fn wait_until_listening(socket: &Path, timeout: Duration) -> Result<(), String> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let attempt = tokio::time::timeout(Duration::from_secs(1), tokio::net::UnixStream::connect(socket)).await;
        if matches!(attempt, Ok(Ok(_))) {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            return Err(format!("the host did not listen on {} within {timeout:?}", socket.display()));
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
