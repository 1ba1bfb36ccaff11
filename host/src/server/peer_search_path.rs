//! The `PATH` of the process at the other end of a connection: the
//! directories its user searches for programs now, which may hold a CLI
//! installed after the host started.
//!
//! The host reads it from `/proc/PID/environ` (the environment the client
//! was started with), for requests that resolve a program: `start`,
//! `login`, `runtimes` and `probe_runtime`. Nothing travels on the wire and
//! every client, in any language, gets it. The peer is the user's own
//! process (the connection's peer check); the kernel lets a process read
//! another's environment only when it could trace it, so a process that
//! changed its credentials (sshd forwarding a remote client) yields none,
//! and the host's own `PATH` alone is used then, as it is when reading
//! fails for any other reason.

use super::peer_process::PeerProcess;
use std::io::Read;

/// The most bytes of a peer's environment read.
const MAX_ENVIRON_BYTES: u64 = 1024 * 1024;

/// The longest `PATH` taken; a longer one is ignored.
const MAX_PATH_BYTES: usize = 32 * 1024;

/// The peer's `PATH`, while the process that connected still runs (its
/// pid is checked again after reading: a pid reused by another process
/// in between yields nothing).
pub(crate) fn peer_search_path(peer: &PeerProcess) -> Option<String> {
    let pid = peer.pid_while_running()?;
    let mut environ = Vec::new();
    std::fs::File::open(format!("/proc/{pid}/environ")).ok()?.take(MAX_ENVIRON_BYTES).read_to_end(&mut environ).ok()?;
    peer.pid_while_running()?;
    search_path_in(&environ)
}

/// `PATH` in an environment block (`NAME=value` entries, each ended by a
/// NUL byte).
fn search_path_in(environ: &[u8]) -> Option<String> {
    let value = environ.split(|byte| *byte == 0).find_map(|entry| entry.strip_prefix(b"PATH="))?;
    if value.is_empty() || value.len() > MAX_PATH_BYTES {
        return None;
    }
    String::from_utf8(value.to_vec()).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_is_read_from_an_environment_block() {
        assert_eq!(search_path_in(b"HOME=/h\0PATH=/a:/b\0X=1\0").as_deref(), Some("/a:/b"));
        assert_eq!(search_path_in(b"MYPATH=/x\0"), None);
        assert_eq!(search_path_in(b"PATH=\0"), None);
        let long = [b"PATH=".as_slice(), &vec![b'/'; MAX_PATH_BYTES + 1]].concat();
        assert_eq!(search_path_in(&long), None);
    }

    #[test]
    fn a_running_process_gives_its_path() {
        let mut child =
            std::process::Command::new("sleep").arg("1000").env("PATH", "/from/the/client:/bin").spawn().unwrap();
        let peer = PeerProcess::of(child.id());
        assert_eq!(peer_search_path(&peer).as_deref(), Some("/from/the/client:/bin"));
        child.kill().unwrap();
        child.wait().unwrap();
        assert_eq!(peer_search_path(&peer), None, "a process that exited vouches for nothing");
    }
}
