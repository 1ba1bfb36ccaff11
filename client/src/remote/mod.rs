//! A host on another machine, reached through OpenSSH.
//!
//! A host serves one user on one machine. To drive the host of a user on
//! another machine, a client runs `ssh` (OpenSSH's own client, with the
//! user's keys, agent, known hosts and configuration) and forwards the
//! remote host's Unix socket to a local one: see [`RemoteLink`]. Nothing
//! of the protocol changes, and neither do the checks: the local end is a
//! socket in a directory private to this user, served by this user's ssh;
//! the remote host accepts only its own user, which is whoever ssh signed
//! in as.
//!
//! ```no_run
//! # async fn demo() -> Result<(), Box<dyn std::error::Error>> {
//! use panehost_client::{ClientOptions, PaneFollower, ReconnectPolicy, RemoteLink, RemoteTarget};
//! use std::sync::Arc;
//!
//! let link = Arc::new(RemoteLink::new(RemoteTarget::new("ada@build-3")?));
//! let client = link.connect(&ClientOptions::default()).await?;
//! let panes = client.list().await?;
//! // A follower through the link resumes exactly after a dropped ssh.
//! if let Some(pane) = panes.first() {
//!     let connector = link.connector(ClientOptions::default());
//!     let mut follower =
//!         PaneFollower::with_connector(connector, ReconnectPolicy::default(), pane.id.clone(), Some(0)).await?;
//!     while let Some(item) = follower.next().await? {
//!         println!("{item:?}");
//!     }
//! }
//! # Ok(())
//! # }
//! ```

mod link;
mod ssh;
mod target;

pub use link::RemoteLink;
pub use ssh::RemoteHost;
pub use target::{
    check_socket_path, RemoteTarget, RemoteTargetError, DEFAULT_REMOTE_PROGRAM, DEFAULT_REMOTE_READY_TIMEOUT,
    DEFAULT_SSH_PROGRAM, MAX_DESTINATION_LEN, MAX_PROGRAM_LEN, MAX_SOCKET_PATH_LEN,
};
