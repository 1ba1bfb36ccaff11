//! An executable's identity: canonical path, size and SHA-256, with a cheap
//! stamp to tell quickly that the file has not been touched since.

use sha2::{Digest, Sha256};
use std::fmt::Write as _;
use std::io::{self, Read};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// Who an executable is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    /// The canonical path (links resolved).
    pub path: PathBuf,
    /// Size in bytes.
    pub size: u64,
    /// SHA-256 of the contents, lowercase hex.
    pub sha256: String,
    stamp: FileStamp,
}

/// Metadata that changes whenever a file's contents are written or the
/// file is replaced: device, inode, size and change time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct FileStamp {
    device: u64,
    inode: u64,
    size: u64,
    modified_ns: i128,
    changed_ns: i128,
}

impl FileStamp {
    pub(crate) fn of(meta: &std::fs::Metadata) -> FileStamp {
        FileStamp {
            device: meta.dev(),
            inode: meta.ino(),
            size: meta.size(),
            modified_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
            changed_ns: i128::from(meta.ctime()) * 1_000_000_000 + i128::from(meta.ctime_nsec()),
        }
    }
}

/// How an executable differs from its recorded identity.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IdentityChange {
    /// The path now resolves to another file.
    #[error("{recorded} now resolves to {now}")]
    Path {
        /// The recorded canonical path.
        recorded: String,
        /// Where it resolves now.
        now: String,
    },
    /// The contents differ.
    #[error("SHA-256 was {recorded}, is {now}")]
    Contents {
        /// The recorded digest.
        recorded: String,
        /// The digest now.
        now: String,
    },
    /// The installed package under it changed (an upgrade in place that
    /// left the launcher as it was).
    #[error("its installed package changed: {0}")]
    Package(String),
    /// It cannot be read any more.
    #[error("cannot read it: {0}")]
    Unreadable(String),
}

impl Identity {
    /// Reads and hashes the executable at `path`.
    ///
    /// # Errors
    /// Fails when the file cannot be resolved or read.
    pub fn of(path: &Path) -> io::Result<Identity> {
        let canonical = std::fs::canonicalize(path)?;
        let mut file = std::fs::File::open(&canonical)?;
        let before = FileStamp::of(&file.metadata()?);
        let sha256 = sha256_file(&mut file)?;
        Ok(Identity { path: canonical, size: before.size, sha256, stamp: before })
    }

    /// Checks that `path` is still this executable. When the file's stamp
    /// is unchanged the contents cannot have changed, and nothing is hashed;
    /// otherwise the contents are hashed again and compared.
    ///
    /// # Errors
    /// Returns what differs.
    pub fn verify(&self, path: &Path) -> Result<(), IdentityChange> {
        let canonical = std::fs::canonicalize(path).map_err(|err| IdentityChange::Unreadable(err.to_string()))?;
        if canonical != self.path {
            return Err(IdentityChange::Path {
                recorded: self.path.display().to_string(),
                now: canonical.display().to_string(),
            });
        }
        let meta = std::fs::metadata(&canonical).map_err(|err| IdentityChange::Unreadable(err.to_string()))?;
        if FileStamp::of(&meta) == self.stamp {
            return Ok(());
        }
        let now = Identity::of(&canonical).map_err(|err| IdentityChange::Unreadable(err.to_string()))?;
        if now.sha256 != self.sha256 {
            return Err(IdentityChange::Contents { recorded: self.sha256.clone(), now: now.sha256 });
        }
        Ok(())
    }
}

/// SHA-256 of what `reader` yields, lowercase hex.
pub(crate) fn sha256_file(reader: &mut impl Read) -> io::Result<String> {
    let mut hasher = Sha256::new();
    let mut buffer = vec![0u8; 256 * 1024];
    loop {
        let read = reader.read(&mut buffer)?;
        if read == 0 {
            break;
        }
        hasher.update(&buffer[..read]);
    }
    let mut hex = String::with_capacity(64);
    for byte in hasher.finalize() {
        let _ = write!(hex, "{byte:02x}");
    }
    Ok(hex)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rewritten_file_is_caught_and_an_untouched_one_passes() {
        let dir = std::env::temp_dir().join(format!("panehost-identity-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("tool");
        std::fs::write(&path, b"#!/bin/sh\necho one\n").unwrap();
        let identity = Identity::of(&path).unwrap();
        assert_eq!(identity.sha256.len(), 64);
        assert_eq!(identity.verify(&path), Ok(()));
        std::fs::write(&path, b"#!/bin/sh\necho two\n").unwrap();
        assert!(matches!(identity.verify(&path), Err(IdentityChange::Contents { .. })));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
