//! Where the host listens, so every client finds it the same way.
//!
//! In order: an explicit path; `$PANEHOST_SOCKET`; `$XDG_RUNTIME_DIR/panehost/host.sock`;
//! `<temp dir>/panehost-<uid>/host.sock`. The directory must be owned by the
//! user and have mode 0700; the host creates it so and refuses one that is not.

use std::path::PathBuf;

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
