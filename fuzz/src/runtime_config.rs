//! The operator's custom runtimes (config.toml): any text gives runtimes
//! and problems, never a panic.

use panehost_adapters::config::load_custom_runtimes;

/// The bytes are the file's contents (text only: the host refuses a file
/// that is not UTF-8 before it parses).
pub fn runtime_config(data: &[u8]) {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let load = load_custom_runtimes(text, &["shell", "claude", "codex"]);
    for problem in &load.problems {
        let _ = problem.to_string();
    }
    for runtime in &load.runtimes {
        assert!(!["shell", "claude", "codex"].contains(&runtime.id.as_str()), "a built-in id was taken");
    }
}
