//! One host per state directory: the lock a host takes before it reads
//! any pane record and holds for its life.
//!
//! Two hosts on one state directory would each take the panes back from
//! their keepers, undo each other's starts and delete each other's
//! records; two shells that work out different sockets (one with
//! `XDG_RUNTIME_DIR`, one without) share the default state directory, so
//! this happens without anyone meaning it. The lock is an `flock` on
//! `<state dir>/host.lock`: the kernel lets it go when the host's process
//! ends, however it ends, so a killed host never leaves a stale lock. The
//! file's contents name the host that holds it ([`HostClaim`]), for the
//! second host's error and for clients (`panehost_ipc::host_claim`).
//!
//! The descriptor is close-on-exec: no keeper or pane process inherits the
//! lock, so it ends with the host.

use panehost_ipc::host_claim::{HostClaim, HOST_LOCK_FILE_NAME};
use rustix::fs::{flock, FlockOperation};
use std::fs::File;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Why a host cannot have the state directory.
#[derive(Debug, thiserror::Error)]
pub enum HostLockError {
    /// Another host holds it.
    #[error(
        "another host (pid {pid}) already uses the state directory {state_dir}; it listens on {socket} \
         (use that socket, or `panehost --socket {socket} stop` to end it)"
    )]
    Held {
        /// The state directory.
        state_dir: String,
        /// The running host's pid.
        pid: u32,
        /// Where it listens.
        socket: String,
    },
    /// Another host holds it and has not yet said which it is (it is
    /// starting, or wrote nothing readable).
    #[error("another host already uses the state directory {state_dir} (it has not said where it listens)")]
    HeldByUnknown {
        /// The state directory.
        state_dir: String,
    },
    /// The lock file could not be opened, locked or written.
    #[error("{path}: {source}")]
    Io {
        /// The lock file.
        path: String,
        /// The failure.
        source: std::io::Error,
    },
}

/// The state directory's lock, held until dropped.
#[derive(Debug)]
pub struct HostLock {
    /// Keeps the lock: closing the descriptor lets it go.
    _file: File,
    path: PathBuf,
}

impl HostLock {
    /// Takes `state_dir`'s lock for this process, listening on `socket`,
    /// without waiting: a host that holds it already makes this fail at
    /// once.
    ///
    /// # Errors
    /// [`HostLockError::Held`] naming the running host; `Io` when the file
    /// cannot be opened or written.
    pub fn acquire(state_dir: &Path, socket: &Path) -> Result<HostLock, HostLockError> {
        let path = state_dir.join(HOST_LOCK_FILE_NAME);
        let io = |source: std::io::Error| HostLockError::Io { path: path.display().to_string(), source };
        // Not truncated on open: the contents are the holder's until the
        // lock is ours. No link is followed.
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .mode(0o600)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(&path)
            .map_err(io)?;
        match lock_unless_held(&file, &path) {
            Ok(()) => {}
            Err(rustix::io::Errno::WOULDBLOCK) => {
                let state_dir = state_dir.display().to_string();
                return Err(match HostClaim::read(path.parent().unwrap_or(Path::new("."))) {
                    Some(claim) => {
                        HostLockError::Held { state_dir, pid: claim.pid, socket: claim.socket.display().to_string() }
                    }
                    None => HostLockError::HeldByUnknown { state_dir },
                });
            }
            Err(err) => return Err(io(err.into())),
        }
        let claim = HostClaim { pid: std::process::id(), socket: socket.to_path_buf() };
        file.set_len(0).map_err(io)?;
        file.write_all(claim.to_line().as_bytes()).map_err(io)?;
        Ok(HostLock { _file: file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// How long a host waits for the lock while its holder is dying (killed,
/// and not gone yet): a host started right after `kill -9` of the last
/// one takes over, rather than failing because the kernel has not closed
/// the dead host's files yet.
const DYING_HOLDER_WAIT: std::time::Duration = std::time::Duration::from_secs(2);

/// Takes the lock at once; while the host that holds it is dying, waits
/// for it to let go (at most [`DYING_HOLDER_WAIT`]). `WOULDBLOCK` when a
/// live host holds it.
fn lock_unless_held(file: &File, path: &Path) -> rustix::io::Result<()> {
    let deadline = std::time::Instant::now() + DYING_HOLDER_WAIT;
    loop {
        match flock(file, FlockOperation::NonBlockingLockExclusive) {
            Err(rustix::io::Errno::WOULDBLOCK) => {
                let holder = HostClaim::read(path.parent().unwrap_or(Path::new("."))).map(|claim| claim.pid);
                if !holder.is_some_and(dying) || std::time::Instant::now() >= deadline {
                    return Err(rustix::io::Errno::WOULDBLOCK);
                }
                std::thread::sleep(std::time::Duration::from_millis(10));
            }
            done => return done,
        }
    }
}

/// Whether process `pid` is on its way out: gone, a zombie, or with a
/// SIGKILL pending (which nothing can stop).
fn dying(pid: u32) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else { return true };
    let field = |name: &str| status.lines().find_map(|line| line.strip_prefix(name)).map(str::trim);
    let state = field("State:").and_then(|state| state.chars().next());
    let kill_pending = ["SigPnd:", "ShdPnd:"].iter().any(|name| {
        field(name).and_then(|mask| u64::from_str_radix(mask, 16).ok()).is_some_and(|mask| mask & SIGKILL_BIT != 0)
    });
    matches!(state, Some('Z' | 'X')) || kill_pending
}

/// SIGKILL (9) in a `/proc/<pid>/status` signal mask.
const SIGKILL_BIT: u64 = 1 << (9 - 1);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_killed_or_gone_process_is_dying_a_running_one_is_not() {
        let mut child = std::process::Command::new("sleep").arg("1000").spawn().unwrap();
        assert!(!dying(child.id()));
        child.kill().unwrap();
        // Not reaped yet: a zombie, or on its way to one.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        while !dying(child.id()) {
            assert!(std::time::Instant::now() < deadline, "a killed process is seen dying");
            std::thread::yield_now();
        }
        child.wait().unwrap();
        assert!(dying(child.id()), "gone");
        assert!(!dying(std::process::id()));
    }

    #[test]
    fn a_second_holder_is_refused_with_the_first_ones_socket_until_it_lets_go() {
        let dir = tempfile::tempdir().unwrap();
        let first = HostLock::acquire(dir.path(), Path::new("/run/a/host.sock")).unwrap();
        let claim = HostClaim::read(dir.path()).unwrap();
        assert_eq!((claim.pid, claim.socket.as_path()), (std::process::id(), Path::new("/run/a/host.sock")));
        // flock locks belong to the open file, so a second open in the
        // same process is refused as another process would be.
        let refused = HostLock::acquire(dir.path(), Path::new("/run/b/host.sock")).unwrap_err();
        assert!(matches!(&refused, HostLockError::Held { socket, .. } if socket == "/run/a/host.sock"), "{refused}");
        assert_eq!(HostClaim::read(dir.path()).unwrap().socket, Path::new("/run/a/host.sock"), "left as it was");
        drop(first);
        let second = HostLock::acquire(dir.path(), Path::new("/run/b/host.sock")).unwrap();
        assert_eq!(HostClaim::read(dir.path()).unwrap().socket, Path::new("/run/b/host.sock"));
        assert!(second.path().ends_with(HOST_LOCK_FILE_NAME));
    }

    #[test]
    fn a_link_in_the_lock_files_place_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("elsewhere");
        std::os::unix::fs::symlink(&target, dir.path().join(HOST_LOCK_FILE_NAME)).unwrap();
        let refused = HostLock::acquire(dir.path(), Path::new("/run/a/host.sock")).unwrap_err();
        assert!(matches!(refused, HostLockError::Io { .. }), "{refused}");
        assert!(!target.exists());
    }
}
