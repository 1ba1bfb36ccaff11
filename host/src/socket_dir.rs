//! The socket's directory: created private, refused when it is not.

use rustix::fs::Mode;
use std::io;
use std::os::unix::fs::{DirBuilderExt, MetadataExt, PermissionsExt};
use std::path::Path;

/// Why a socket directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SocketDirError {
    /// The directory belongs to another user.
    #[error("{path} is owned by uid {owner}, not by this user (uid {uid})")]
    WrongOwner {
        /// The directory.
        path: String,
        /// Its owner.
        owner: u32,
        /// This process's uid.
        uid: u32,
    },
    /// Other users can reach into the directory.
    #[error("{path} has mode {mode:o}; it must be 0700")]
    TooOpen {
        /// The directory.
        path: String,
        /// Its permission bits.
        mode: u32,
    },
    /// The path exists and is not a directory.
    #[error("{0} is not a directory")]
    NotADirectory(String),
    /// An operating-system call failed.
    #[error("{path}: {source}")]
    Io {
        /// The directory.
        path: String,
        /// The failure.
        source: io::Error,
    },
}

/// Makes sure `dir` exists, is owned by `uid` and has mode 0700. A missing
/// directory (and its missing parents) is created with mode 0700; an
/// existing one with other owners or looser bits is refused, never fixed.
///
/// # Errors
/// Returns a [`SocketDirError`] describing the problem.
pub fn ensure_private_dir(dir: &Path, uid: u32) -> Result<(), SocketDirError> {
    let display = dir.display().to_string();
    let io_error = |source| SocketDirError::Io { path: display.clone(), source };
    if !dir.exists() {
        std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir).map_err(io_error)?;
        // The umask may have narrowed the mode further; set it exactly.
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700)).map_err(io_error)?;
    }
    let meta = std::fs::symlink_metadata(dir).map_err(io_error)?;
    if !meta.is_dir() {
        return Err(SocketDirError::NotADirectory(display));
    }
    if meta.uid() != uid {
        return Err(SocketDirError::WrongOwner { path: display, owner: meta.uid(), uid });
    }
    let mode = meta.mode() & 0o777;
    if mode & (Mode::RWXG | Mode::RWXO).bits() != 0 {
        return Err(SocketDirError::TooOpen { path: display, mode });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_a_private_directory_and_refuses_an_open_one() {
        let base = std::env::temp_dir().join(format!("panehost-socket-dir-test-{}", std::process::id()));
        let dir = base.join("nested");
        let uid = rustix::process::getuid().as_raw();
        ensure_private_dir(&dir, uid).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(matches!(ensure_private_dir(&dir, uid), Err(SocketDirError::TooOpen { .. })));
        assert!(matches!(ensure_private_dir(&dir, uid + 1), Err(SocketDirError::WrongOwner { .. })));
        std::fs::remove_dir_all(&base).unwrap();
    }
}
