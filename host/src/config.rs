//! Host settings read from the environment.

use crate::pane::PaneLimits;
use anyhow::{bail, Context};

/// The custom runtimes file.
pub const RUNTIMES_CONFIG_ENV: &str = "PANEHOST_CONFIG";

/// The custom runtimes file named by the environment, if any.
pub fn runtimes_config_from_env() -> Option<std::path::PathBuf> {
    std::env::var_os(RUNTIMES_CONFIG_ENV).filter(|value| !value.is_empty()).map(std::path::PathBuf::from)
}

/// Output bytes each pane keeps for replay.
pub const RING_BYTES_ENV: &str = "PANEHOST_RING_BYTES";
/// Scrollback lines of each pane's terminal model.
pub const SCROLLBACK_LINES_ENV: &str = "PANEHOST_SCROLLBACK_LINES";
/// Bytes the scrollback of each pane's terminal model may cost.
pub const SCROLLBACK_BYTES_ENV: &str = "PANEHOST_SCROLLBACK_BYTES";

/// Pane limits: the defaults, overridden by whichever variables are set.
///
/// # Errors
/// Fails, naming the variable, when a value is not a positive integer.
pub fn pane_limits_from_env() -> anyhow::Result<PaneLimits> {
    let mut limits = PaneLimits::default();
    if let Some(value) = read(RING_BYTES_ENV)? {
        limits.ring_bytes = value;
    }
    if let Some(value) = read(SCROLLBACK_LINES_ENV)? {
        limits.scrollback_lines = value;
    }
    if let Some(value) = read(SCROLLBACK_BYTES_ENV)? {
        limits.scrollback_bytes = value;
    }
    Ok(limits)
}

fn read(name: &str) -> anyhow::Result<Option<usize>> {
    let Ok(text) = std::env::var(name) else { return Ok(None) };
    let value: usize = text.trim().parse().with_context(|| format!("{name}={text:?} is not a number"))?;
    if value == 0 {
        bail!("{name} must be at least 1");
    }
    Ok(Some(value))
}
