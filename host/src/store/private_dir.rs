//! Private directories: the socket's and the state directory, created
//! private and refused when they are not; directories inside the state,
//! created (or made) 0700.

use panehost_ipc::socket_path::{check_private_dir, PrivateDirError};
use std::io;
use std::path::Path;

/// Why a socket directory cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum SocketDirError {
    /// It exists and is not private to the user.
    #[error(transparent)]
    NotPrivate(#[from] PrivateDirError),
    /// It could not be created.
    #[error("{path}: {source}")]
    Io {
        /// The directory.
        path: String,
        /// The failure.
        source: io::Error,
    },
}

/// Creates `dir` and its missing parents with mode 0700, and makes `dir`
/// itself 0700 exactly (the umask may have narrowed it; an existing one
/// may have been looser). Only for directories inside the host's own
/// state directory, which [`ensure_private_dir`] has checked: anywhere
/// else an open directory must be refused, not fixed.
///
/// # Errors
/// Fails when a directory cannot be created or its mode set.
pub fn create_private_subdir(dir: &Path) -> io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
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
        create_private_subdir(dir).map_err(io_error)?;
    }
    Ok(check_private_dir(dir, uid)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    #[test]
    fn creates_a_private_directory_and_refuses_an_open_one() {
        let base = std::env::temp_dir().join(format!("panehost-socket-dir-test-{}", std::process::id()));
        let dir = base.join("nested");
        let uid = rustix::process::getuid().as_raw();
        ensure_private_dir(&dir, uid).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        assert!(matches!(
            ensure_private_dir(&dir, uid),
            Err(SocketDirError::NotPrivate(PrivateDirError::TooOpen { .. }))
        ));
        assert!(matches!(
            ensure_private_dir(&dir, uid + 1),
            Err(SocketDirError::NotPrivate(PrivateDirError::WrongOwner { .. }))
        ));
        // A symbolic link to a private directory is not followed.
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        let link = base.join("link");
        std::os::unix::fs::symlink(&dir, &link).unwrap();
        assert!(matches!(
            ensure_private_dir(&link, uid),
            Err(SocketDirError::NotPrivate(PrivateDirError::NotADirectory(_)))
        ));
        std::fs::remove_dir_all(&base).unwrap();
    }

    /// A directory inside the host's own state (whose owner the state
    /// directory's check settled) is made 0700 whatever it was.
    #[test]
    fn a_private_subdirectory_is_0700_whether_new_or_found_open() {
        let base = std::env::temp_dir().join(format!("panehost-private-subdir-test-{}", std::process::id()));
        let dir = base.join("a").join("b");
        create_private_subdir(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        assert_eq!(std::fs::metadata(base.join("a")).unwrap().mode() & 0o777, 0o700, "missing parents too");
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
        create_private_subdir(&dir).unwrap();
        assert_eq!(std::fs::metadata(&dir).unwrap().mode() & 0o777, 0o700);
        std::fs::remove_dir_all(&base).unwrap();
    }
}
