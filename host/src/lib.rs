//! The panehost daemon.
//!
//! A per-user host that owns PTY panes and serves the protocol of
//! `panehost-ipc` on a local socket. The layers, from the socket inwards:
//! [`server`] (listener, connections, frames, dispatch, subscriptions),
//! [`handlers`] (the requests that wait: turns, `wait_for`, receipts,
//! terminal attachment), [`registry`] and [`pane`] (the model, which knows
//! no sockets), [`store`] (what is kept on disk) and [`keeper`] (the
//! process that holds the PTYs).

#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

mod blocking;
pub mod canary;
pub mod config;
pub mod contained;
pub(crate) mod control_group;
mod handlers;
mod input_wait;
pub mod jitter;
pub mod keeper;
pub mod keeper_wire;
mod limits;
mod memory_trim;
mod open_files;
pub mod pane;
mod process_stat;
mod record_salvage;
mod registry;
mod restore;
mod runtime_gate;
mod server;
pub mod store;
#[cfg(test)]
mod test_process;

pub use server::daemon::{run, HostConfig};
