//! The keeper's wire, written once for both of its ends: the host's side
//! (`pane/keeper.rs`, `pane/exit.rs`, `restore.rs`) and the keeper's
//! (`keeper/`). The keeper's contract, in prose, is the documentation of
//! `keeper/mod.rs`; this module is that contract in code.
//!
//! - On the keeper's stdin, [`pane_request`]s: a 4-byte big-endian length
//!   and that many bytes of NUL-ended words.
//! - On its stdout, one [`answer`] line per request: `ready <pid>` or
//!   `error <message>`.
//! - On each pane's connection, [`pane_lines`]: the keeper's greeting (with
//!   the master fd) and `exited` line, and the host's `release`.

pub mod answer;
pub mod pane_lines;
pub mod pane_request;
