//! Where the host listens, so every client finds it the same way.
//!
//! In order: an explicit path; `$PANEHOST_SOCKET`; `$XDG_RUNTIME_DIR/panehost/host.sock`;
//! `<temp dir>/panehost-<uid>/host.sock`. The directory must be owned by the
//! user and have mode 0700; the host creates it so and refuses one that is not.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// The environment variable that names the socket path.
pub const SOCKET_ENV: &str = "PANEHOST_SOCKET";

/// The socket's file name inside its directory.
pub const SOCKET_FILE_NAME: &str = "host.sock";

/// The default socket path for the user with this uid, from the environment.
pub fn default_socket_path(uid: u32) -> PathBuf {
    if let Some(path) = std::env::var_os(SOCKET_ENV).filter(|value| !value.is_empty()) {
        return PathBuf::from(path);
    }
    if let Some(runtime_dir) = std::env::var_os("XDG_RUNTIME_DIR").filter(|value| !value.is_empty()) {
        return PathBuf::from(runtime_dir).join("panehost").join(SOCKET_FILE_NAME);
    }
    std::env::temp_dir().join(format!("panehost-{uid}")).join(SOCKET_FILE_NAME)
}

/// Why a socket's directory is not private to the user: whoever owns it,
/// or can write into it, could listen on the socket in the user's place.
#[derive(Debug, thiserror::Error)]
pub enum PrivateDirError {
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
    /// The path is not a directory (a symbolic link is not followed).
    #[error("{0} is not a directory (a symbolic link is not followed)")]
    NotADirectory(String),
    /// It could not be looked at.
    #[error("{path}: {source}")]
    Io {
        /// The directory.
        path: String,
        /// The failure.
        source: std::io::Error,
    },
}

/// Checks that `dir` is a directory (not a symbolic link) owned by `uid`
/// that no one else can enter: mode 0700 or narrower. The host applies it
/// to the directories it creates and uses; clients apply it before they
/// connect, so that they never send a prompt to a socket another user
/// could have put there.
///
/// # Errors
/// A [`PrivateDirError`] naming the directory and what is wrong.
pub fn check_private_dir(dir: &Path, uid: u32) -> Result<(), PrivateDirError> {
    let display = dir.display().to_string();
    let meta =
        std::fs::symlink_metadata(dir).map_err(|source| PrivateDirError::Io { path: display.clone(), source })?;
    if !meta.is_dir() {
        return Err(PrivateDirError::NotADirectory(display));
    }
    if meta.uid() != uid {
        return Err(PrivateDirError::WrongOwner { path: display, owner: meta.uid(), uid });
    }
    let mode = meta.mode() & 0o777;
    if mode & 0o077 != 0 {
        return Err(PrivateDirError::TooOpen { path: display, mode });
    }
    Ok(())
}
