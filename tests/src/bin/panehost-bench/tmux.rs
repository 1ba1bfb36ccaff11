//! A tmux server of the bench's own (its own `-L` socket name, no
//! configuration file), and control-mode clients of it.

use crate::BenchResult;
use panehost_ipc::Size;
use panehost_tests::procfs;
use std::io::Write;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

/// A tmux server, killed (`kill-server`, then SIGKILL by pid) when dropped.
///
/// It starts with one session, `keep`, whose pane idles in `cat`: it keeps
/// the server alive between measurements and pays its one-time costs
/// before anything is measured.
#[derive(Debug)]
pub struct TmuxServer {
    name: String,
    pid: u32,
    /// The server's socket, removed once the server is gone.
    socket: Option<std::path::PathBuf>,
    alive: bool,
}

impl TmuxServer {
    /// Starts a server on socket name `name` with `history-limit` lines of
    /// history per pane, `/bin/sh` as its shell, and 80x24 windows.
    pub fn start(name: &str, history_limit: u32) -> BenchResult<TmuxServer> {
        let mut server = TmuxServer { name: name.to_owned(), pid: 0, socket: None, alive: true };
        let setup = format!(
            "new-session -d -s keep -x 80 -y 24 cat ; set -g default-shell /bin/sh ; \
             set -g history-limit {history_limit} ; set -g default-size 80x24 ; set -g remain-on-exit off"
        );
        server.cmd(&setup.split_whitespace().collect::<Vec<_>>())?;
        let identity = server.cmd(&["display-message", "-p", "#{pid} #{socket_path}"])?;
        let (pid, socket) = identity.trim().split_once(' ').ok_or("tmux did not say its pid and socket")?;
        server.pid = pid.parse()?;
        server.socket = Some(socket.into());
        Ok(server)
    }

    /// The server's socket name (`-L`).
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The server's pid.
    pub fn pid(&self) -> u32 {
        self.pid
    }

    /// The server's resident memory, in KiB.
    pub fn rss_kib(&self) -> u64 {
        procfs::rss_kib(self.pid).unwrap_or(0)
    }

    /// The server's open file descriptors.
    pub fn fd_count(&self) -> usize {
        procfs::fd_count(self.pid).unwrap_or(0)
    }

    /// A `tmux` command line aimed at this server.
    pub fn command(&self) -> Command {
        let mut command = Command::new("tmux");
        command
            .args(["-L", &self.name, "-f", "/dev/null"])
            .env_remove("TMUX")
            .env("SHELL", "/bin/sh")
            .env("LANG", "C.UTF-8");
        command
    }

    /// The `tmux` invocation for a pane's shell command to talk back to
    /// this server (`wait-for -S`, for example).
    pub fn inner_tmux(&self) -> String {
        format!("tmux -L {}", self.name)
    }

    /// Runs one tmux command (a list of arguments; `;` separates commands)
    /// and returns what it printed.
    pub fn cmd(&self, args: &[&str]) -> BenchResult<String> {
        let output = self.command().args(args).stdin(Stdio::null()).output()?;
        if !output.status.success() {
            return Err(format!("tmux {}: {}", args.join(" "), String::from_utf8_lossy(&output.stderr).trim()).into());
        }
        Ok(String::from_utf8_lossy(&output.stdout).into_owned())
    }

    /// Creates a detached session `name` of `size` whose one pane runs
    /// `command` (through the server's shell).
    pub fn new_session(&self, name: &str, size: Size, command: &str) -> BenchResult<()> {
        let (cols, rows) = (size.cols.to_string(), size.rows.to_string());
        self.cmd(&["new-session", "-d", "-s", name, "-x", &cols, "-y", &rows, command])?;
        Ok(())
    }

    /// Fails unless the pane of `target` (a session, say) is `size`.
    pub fn check_pane_size(&self, target: &str, size: Size) -> BenchResult<()> {
        let shown = self.cmd(&["display-message", "-p", "-t", target, "#{pane_width}x#{pane_height}"])?;
        let expected = format!("{}x{}", size.cols, size.rows);
        if shown.trim() != expected {
            return Err(format!("tmux's pane {target} is {}, expected {expected}", shown.trim()).into());
        }
        Ok(())
    }

    /// Runs many commands through one client, one per line of a file.
    pub fn source(&self, dir: &Path, lines: &[String]) -> BenchResult<()> {
        let path = dir.join(format!("tmux-commands-{}.conf", self.name));
        std::fs::write(&path, lines.join("\n") + "\n")?;
        self.cmd(&["source-file", path.to_str().ok_or("non-UTF-8 temp path")?])?;
        let _ = std::fs::remove_file(path);
        Ok(())
    }

    /// Ends the server.
    pub fn kill(mut self) {
        self.end();
    }

    fn end(&mut self) {
        if !self.alive {
            return;
        }
        self.alive = false;
        let _ = self.command().arg("kill-server").stdin(Stdio::null()).stderr(Stdio::null()).status();
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.pid != 0 && procfs::is_alive(self.pid) && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        if self.pid != 0 && procfs::is_alive(self.pid) {
            if let Some(pid) = rustix::process::Pid::from_raw(self.pid as i32) {
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
            }
        }
        // tmux leaves its socket behind.
        if let Some(socket) = self.socket.take() {
            let _ = std::fs::remove_file(socket);
        }
    }
}

impl Drop for TmuxServer {
    fn drop(&mut self) {
        self.end();
    }
}

/// A control-mode client (`tmux -C attach`): commands in on stdin,
/// notifications (`%output %<pane> <escaped bytes>` and the rest) out on
/// stdout. Ended by its pid when dropped.
#[derive(Debug)]
pub struct ControlClient {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: Option<ChildStdout>,
}

impl ControlClient {
    /// Attaches a control client to `session`.
    pub fn attach(server: &TmuxServer, session: &str) -> BenchResult<ControlClient> {
        let mut child = server
            .command()
            .args(["-C", "attach-session", "-t", session])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take();
        Ok(ControlClient { child, stdin, stdout })
    }

    /// The client's stdout, for a reader to own.
    pub fn take_stdout(&mut self) -> ChildStdout {
        self.stdout.take().expect("stdout taken once")
    }

    /// Sends one command line.
    pub fn send(&mut self, line: &str) -> BenchResult<()> {
        let stdin = self.stdin.as_mut().ok_or("control client's stdin is closed")?;
        stdin.write_all(line.as_bytes())?;
        stdin.write_all(b"\n")?;
        stdin.flush()?;
        Ok(())
    }
}

impl Drop for ControlClient {
    fn drop(&mut self) {
        self.stdin.take();
        let deadline = Instant::now() + Duration::from_millis(500);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
