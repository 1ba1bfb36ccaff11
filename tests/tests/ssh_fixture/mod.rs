//! A machine reached through OpenSSH, on loopback: an sshd of the test's
//! own (its own configuration, host key and port, run as root, not the
//! system's service), a client key and a `known_hosts` for it, and a
//! second local user whose host the test's client drives through it.
//!
//! The test's own user (root, as in CI) is the first user: it runs the
//! `panehost` client, whose ssh signs in as the second user. The second
//! user's sessions get their own `XDG_RUNTIME_DIR` and `XDG_STATE_HOME`
//! inside the test's directory (sshd's `SetEnv`), so every test has a host
//! of its own for that user, at the path panehost's defaults give it.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long any one wait may take.
pub const WAIT: Duration = Duration::from_secs(30);

/// The second user: made by the first test that needs it, kept for the
/// next (tests run in parallel and share it; each has its own directories).
pub const SECOND_USER: &str = "panehost-remote";

/// The ssh `Host` names the client configuration defines.
pub const MACHINE: &str = "machine";
/// The same machine, signing in as root.
pub const MACHINE_AS_ROOT: &str = "machine-as-root";
/// The same machine, with a `known_hosts` that does not know it.
pub const MACHINE_UNKNOWN_KEY: &str = "machine-with-an-unknown-key";

/// Where each machine's files go: a directory of root's, whatever the
/// checkout's path.
const FIXTURE_PARENT: &str = "/run/panehost-test-ssh";

/// Set (by CI) when sshd must run: a missing sshd then fails the test
/// instead of skipping it.
pub const REQUIRE_ENV: &str = "PANEHOST_REQUIRE_SSHD";

/// An sshd on loopback, a client configuration for it and a second user.
/// Ends its sshd (by its pid) on drop, after the second user's host.
pub struct SshMachine {
    pub dir: tempfile::TempDir,
    pub port: u16,
    pub uid: u32,
    /// The client configuration (`ssh -F`).
    pub ssh_config: PathBuf,
    /// The `panehost` the second user runs.
    pub remote_program: PathBuf,
    /// The second user's `XDG_RUNTIME_DIR`.
    pub remote_runtime_dir: PathBuf,
    /// This user's `XDG_RUNTIME_DIR` for the client.
    pub local_runtime_dir: PathBuf,
    /// This user's `HOME` for the client.
    pub local_home: PathBuf,
    sshd: Option<Child>,
    sshd_log: Arc<Mutex<String>>,
}

/// Why sshd cannot run here, if it cannot.
fn cannot_run() -> Option<String> {
    if rustix::process::geteuid().as_raw() != 0 {
        return Some("it runs its own sshd and plays a second user, so it needs root (as CI runs it)".into());
    }
    for program in ["/usr/sbin/sshd", "/usr/bin/ssh", "/usr/bin/ssh-keygen", "/usr/sbin/useradd"] {
        if !Path::new(program).exists() {
            return Some(format!("{program} is missing (.ci/run installs openssh-server)"));
        }
    }
    None
}

fn run(program: &str, args: &[&str]) -> std::process::Output {
    Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|error| panic!("cannot run {program}: {error}"))
}

fn run_ok(program: &str, args: &[&str]) -> String {
    let output = run(program, args);
    assert!(
        output.status.success(),
        "{program} {args:?}: {}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8_lossy(&output.stdout).into_owned()
}

/// The second user's uid, making the user first when missing: a shell, a
/// home, and a password field of `*` (no password; `!` would mean a locked
/// account, which sshd refuses without PAM).
pub fn second_user() -> u32 {
    let deadline = Instant::now() + WAIT;
    loop {
        let id = run("id", &["-u", SECOND_USER]);
        if id.status.success() {
            let uid = String::from_utf8_lossy(&id.stdout).trim().parse().expect("id prints a uid");
            let shadow = std::fs::read_to_string("/etc/shadow").unwrap_or_default();
            let locked = shadow.lines().any(|line| line.starts_with(&format!("{SECOND_USER}:!")));
            if locked {
                let _ = run("usermod", &["-p", "*", SECOND_USER]);
                continue;
            }
            return uid;
        }
        // Another test may be making it at this moment: then this fails,
        // and the next look finds it.
        let _ = run(
            "/usr/sbin/useradd",
            &[
                "--create-home",
                "--shell",
                "/bin/sh",
                "--password",
                "*",
                "--comment",
                "panehost remote tests",
                SECOND_USER,
            ],
        );
        assert!(Instant::now() < deadline, "cannot create the user {SECOND_USER}");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A port nothing listens on right now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port()
}

/// True when every directory above `path` lets others in and `path` lets
/// others run it.
fn runnable_by_others(path: &Path) -> bool {
    let mode = |path: &Path| std::fs::metadata(path).map(|meta| meta.permissions().mode()).unwrap_or(0);
    mode(path) & 0o005 == 0o005 && path.ancestors().skip(1).all(|dir| mode(dir) & 0o001 != 0)
}

fn mkdir(path: &Path, mode: u32, owner: Option<u32>) {
    std::fs::create_dir_all(path).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).unwrap();
    if let Some(uid) = owner {
        std::os::unix::fs::chown(path, Some(uid), Some(uid)).unwrap();
    }
}

impl SshMachine {
    /// Starts the machine, or says why it cannot and returns `None` (the
    /// caller then skips, loudly).
    pub fn start(test: &str) -> Option<SshMachine> {
        if let Some(reason) = cannot_run() {
            if std::env::var_os(REQUIRE_ENV).is_some() {
                panic!("{test}: sshd must run here ({REQUIRE_ENV} is set), but {reason}");
            }
            eprintln!("SKIPPED: {test}: {reason}");
            return None;
        }
        let uid = second_user();
        // Not under /tmp, nor under the checkout (which may be): sshd's
        // StrictModes wants every directory above the authorized keys to
        // be writable by no one but root. /run is root's.
        let parent = Path::new(FIXTURE_PARENT);
        mkdir(parent, 0o755, None);
        let dir = tempfile::Builder::new().prefix("ssh-").tempdir_in(parent).unwrap();
        let base = dir.path().to_owned();
        std::fs::set_permissions(&base, std::fs::Permissions::from_mode(0o755)).unwrap();
        // sshd's privilege separation directory.
        mkdir(Path::new("/run/sshd"), 0o755, None);

        let keygen = |file: &Path| {
            run_ok(
                "/usr/bin/ssh-keygen",
                &["-q", "-t", "ed25519", "-N", "", "-C", "panehost-test", "-f", file.to_str().unwrap()],
            )
        };
        let host_key = base.join("host_ed25519");
        let client_key = base.join("client_ed25519");
        keygen(&host_key);
        keygen(&client_key);
        let client_public = std::fs::read_to_string(client_key.with_extension("pub")).unwrap();
        let keys_dir = base.join("authorized_keys");
        mkdir(&keys_dir, 0o755, None);
        for user in [SECOND_USER, "root"] {
            let file = keys_dir.join(user);
            std::fs::write(&file, &client_public).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let host_public = std::fs::read_to_string(host_key.with_extension("pub")).unwrap();
        let host_public: Vec<&str> = host_public.split_whitespace().take(2).collect();
        std::fs::write(base.join("known_hosts"), format!("panehost-test-machine {}\n", host_public.join(" "))).unwrap();

        // The second user's directories: their runtime dir (the socket's
        // parent is made by their host) and state.
        let remote_runtime_dir = base.join("remote-run");
        let remote_state = base.join("remote-state");
        mkdir(&remote_runtime_dir, 0o700, Some(uid));
        mkdir(&remote_state, 0o700, Some(uid));
        let local_runtime_dir = base.join("local-run");
        let local_home = base.join("local-home");
        mkdir(&local_runtime_dir, 0o700, None);
        mkdir(&local_home, 0o700, None);

        // The panehost the second user runs: the one under test, or a copy
        // they can reach.
        let program = support_panehost_bin();
        let remote_program = if runnable_by_others(&program) {
            program
        } else {
            let bin = base.join("bin");
            mkdir(&bin, 0o755, None);
            let copy = bin.join("panehost");
            std::fs::copy(&program, &copy).unwrap();
            std::fs::set_permissions(&copy, std::fs::Permissions::from_mode(0o755)).unwrap();
            copy
        };

        let ssh_config = base.join("ssh_config");
        let mut config = String::new();
        for (alias, user, known_hosts) in [
            (MACHINE, SECOND_USER, base.join("known_hosts")),
            (MACHINE_AS_ROOT, "root", base.join("known_hosts")),
            (MACHINE_UNKNOWN_KEY, SECOND_USER, base.join("empty_known_hosts")),
        ] {
            config.push_str(&format!(
                "Host {alias}\n  HostName 127.0.0.1\n  Port PORT\n  User {user}\n  IdentityFile {key}\n  \
                 IdentitiesOnly yes\n  IdentityAgent none\n  UserKnownHostsFile {known}\n  GlobalKnownHostsFile /dev/null\n  \
                 StrictHostKeyChecking yes\n  HostKeyAlias panehost-test-machine\n  CheckHostIP no\n  LogLevel ERROR\n",
                key = client_key.display(),
                known = known_hosts.display(),
            ));
        }
        std::fs::write(base.join("empty_known_hosts"), "").unwrap();

        let sshd_log = Arc::new(Mutex::new(String::new()));
        let mut attempts = 0;
        let (sshd, port) = loop {
            attempts += 1;
            let port = free_port();
            let sshd_config = base.join("sshd_config");
            std::fs::write(
                &sshd_config,
                format!(
                    "Port {port}\nListenAddress 127.0.0.1\nHostKey {host_key}\nPidFile none\nUsePAM no\n\
                     PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
                     AuthorizedKeysFile {keys}/%u\nStrictModes yes\nPermitRootLogin prohibit-password\n\
                     AllowUsers {SECOND_USER} root\nAllowTcpForwarding local\nAllowStreamLocalForwarding local\n\
                     X11Forwarding no\nPrintMotd no\nLogLevel VERBOSE\n\
                     Match User {SECOND_USER}\n  SetEnv XDG_RUNTIME_DIR={run} XDG_STATE_HOME={state}\n",
                    host_key = host_key.display(),
                    keys = keys_dir.display(),
                    run = remote_runtime_dir.display(),
                    state = remote_state.display(),
                ),
            )
            .unwrap();
            let mut child = Command::new("/usr/sbin/sshd")
                .args(["-D", "-e", "-f"])
                .arg(&sshd_config)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::piped())
                .spawn()
                .expect("sshd runs");
            let (ready_tx, ready_rx) = std::sync::mpsc::channel();
            let stderr = child.stderr.take().unwrap();
            let log = Arc::clone(&sshd_log);
            std::thread::spawn(move || {
                for line in BufReader::new(stderr).lines() {
                    let Ok(line) = line else { break };
                    if line.contains("Server listening on") {
                        let _ = ready_tx.send(Ok(()));
                    } else if line.contains("Address already in use") || line.contains("Cannot bind") {
                        let _ = ready_tx.send(Err(line.clone()));
                    }
                    let mut log = log.lock().unwrap();
                    log.push_str(&line);
                    log.push('\n');
                }
                let _ = ready_tx.send(Err("sshd ended".into()));
            });
            match ready_rx.recv_timeout(WAIT) {
                Ok(Ok(())) => break (child, port),
                outcome => {
                    let _ = child.kill();
                    let _ = child.wait();
                    assert!(attempts < 5, "sshd did not start: {outcome:?}\n{}", sshd_log.lock().unwrap());
                }
            }
        };
        std::fs::write(&ssh_config, config.replace("PORT", &port.to_string())).unwrap();
        std::fs::set_permissions(&ssh_config, std::fs::Permissions::from_mode(0o600)).unwrap();
        Some(SshMachine {
            dir,
            port,
            uid,
            ssh_config,
            remote_program,
            remote_runtime_dir,
            local_runtime_dir,
            local_home,
            sshd: Some(sshd),
            sshd_log,
        })
    }

    /// The second user's host socket, by panehost's defaults there.
    pub fn remote_socket(&self) -> PathBuf {
        self.remote_runtime_dir.join("panehost").join("host.sock")
    }

    /// The environment a client of this user runs with.
    pub fn client_env(&self) -> Vec<(&'static str, String)> {
        vec![
            ("PATH", "/usr/local/bin:/usr/bin:/bin".to_owned()),
            ("HOME", self.local_home.display().to_string()),
            ("XDG_RUNTIME_DIR", self.local_runtime_dir.display().to_string()),
            ("SHELL", "/bin/sh".to_owned()),
            ("LANG", "C.UTF-8".to_owned()),
        ]
    }

    /// The arguments that aim `panehost` at `destination` through this
    /// machine's ssh configuration.
    pub fn remote_args(&self, destination: &str) -> Vec<String> {
        vec![
            "--remote".into(),
            destination.into(),
            "--ssh-config".into(),
            self.ssh_config.display().to_string(),
            "--remote-panehost".into(),
            self.remote_program.display().to_string(),
        ]
    }

    /// `panehost --remote machine ... ARGS` as this (the first) user.
    pub fn panehost(&self, args: &[&str]) -> Command {
        self.panehost_to(MACHINE, args)
    }

    /// `panehost --remote DESTINATION ... ARGS`.
    pub fn panehost_to(&self, destination: &str, args: &[&str]) -> Command {
        let mut command = Command::new(support_panehost_bin());
        command.args(self.remote_args(destination)).args(args).env_clear();
        for (key, value) in self.client_env() {
            command.env(key, value);
        }
        command
    }

    /// `ssh -F CONFIG ARGS`.
    pub fn ssh(&self, args: &[&str]) -> Command {
        let mut command = Command::new("/usr/bin/ssh");
        command.arg("-F").arg(&self.ssh_config).args(args).env_clear();
        for (key, value) in self.client_env() {
            command.env(key, value);
        }
        command
    }

    /// The process listening on the second user's socket (from the kernel,
    /// as root may ask), if one listens.
    pub fn remote_host_pid(&self) -> Option<u32> {
        let stream = UnixStream::connect(self.remote_socket()).ok()?;
        let peer = rustix::net::sockopt::socket_peercred(&stream).ok()?;
        Some(peer.pid.as_raw_nonzero().get() as u32)
    }

    /// The second user's `XDG_STATE_HOME`.
    pub fn remote_state_dir(&self) -> PathBuf {
        self.dir.path().join("remote-state")
    }

    /// What sshd logged so far.
    pub fn sshd_log(&self) -> String {
        self.sshd_log.lock().unwrap().clone()
    }
}

impl Drop for SshMachine {
    fn drop(&mut self) {
        // The second user's host, with its panes, through the link as a
        // user would; by its pid if that did not end it.
        if let Some(pid) = self.remote_host_pid() {
            let mut stop = self.panehost(&["stop", "--close-panes"]);
            stop.stdout(Stdio::null()).stderr(Stdio::null());
            let _ = run_within(stop, WAIT);
            let deadline = Instant::now() + WAIT;
            while process_exists(pid) && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(20));
            }
            if process_exists(pid) {
                kill_pid(pid);
            }
        }
        if let Some(mut sshd) = self.sshd.take() {
            let _ = sshd.kill();
            let _ = sshd.wait();
        }
    }
}

/// Runs `command` to its end, killing it (by its pid) after `limit`.
pub fn run_within(mut command: Command, limit: Duration) -> Option<std::process::ExitStatus> {
    let mut child = command.spawn().ok()?;
    let deadline = Instant::now() + limit;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            return Some(status);
        }
        if Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// True while a process with this pid exists (a zombie counts as gone).
pub fn process_exists(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => !stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'),
        Err(_) => false,
    }
}

/// SIGKILL to one process, by its pid.
pub fn kill_pid(pid: u32) {
    if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
    }
}

/// The children of `parent` whose command name is `name` (from `/proc`).
pub fn children_named(parent: u32, name: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str().and_then(|name| name.parse::<u32>().ok()))
        .filter(|pid| {
            let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else { return false };
            let Some((head, rest)) = stat.rsplit_once(')') else { return false };
            let comm = head.split_once('(').map_or("", |(_, comm)| comm);
            let mut fields = rest.split_whitespace();
            let state = fields.next().unwrap_or("");
            let ppid: u32 = fields.next().and_then(|ppid| ppid.parse().ok()).unwrap_or(0);
            ppid == parent && comm == name && state != "Z"
        })
        .collect()
}

/// Reads a pipe on a thread into a buffer the test can look at while it
/// grows.
pub fn collect(mut pipe: impl Read + Send + 'static) -> Arc<Mutex<Vec<u8>>> {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let shared = Arc::clone(&buffer);
    std::thread::spawn(move || {
        let mut chunk = [0u8; 65536];
        loop {
            match pipe.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => shared.lock().unwrap().extend_from_slice(&chunk[..n]),
            }
        }
    });
    buffer
}

/// Polls `probe` until it yields a value, failing after [`WAIT`] with the
/// last thing it reported.
pub fn wait_until<T>(what: &str, mut probe: impl FnMut() -> Result<T, String>) -> T {
    let deadline = Instant::now() + WAIT;
    loop {
        match probe() {
            Ok(value) => return value,
            Err(last) => assert!(Instant::now() < deadline, "timed out after {WAIT:?} waiting for {what}; {last}"),
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The `panehost` binary under test.
pub fn support_panehost_bin() -> PathBuf {
    match std::env::var_os("PANEHOST_BIN") {
        Some(path) => PathBuf::from(path),
        None => Path::new(env!("CARGO_BIN_EXE_panehost-fixture-agent")).parent().unwrap().join("panehost"),
    }
}
