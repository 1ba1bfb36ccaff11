//! Host settings read from the environment.

use crate::limits;
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
/// Variables earlier hosts read and this one ignores: the terminal model
/// keeps no scrollback any more (history is re-parsed from the ring).
pub const RETIRED_ENV: [&str; 2] = ["PANEHOST_SCROLLBACK_LINES", "PANEHOST_SCROLLBACK_BYTES"];

/// The retired variables that are set, for a warning.
pub fn retired_variables_set() -> Vec<&'static str> {
    RETIRED_ENV.into_iter().filter(|name| std::env::var_os(name).is_some()).collect()
}

/// How long a pane must be quiet before its terminal model sleeps, in
/// milliseconds.
pub const SCREEN_SLEEP_MS_ENV: &str = "PANEHOST_SCREEN_SLEEP_MS";

/// Pane limits: the defaults, overridden by whichever variables are set.
///
/// # Errors
/// Fails, naming the variable, when a value is not a positive integer.
pub fn pane_limits_from_env() -> anyhow::Result<PaneLimits> {
    let mut limits = PaneLimits::default();
    if let Some(value) = read(RING_BYTES_ENV)? {
        limits.ring_bytes = value;
    }
    if let Some(value) = read(SCREEN_SLEEP_MS_ENV)? {
        limits.screen_sleep_after = std::time::Duration::from_millis(value as u64);
    }
    Ok(limits)
}

/// How many panes the host holds at most.
pub const MAX_PANES_ENV: &str = "PANEHOST_MAX_PANES";
/// How many subscriptions one connection holds at most.
pub const MAX_SUBSCRIPTIONS_ENV: &str = "PANEHOST_MAX_SUBSCRIPTIONS";
/// How many bytes large answers being built or written hold at most.
pub const ANSWER_BUDGET_ENV: &str = "PANEHOST_ANSWER_BUDGET_BYTES";

/// Counts the host refuses to go beyond.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CountLimits {
    /// Panes the host holds at most (a `start` beyond it is refused).
    pub max_panes: usize,
    /// Subscriptions one connection holds at most.
    pub max_subscriptions: usize,
    /// Bytes large answers being built or written hold at most, host-wide.
    pub answer_budget_bytes: usize,
}

impl Default for CountLimits {
    fn default() -> Self {
        CountLimits {
            max_panes: limits::MAX_PANES,
            max_subscriptions: limits::MAX_SUBSCRIPTIONS_PER_CONNECTION,
            answer_budget_bytes: limits::ANSWER_BUDGET_BYTES,
        }
    }
}

/// Count limits: the defaults, overridden by whichever variables are set.
///
/// # Errors
/// Fails, naming the variable, when a value is not a positive integer.
pub fn count_limits_from_env() -> anyhow::Result<CountLimits> {
    let mut limits = CountLimits::default();
    if let Some(value) = read(MAX_PANES_ENV)? {
        limits.max_panes = value;
    }
    if let Some(value) = read(MAX_SUBSCRIPTIONS_ENV)? {
        limits.max_subscriptions = value;
    }
    if let Some(value) = read(ANSWER_BUDGET_ENV)? {
        limits.answer_budget_bytes = value;
    }
    Ok(limits)
}

/// Whether each pane gets a control group of its own where the host may
/// make one: `on` (the default) or `off`.
pub const PANE_CGROUPS_ENV: &str = "PANEHOST_PANE_CGROUPS";

/// Whether panes get control groups of their own: yes unless the variable
/// says `off`.
///
/// # Errors
/// Fails, naming the variable, when its value is neither `on` nor `off`.
pub fn pane_cgroups_from_env() -> anyhow::Result<bool> {
    match std::env::var(PANE_CGROUPS_ENV).as_deref() {
        Err(_) | Ok("on") => Ok(true),
        Ok("off") => Ok(false),
        Ok(other) => bail!("{PANE_CGROUPS_ENV} must be on or off, not {other:?}"),
    }
}

/// How many panes one keeper process is given before the host starts the
/// next.
pub const PANES_PER_KEEPER_ENV: &str = "PANEHOST_PANES_PER_KEEPER";

/// Panes per keeper: [`limits::PANES_PER_KEEPER`], or the variable's value.
///
/// # Errors
/// Fails, naming the variable, when its value is not a whole number from 1
/// to [`limits::MAX_PANES_PER_KEEPER`].
pub fn panes_per_keeper_from_env() -> anyhow::Result<usize> {
    within_keeper_limit(read(PANES_PER_KEEPER_ENV)?.unwrap_or(limits::PANES_PER_KEEPER))
}

fn within_keeper_limit(panes: usize) -> anyhow::Result<usize> {
    if panes > limits::MAX_PANES_PER_KEEPER {
        bail!("{PANES_PER_KEEPER_ENV} must be at most {}, not {panes}", limits::MAX_PANES_PER_KEEPER);
    }
    Ok(panes)
}

fn read(name: &str) -> anyhow::Result<Option<usize>> {
    let Ok(text) = std::env::var(name) else { return Ok(None) };
    let value: usize = text.trim().parse().with_context(|| format!("{name}={text:?} is not a number"))?;
    if value == 0 {
        bail!("{name} must be at least 1");
    }
    Ok(Some(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_keeper_is_given_at_most_the_panes_its_descriptors_allow() {
        assert_eq!(within_keeper_limit(limits::MAX_PANES_PER_KEEPER).unwrap(), limits::MAX_PANES_PER_KEEPER);
        let refused = within_keeper_limit(limits::MAX_PANES_PER_KEEPER + 1).unwrap_err();
        assert_eq!(refused.to_string(), "PANEHOST_PANES_PER_KEEPER must be at most 200, not 201");
    }
}
