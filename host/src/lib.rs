//! The panehost daemon.
//!
//! A per-user host that owns PTY panes and serves the protocol of
//! `panehost-ipc` on a local socket. The layers, from the socket inwards:
//! [`daemon`] (listener), [`connection`] (peer check, handshake, frames),
//! [`dispatch`] (one handler per request), [`subscription`] (a cursor into
//! a pane's output) and [`watch`] (every pane's news), [`registry`] and
//! [`pane`] (the model, which knows no sockets).

#![warn(missing_debug_implementations, unreachable_pub)]

pub mod atomic_file;
pub mod canary;
pub mod config;
pub mod connection;
pub mod contained;
pub mod daemon;
pub mod dispatch;
pub mod host_state;
pub mod keeper;
pub mod limits;
pub mod memory_trim;
pub mod open_files;
pub mod outbox;
pub mod pane;
pub mod passed_descriptors;
pub mod process_stat;
pub mod receipt_handler;
pub mod receipt_store;
pub mod records;
pub mod registry;
pub mod restore;
pub mod runtime_gate;
pub mod socket_dir;
pub mod subscription;
pub mod terminal_attach;
pub mod turn_handlers;
pub mod wait_handler;
pub mod watch;

pub use daemon::{run, HostConfig};
