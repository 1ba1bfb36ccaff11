//! What a CLI's hook or notify program reports (`panehost notify`'s
//! payload, from inside a pane): read for every kind of hook, never a
//! panic.

use panehost_adapters::completion::HookInjection;
use panehost_adapters::notify_payload::{notification, reported_turn, usage};

/// The first byte picks the hook; the rest is the payload.
pub fn hook_payload(data: &[u8]) {
    let Some((&which, payload)) = data.split_first() else { return };
    let payload = String::from_utf8_lossy(payload);
    let _ = notification(&payload);
    let measured = usage(&payload);
    assert!(["measured", "estimated", "unavailable"].contains(&measured.kind.as_str()), "{}", measured.kind);
    let injection = HookInjection::ALL.get(usize::from(which) % (HookInjection::ALL.len() + 1)).copied();
    let _ = reported_turn(injection, &payload);
}
