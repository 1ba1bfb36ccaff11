//! An async client for panehost, the per-user host of pseudo-terminal panes.
//!
//! - [`Client`]: one connection; typed methods for every operation
//!   (`start`, `send`, `interrupt`, `inspect`, `list`, `resize`, `close`,
//!   `runtimes`, `subscribe`, `reconnect`) and a raw [`Client::request`].
//!   Cheap to clone and usable from many tasks.
//! - [`EventStream`]: the events of one subscription.
//! - [`PaneFollower`]: a pane's events across lost connections, resumed
//!   exactly where its caller stopped.
//! - [`connect_or_start`]: connect, starting the host first when none
//!   answers.
//! - [`RawConnection`]: a handshaken connection that passes frames through,
//!   for bridges.
//! - [`RemoteLink`]: the host of a user on another machine, through
//!   OpenSSH (see [`remote`]).
//!
//! ```no_run
//! # async fn demo() -> Result<(), panehost_client::ClientError> {
//! use panehost_client::{Client, ClientOptions};
//! use panehost_ipc::StartParams;
//!
//! let path = panehost_ipc::socket_path::default_socket_path(1000);
//! let client = Client::connect(&path, &ClientOptions::default()).await?;
//! let pane = client.start(StartParams { runtime: "shell".into(), ..Default::default() }).await?;
//! client.send_input(&pane.id, b"echo hi", true).await?;
//! let mut events = client.subscribe(&pane.id, Some(0)).await?;
//! while let Some(event) = events.next().await {
//!     println!("{event:?}");
//! }
//! # Ok(())
//! # }
//! ```
//!
//! The default build has no PTY code and no command-line parsing; the
//! `cli` feature adds the `panehost` command's client side ([`cli`]).

#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

mod autostart;
mod connection;
mod connector;
mod error;
mod follow_cursor;
mod follower;
mod open_file_limit;
mod options;
mod raw;
pub mod remote;
mod retry;
mod router;
mod subscribed_events;
mod subscription;
mod terminal_handover;
mod transport;
mod watch_stream;
mod writer;

#[cfg(feature = "cli")]
pub mod cli;

pub use autostart::{connect_or_start, connect_or_start_with, AutostartCommand, DEFAULT_READY_TIMEOUT};
pub use connection::{Client, INPUT_CHUNK_LEN};
pub use connector::Connector;
pub use error::ClientError;
pub use follow_cursor::FollowCursor;
pub use follower::{FollowItem, FollowOptions, PaneFollower};
pub use options::{ClientOptions, DEFAULT_EVENT_BUFFER, DEFAULT_HANDSHAKE_TIMEOUT, DEFAULT_REQUEST_TIMEOUT};
pub use raw::RawConnection;
pub use remote::{RemoteHost, RemoteLink, RemoteTarget, RemoteTargetError};
pub use retry::ReconnectPolicy;
pub use subscription::EventStream;
pub use terminal_handover::{TerminalAttachment, TerminalHandover, ATTACH_TERMINAL_REVISION};
pub use watch_stream::WatchStream;

/// The wire contract this client speaks, re-exported for convenience.
pub use panehost_ipc as ipc;
