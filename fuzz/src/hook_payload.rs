//! What a CLI's hook or notify program reports (`panehost notify`'s
//! payload, from inside a pane): read for every kind of hook, never a
//! panic.

use panehost_adapters::completion::HookInjection;
use panehost_adapters::notify_payload::{notification, reported_turn, usage};
use std::sync::OnceLock;

/// Every built-in runtime's hooks, whose payload readers are fuzzed.
static INJECTIONS: OnceLock<Vec<HookInjection>> = OnceLock::new();

/// The first byte picks the hook; the rest is the payload.
pub fn hook_payload(data: &[u8]) {
    let Some((&which, payload)) = data.split_first() else { return };
    let payload = String::from_utf8_lossy(payload);
    let _ = notification(&payload);
    let measured = usage(&payload);
    assert!(["measured", "estimated", "unavailable"].contains(&measured.kind.as_str()), "{}", measured.kind);
    let injections = INJECTIONS.get_or_init(|| {
        panehost_adapters::runtimes::built_in().into_iter().filter_map(|descriptor| descriptor.hook_injection).collect()
    });
    let injection = injections.get(usize::from(which) % (injections.len() + 1)).copied();
    let _ = reported_turn(injection, &payload);
}
