//! [`RemoteLink`]: the forward to a remote host's socket, opened again
//! when it is lost.

use super::ssh::{self, RemoteHost, StderrTail};
use super::target::{check_socket_path, RemoteTarget};
use crate::connection::Client;
use crate::connector::Connector;
use crate::error::ClientError;
use crate::options::ClientOptions;
use crate::raw::RawConnection;
use std::fmt;
use std::future::Future;
use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStdin};
use tokio::sync::Mutex;
use tokio::time::Instant;

/// How often to look for the local end of a new forward.
const SOCKET_POLL: Duration = Duration::from_millis(10);

/// How long the local end may take to appear once the other side answered
/// (ssh binds it before it runs the remote command, so this is slack).
const SOCKET_GRACE: Duration = Duration::from_secs(2);

/// A link to the host of a user on another machine, through OpenSSH.
///
/// The link runs `ssh -L LOCAL:REMOTE DEST panehost up --hold`: the local
/// end `LOCAL` is a socket in a new directory private to this user (mode
/// 0700), served by the ssh process, which runs as this user; `REMOTE` is
/// the host's socket on the other machine, which its own `panehost up`
/// names (starting the host there when none answers). Every connection is
/// then an ordinary one, with the ordinary checks: the local directory is
/// private and the process listening is this user's (ssh), and on the
/// other side the host checks that what connects (sshd's session, as the
/// user ssh signed in as) is its own user.
///
/// The first connection also runs `ssh DEST panehost up` once to learn
/// the remote socket's path. A connection that fails through the forward
/// (ssh was killed, the network dropped, the remote host went away) makes
/// the link end that ssh and open a new one, whose `up` starts the remote
/// host again if it must: a dropped link is a dropped connection, and a
/// [`crate::PaneFollower`] resumes across it exactly.
///
/// The ssh process ends with the link (dropped, or [`RemoteLink::close`]),
/// and if this process dies first it ends anyway: its standard input, which
/// the remote `up --hold` reads, closes.
pub struct RemoteLink {
    target: RemoteTarget,
    state: Mutex<LinkState>,
}

#[derive(Default)]
struct LinkState {
    host: Option<RemoteHost>,
    forward: Option<Forward>,
    generation: u64,
}

/// One running `ssh -L`.
struct Forward {
    child: Child,
    generation: u64,
    socket: PathBuf,
    pid: Option<u32>,
    /// What ssh said on standard error.
    tail: Arc<StderrTail>,
    /// Held so that the remote `up --hold` runs as long as the forward.
    _stdin: ChildStdin,
    /// The private directory of the local end; removed when dropped.
    _dir: tempfile::TempDir,
}

impl fmt::Debug for RemoteLink {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RemoteLink").field("destination", &self.target.destination()).finish_non_exhaustive()
    }
}

impl RemoteLink {
    /// A link to `target`; nothing runs until the first connection.
    pub fn new(target: RemoteTarget) -> RemoteLink {
        RemoteLink { target, state: Mutex::new(LinkState::default()) }
    }

    /// Where the link goes.
    pub fn target(&self) -> &RemoteTarget {
        &self.target
    }

    /// Runs `panehost up` on the other machine (starting its host there
    /// when none answers) and returns what it says: the socket, the user's
    /// uid and the host's pid there.
    ///
    /// # Errors
    /// [`ClientError::Remote`]: ssh is missing, cannot reach the machine or
    /// sign in, refuses its host key, or the other side's `panehost` is
    /// missing, too old or cannot start its host.
    pub async fn remote_host(&self) -> Result<RemoteHost, ClientError> {
        let host = ssh::up_once(&self.target).await?;
        self.state.lock().await.host = Some(host.clone());
        Ok(host)
    }

    /// Connects to the remote host through the forward, opening the forward
    /// (and starting the remote host) when needed.
    ///
    /// # Errors
    /// As [`RemoteLink::remote_host`] and [`Client::connect`]; a
    /// [`ClientError::Refused`] with `PEER_REFUSED` when the remote host
    /// serves another user than the one ssh signs in as.
    pub async fn connect(&self, options: &ClientOptions) -> Result<Client, ClientError> {
        self.connect_with(|socket| async move { Client::connect(&socket, options).await }).await
    }

    /// Like [`RemoteLink::connect`], for a connection that passes frames
    /// through.
    ///
    /// # Errors
    /// As [`RemoteLink::connect`].
    pub async fn connect_raw(&self, options: &ClientOptions) -> Result<RawConnection, ClientError> {
        self.connect_with(|socket| async move { RawConnection::connect(&socket, options).await }).await
    }

    /// A [`Connector`] that connects through this link, for a
    /// [`crate::PaneFollower`] or anything else that reconnects.
    pub fn connector(self: &Arc<Self>, options: ClientOptions) -> Connector {
        let link = Arc::clone(self);
        let options = Arc::new(options);
        let description = format!("host of {} (through ssh)", self.target.destination());
        Connector::from_fn(description, move || {
            let link = Arc::clone(&link);
            let options = Arc::clone(&options);
            async move { link.connect(&options).await }
        })
    }

    /// The process id of the running ssh forward, if one runs.
    pub async fn ssh_pid(&self) -> Option<u32> {
        let mut state = self.state.lock().await;
        let forward = state.forward.as_mut()?;
        if forward.has_exited() {
            return None;
        }
        forward.pid
    }

    /// Ends the forward now (connections through it end); the next
    /// connection opens a new one.
    pub async fn close(&self) {
        let forward = self.state.lock().await.forward.take();
        if let Some(forward) = forward {
            forward.end().await;
        }
    }

    /// Runs `panehost ARGS` on the other machine and returns its exit
    /// status, standard output and standard error (each at most 64 KiB).
    /// `args` must be plain words (checked in debug builds).
    #[cfg(feature = "cli")]
    pub(crate) async fn run_remote(&self, args: &[&str]) -> Result<(Option<i32>, String, String), ClientError> {
        let mut command = ssh::base_command(&self.target);
        command
            .arg("-n")
            .arg("--")
            .arg(self.target.destination())
            .arg(ssh::remote_command(&self.target, args))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|error| ssh::spawn_failure(&self.target, &error))?;
        let limit = 64 * 1024;
        let (mut stdout, mut stderr) =
            (child.stdout.take().expect("piped").take(limit), child.stderr.take().expect("piped").take(limit));
        let (mut out, mut err) = (Vec::new(), Vec::new());
        let _ = tokio::join!(stdout.read_to_end(&mut out), stderr.read_to_end(&mut err));
        drop((stdout, stderr));
        let status = child.wait().await.map_err(ClientError::Io)?;
        let (out, err) = (String::from_utf8_lossy(&out).into_owned(), String::from_utf8_lossy(&err).into_owned());
        if status.code() == Some(255) || status.code() == Some(127) || status.code() == Some(126) {
            return Err(ssh::failure(&self.target, Some(status), &err, "while running panehost there"));
        }
        Ok((status.code(), out, err))
    }

    /// One attempt through the current forward; when that fails as a lost
    /// link would, a second through a new forward.
    async fn connect_with<T, F, Fut>(&self, connect: F) -> Result<T, ClientError>
    where
        F: Fn(PathBuf) -> Fut,
        Fut: Future<Output = Result<T, ClientError>>,
    {
        let (socket, generation) = self.forward(None).await?;
        match connect(socket).await {
            Err(error) if through_a_lost_link(&error) => {
                tracing::info!(
                    %error,
                    destination = self.target.destination(),
                    "the connection through ssh failed; opening a new link"
                );
                let (socket, generation) = self.forward(Some(generation)).await?;
                match connect(socket).await {
                    Err(error) if through_a_lost_link(&error) => Err(self.diagnose(generation, error).await),
                    other => other,
                }
            }
            other => other,
        }
    }

    /// A connection failed through a new forward too: when ssh says why
    /// (sshd refused to connect the channel), say that instead.
    async fn diagnose(&self, generation: u64, error: ClientError) -> ClientError {
        // ssh writes its complaint as the channel fails; give it a moment.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let state = self.state.lock().await;
        let Some(forward) = state.forward.as_ref().filter(|forward| forward.generation == generation) else {
            return error;
        };
        let said = forward.tail.text();
        if !said.contains("open failed") {
            return error;
        }
        ClientError::Remote {
            destination: self.target.destination().to_owned(),
            message: format!(
                "the other side would not connect the forwarded socket: {} (its sshd must allow it: \
                 AllowStreamLocalForwarding yes or local, AllowTcpForwarding yes or local, no DisableForwarding, \
                 and no restrict or no-port-forwarding on the key)",
                said.replace('\n', "; ")
            ),
            transient: false,
        }
    }

    /// The local end of a running forward, and its generation. `failed`
    /// names a generation a connection failed through: it is replaced
    /// unless another caller replaced it already.
    async fn forward(&self, failed: Option<u64>) -> Result<(PathBuf, u64), ClientError> {
        let mut state = self.state.lock().await;
        if let Some(forward) = state.forward.as_mut() {
            if failed != Some(forward.generation) && !forward.has_exited() {
                return Ok((forward.socket.clone(), forward.generation));
            }
        }
        if let Some(old) = state.forward.take() {
            old.end().await;
        }
        let host = match &state.host {
            Some(host) => host.clone(),
            None => ssh::up_once(&self.target).await?,
        };
        state.generation += 1;
        let (forward, announced) = Forward::open(&self.target, &host.socket, state.generation).await?;
        let forward = if announced.socket == host.socket {
            forward
        } else {
            // The host there moved to another socket since it was asked:
            // forward to the one it names now.
            tracing::info!(from = %host.socket, to = %announced.socket, "the remote host's socket moved");
            forward.end().await;
            state.generation += 1;
            let (forward, again) = Forward::open(&self.target, &announced.socket, state.generation).await?;
            if again.socket != announced.socket {
                forward.end().await;
                return Err(ClientError::Remote {
                    destination: self.target.destination().to_owned(),
                    message: format!("the host there keeps moving ({} then {})", announced.socket, again.socket),
                    transient: true,
                });
            }
            forward
        };
        let result = (forward.socket.clone(), forward.generation);
        state.host = Some(announced);
        state.forward = Some(forward);
        Ok(result)
    }
}

/// A failure a new forward may cure: the local end refused or vanished
/// (ssh died), the connection closed at once (ssh could not reach the
/// remote socket: the host there is gone), or it broke or timed out.
fn through_a_lost_link(error: &ClientError) -> bool {
    matches!(
        error,
        ClientError::Connect { .. } | ClientError::ConnectionClosed | ClientError::Io(_) | ClientError::Timeout { .. }
    )
}

impl Forward {
    /// Starts `ssh -L LOCAL:REMOTE DEST panehost up --hold` and waits until
    /// the other side has answered (its host runs) and the local end is
    /// there. Returns the forward and what the other side answered.
    async fn open(target: &RemoteTarget, remote: &str, generation: u64) -> Result<(Forward, RemoteHost), ClientError> {
        check_socket_path(remote).map_err(|problem| ClientError::Remote {
            destination: target.destination().to_owned(),
            message: format!("the host's socket there, {remote:?}, {problem}"),
            transient: false,
        })?;
        let dir = private_forward_dir(target)?;
        let socket = dir.path().join(panehost_ipc::socket_path::SOCKET_FILE_NAME);
        let local = socket.to_string_lossy().into_owned();
        check_socket_path(&local).map_err(|problem| ClientError::Remote {
            destination: target.destination().to_owned(),
            message: format!(
                "the local end of the forward, {local:?}, {problem}; choose another directory for it \
                 (XDG_RUNTIME_DIR, or the directory of --socket)"
            ),
            transient: false,
        })?;
        let mut command = ssh::base_command(target);
        command
            .args(["-o", "ExitOnForwardFailure=yes", "-o", "StreamLocalBindUnlink=yes"])
            .arg("-L")
            .arg(format!("{local}:{remote}"))
            .arg("--")
            .arg(target.destination())
            // `exec`: the remote shell gives way to panehost, one process
            // less on the other side for as long as the link lasts.
            .arg(format!("exec {}", ssh::remote_command(target, &["up", "--hold"])))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|error| ssh::spawn_failure(target, &error))?;
        let pid = child.id();
        tracing::info!(pid, destination = target.destination(), local = %local, remote, "started an ssh forward");
        let stdin = child.stdin.take().expect("piped");
        let stdout = child.stdout.take().expect("piped");
        let tail = StderrTail::collect(child.stderr.take().expect("piped"));
        let deadline = Instant::now() + target.ready_timeout_value();

        let mut lines = BufReader::new(stdout);
        let answer = tokio::time::timeout_at(deadline, async {
            let mut line = Vec::new();
            for _ in 0..64 {
                line.clear();
                match (&mut lines).take(4096).read_until(b'\n', &mut line).await {
                    Ok(0) | Err(_) => return None,
                    Ok(_) => {
                        if let Some(host) = RemoteHost::parse_line(&String::from_utf8_lossy(&line)) {
                            return Some(host);
                        }
                    }
                }
            }
            None
        })
        .await;
        let failed = |child: Child, status: Option<std::process::ExitStatus>, tail: &StderrTail| {
            drop(child);
            ssh::failure(target, status, &tail.text(), "while opening the link")
        };
        let host = match answer {
            Ok(Some(host)) => host,
            Ok(None) => {
                // ssh ended (or the other side said nothing of use).
                let status = tokio::time::timeout_at(deadline, child.wait()).await.ok().and_then(Result::ok);
                tokio::task::yield_now().await;
                return Err(match status {
                    Some(status) if status.success() => ClientError::Remote {
                        destination: target.destination().to_owned(),
                        message: format!(
                            "`{} up --hold` ended without naming its socket",
                            target.remote_program_name()
                        ),
                        transient: false,
                    },
                    status => failed(child, status, &tail),
                });
            }
            Err(_) => {
                return Err(ClientError::Remote {
                    destination: target.destination().to_owned(),
                    message: format!(
                        "no answer within {} s while opening the link{}",
                        target.ready_timeout_value().as_secs(),
                        match tail.text() {
                            text if text.is_empty() => String::new(),
                            text => format!(": {}", text.replace('\n', "; ")),
                        }
                    ),
                    transient: true,
                })
            }
        };
        ssh::check_answer(target, &host)?;
        // Whatever else the other side prints is read and dropped, so that
        // it never blocks on a full pipe.
        tokio::spawn(async move {
            let _ = tokio::io::copy(&mut lines, &mut tokio::io::sink()).await;
        });
        let mut forward = Forward { child, generation, socket, pid, tail: Arc::clone(&tail), _stdin: stdin, _dir: dir };
        // ssh listens on the local end before it runs the remote command,
        // so it is there by now; a little slack for slow file systems.
        let grace = Instant::now() + SOCKET_GRACE;
        while !forward.socket.exists() {
            if forward.has_exited() || Instant::now() >= grace {
                let status = forward.child.try_wait().ok().flatten();
                return Err(ssh::failure(target, status, &tail.text(), "while opening the local end of the link"));
            }
            tokio::time::sleep(SOCKET_POLL).await;
        }
        Ok((forward, host))
    }

    fn has_exited(&mut self) -> bool {
        !matches!(self.child.try_wait(), Ok(None))
    }

    /// Ends ssh and reaps it; the directory goes with `self`.
    async fn end(mut self) {
        tracing::debug!(pid = self.pid, "ending an ssh forward");
        let _ = self.child.start_kill();
        let _ = self.child.wait().await;
    }
}

/// A new directory private to this user for the local end of a forward,
/// inside the target's local directory or the one of this user's own
/// socket, which is created (mode 0700) when missing and must be private.
fn private_forward_dir(target: &RemoteTarget) -> Result<tempfile::TempDir, ClientError> {
    let uid = rustix::process::geteuid().as_raw();
    let base: PathBuf = match target.local_dir_path() {
        Some(dir) => dir.to_owned(),
        None => {
            let socket = panehost_ipc::socket_path::default_socket_path(uid);
            socket.parent().map(Path::to_owned).unwrap_or_else(std::env::temp_dir)
        }
    };
    let local_error = |message: String| ClientError::Remote {
        destination: target.destination().to_owned(),
        message: format!("the local end of the link: {message}"),
        transient: false,
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&base)
        .map_err(|error| local_error(format!("cannot create {}: {error}", base.display())))?;
    panehost_ipc::socket_path::check_private_dir(&base, uid).map_err(|problem| local_error(problem.to_string()))?;
    remove_abandoned_forward_dirs(&base);
    let dir = tempfile::Builder::new()
        .prefix("ssh-")
        .permissions(std::os::unix::fs::PermissionsExt::from_mode(0o700))
        .tempdir_in(&base)
        .map_err(|error| local_error(format!("cannot create a directory in {}: {error}", base.display())))?;
    panehost_ipc::socket_path::check_private_dir(dir.path(), uid)
        .map_err(|problem| local_error(problem.to_string()))?;
    Ok(dir)
}

/// How old the directory of a forward that nothing serves must be before
/// it is taken for abandoned (one being made is younger).
const ABANDONED_AFTER: Duration = Duration::from_secs(60);

/// Removes the directories of forwards whose process ended without
/// removing them (it was killed): older than [`ABANDONED_AFTER`], with no
/// socket in them or one that nothing listens on (as the kernel's list of
/// listening sockets says: connecting would open a channel to the other
/// machine). At most 64 are looked at; nothing is removed when the list
/// cannot be read.
fn remove_abandoned_forward_dirs(base: &Path) {
    let Ok(sockets) = std::fs::read_to_string("/proc/net/unix") else { return };
    let listening: std::collections::HashSet<&str> = sockets
        .lines()
        .skip(1)
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            // Num RefCount Protocol Flags Type St Inode Path; 00010000 is
            // a listening socket.
            (fields.len() >= 8 && fields[3] == "00010000").then(|| fields[7])
        })
        .collect();
    let Ok(entries) = std::fs::read_dir(base) else { return };
    for entry in entries.flatten().take(64) {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with("ssh-") {
            continue;
        }
        let dir = entry.path();
        let old = std::fs::symlink_metadata(&dir)
            .ok()
            .filter(std::fs::Metadata::is_dir)
            .and_then(|meta| meta.modified().ok())
            .and_then(|modified| modified.elapsed().ok())
            .is_some_and(|age| age > ABANDONED_AFTER);
        if !old {
            continue;
        }
        let socket = dir.join(panehost_ipc::socket_path::SOCKET_FILE_NAME);
        if !listening.contains(socket.to_string_lossy().as_ref()) {
            tracing::debug!(dir = %dir.display(), "removing the directory of an abandoned ssh forward");
            let _ = std::fs::remove_file(&socket);
            let _ = std::fs::remove_dir(&dir);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_failures_a_new_link_may_cure_open_one() {
        assert!(through_a_lost_link(&ClientError::ConnectionClosed));
        assert!(through_a_lost_link(&ClientError::Connect {
            path: PathBuf::from("/x"),
            source: std::io::Error::from(std::io::ErrorKind::ConnectionRefused)
        }));
        assert!(!through_a_lost_link(&ClientError::Refused {
            code: "PEER_REFUSED".into(),
            message: String::new(),
            protocol: 1
        }));
        assert!(!through_a_lost_link(&ClientError::UntrustedHost { path: PathBuf::from("/x"), reason: String::new() }));
    }

    #[tokio::test]
    async fn the_local_end_lives_in_a_new_private_directory() {
        let base = tempfile::tempdir().unwrap();
        let target = RemoteTarget::new("m").unwrap().local_dir(base.path().join("panehost"));
        let dir = private_forward_dir(&target).unwrap();
        let uid = rustix::process::geteuid().as_raw();
        panehost_ipc::socket_path::check_private_dir(dir.path(), uid).unwrap();
        panehost_ipc::socket_path::check_private_dir(&base.path().join("panehost"), uid).unwrap();
        // A base that is open to others is refused, not fixed.
        let open = base.path().join("open");
        std::fs::create_dir(&open).unwrap();
        std::fs::set_permissions(&open, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
        let error = private_forward_dir(&RemoteTarget::new("m").unwrap().local_dir(&open)).unwrap_err();
        assert!(error.to_string().contains("it must be 0700"), "{error}");
    }

    #[test]
    fn abandoned_forward_directories_are_removed_and_young_or_served_ones_kept() {
        let base = tempfile::tempdir().unwrap();
        let old = std::time::SystemTime::now() - ABANDONED_AFTER * 2;
        let make = |name: &str, age: std::time::SystemTime| {
            let dir = base.path().join(name);
            std::fs::create_dir(&dir).unwrap();
            std::fs::File::open(&dir).unwrap().set_modified(age).unwrap();
            dir
        };
        let abandoned = make("ssh-gone", old);
        let stale_socket = make("ssh-stale", old);
        drop(std::os::unix::net::UnixListener::bind(stale_socket.join("host.sock")).unwrap());
        std::fs::File::open(&stale_socket).unwrap().set_modified(old).unwrap();
        let served = make("ssh-served", old);
        let _listener = std::os::unix::net::UnixListener::bind(served.join("host.sock")).unwrap();
        std::fs::File::open(&served).unwrap().set_modified(old).unwrap();
        let young = make("ssh-young", std::time::SystemTime::now());
        let other = make("keep-me", old);
        remove_abandoned_forward_dirs(base.path());
        assert!(!abandoned.exists() && !stale_socket.exists());
        assert!(served.exists() && young.exists() && other.exists());
    }

    #[tokio::test]
    async fn a_missing_ssh_is_named() {
        let target = RemoteTarget::new("m").unwrap().ssh_program("/nonexistent/ssh").unwrap();
        let link = RemoteLink::new(target);
        let error = link.connect(&ClientOptions::default()).await.unwrap_err();
        assert!(error.to_string().contains("cannot run `/nonexistent/ssh`: not found"), "{error}");
        assert!(!error.is_connection_lost());
    }
}
