//! Which host owns a state directory, so that there is only one, and so
//! that a client finds it whatever socket path it worked out.
//!
//! A host takes an exclusive lock on `<state dir>/host.lock` before it
//! reads any pane record, and holds it for its life. While it holds it,
//! the file says which host it is: one line of JSON, `{"pid":1234,
//! "socket":"/run/user/1000/panehost/host.sock"}`. A second host on the
//! same state directory cannot take the lock and exits naming the first
//! one; a client whose socket does not answer reads the file to learn
//! where the state directory's host listens.
//!
//! The file is only a hint where no host holds the lock: a host that was
//! killed leaves it behind. A client therefore trusts it only as far as
//! the socket it names answers (and that socket's directory passes the
//! same checks as any other).

use serde::{Deserialize, Serialize};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The lock file's name inside the state directory.
pub const HOST_LOCK_FILE_NAME: &str = "host.lock";

/// The most of the lock file that is read: a pid and a path fit well
/// within it, and a larger file is not one a host wrote.
pub const MAX_HOST_CLAIM_LEN: u64 = 8 * 1024;

/// What the lock file says of the host that holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostClaim {
    /// The host's process id.
    pub pid: u32,
    /// Where the host listens.
    pub socket: PathBuf,
}

impl HostClaim {
    /// The lock file's contents: the claim as one line of JSON.
    pub fn to_line(&self) -> String {
        let mut line = serde_json::to_string(self).unwrap_or_default();
        line.push('\n');
        line
    }

    /// Reads a claim from the lock file's contents; `None` for anything
    /// that is not one line of a claim (an empty file, a file a crashed
    /// host left half-written, a file that is too long).
    pub fn parse(contents: &[u8]) -> Option<HostClaim> {
        if contents.len() as u64 > MAX_HOST_CLAIM_LEN {
            return None;
        }
        let text = std::str::from_utf8(contents).ok()?;
        let claim: HostClaim = serde_json::from_str(text.trim()).ok()?;
        (claim.pid > 0 && claim.socket.is_absolute()).then_some(claim)
    }

    /// The claim in `state_dir`'s lock file, if it holds one. A regular
    /// file only (a link is not followed), read up to
    /// [`MAX_HOST_CLAIM_LEN`].
    pub fn read(state_dir: &Path) -> Option<HostClaim> {
        let path = state_dir.join(HOST_LOCK_FILE_NAME);
        let meta = std::fs::symlink_metadata(&path).ok()?;
        if !meta.is_file() {
            return None;
        }
        let mut contents = Vec::new();
        std::fs::File::open(&path).ok()?.take(MAX_HOST_CLAIM_LEN + 1).read_to_end(&mut contents).ok()?;
        HostClaim::parse(&contents)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_claim_reads_back_from_its_line() {
        let claim = HostClaim { pid: 42, socket: PathBuf::from("/run/user/1/panehost/host.sock") };
        assert_eq!(HostClaim::parse(claim.to_line().as_bytes()), Some(claim));
    }

    #[test]
    fn anything_but_a_claim_is_none() {
        for contents in [
            &b""[..],
            b"{",
            b"{\"pid\":0,\"socket\":\"/s\"}",
            b"{\"pid\":7,\"socket\":\"relative/s\"}",
            b"{\"pid\":-1,\"socket\":\"/s\"}",
            b"{\"pid\":7}",
            b"\xff\xfe",
        ] {
            assert_eq!(HostClaim::parse(contents), None, "{:?}", String::from_utf8_lossy(contents));
        }
        let long = format!("{{\"pid\":7,\"socket\":\"/{}\"}}", "a".repeat(MAX_HOST_CLAIM_LEN as usize));
        assert_eq!(HostClaim::parse(long.as_bytes()), None, "longer than a host writes");
    }
}
