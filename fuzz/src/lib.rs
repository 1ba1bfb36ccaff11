//! What each fuzz target checks.
//!
//! Every decoder and parser that reads input from outside the host has a
//! check here: a function that takes arbitrary bytes, feeds them to the
//! parser, and panics only when a property the host relies on is broken
//! (a panic inside the parser is such a break too). The libFuzzer targets
//! in `fuzz/targets` (nightly, `cargo fuzz`) call these functions; the
//! test `tests/regressions.rs` (stable, part of the workspace's tests)
//! replays every input fuzzing found, kept under `fuzz/regressions/<target>/`.
//! docs/RELIABILITY.md says how to run a campaign and what it found.

#![warn(missing_docs, missing_debug_implementations, unreachable_pub)]

mod handshake;
mod hook_payload;
mod keeper_wire;
mod osc_cap;
mod pane_record;
mod request_frame;
mod runtime_config;
mod screen_model;
mod screen_shortcut;
mod server_message;
mod vt100_at_pane_sizes;

pub use handshake::handshake;
pub use hook_payload::hook_payload;
pub use keeper_wire::keeper_wire;
pub use osc_cap::osc_cap;
pub use pane_record::pane_record;
pub use request_frame::request_frame;
pub use runtime_config::runtime_config;
pub use screen_model::screen_model;
pub use screen_shortcut::{screen_shortcut, screen_shortcut_spared, ShortcutPair};
pub use server_message::server_message;
pub use vt100_at_pane_sizes::{vt100_at_pane_sizes, vt100_at_pane_sizes_contained};

/// A check: arbitrary bytes in, a panic when a property is broken.
pub type Check = fn(&[u8]);

/// Every target, by the name of its libFuzzer binary and of its folder of
/// regression inputs, with the check its regression inputs are replayed
/// through: the target's own, but for `vt100_at_pane_sizes`, whose inputs
/// are vt100's own bugs and are replayed through the host's contained model.
pub const TARGETS: &[(&str, Check)] = &[
    ("request_frame", request_frame),
    ("server_message", server_message),
    ("handshake", handshake),
    ("keeper_wire", keeper_wire),
    ("pane_record", pane_record),
    ("runtime_config", runtime_config),
    ("hook_payload", hook_payload),
    ("screen_model", screen_model),
    ("screen_shortcut", screen_shortcut),
    ("osc_cap", osc_cap),
    ("vt100_at_pane_sizes", vt100_at_pane_sizes_contained),
];

/// The encoding a target's first byte selects, and the rest.
fn encoding_and_rest(data: &[u8]) -> Option<(panehost_ipc::Encoding, &[u8])> {
    let (&first, rest) = data.split_first()?;
    let encoding = if first % 2 == 0 { panehost_ipc::Encoding::Json } else { panehost_ipc::Encoding::Bincode };
    Some((encoding, rest))
}
