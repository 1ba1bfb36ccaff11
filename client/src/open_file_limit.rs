//! This process's open-file limit, and the one a host it starts gets.
//!
//! `panehost web` holds a descriptor per connection, so at start it raises
//! its soft open-file limit to the hard limit. A host the gateway starts
//! later (after the one it found was stopped or died) must not inherit the
//! raised limit: the host hands the limit it finds on to its panes'
//! programs, and some of them still use `select()`, which breaks on
//! descriptors above 1,023. So the limit found before the raise is kept,
//! and a started host is given it back between fork and exec.

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
use std::sync::OnceLock;

/// The soft limit this process had before [`raise_to_hard_limit`] raised
/// it; unset when nothing was raised.
static SOFT_LIMIT_BEFORE_RAISE: OnceLock<u64> = OnceLock::new();

/// Raises the soft open-file limit to the hard limit, and returns the soft
/// limit in force afterwards (`None`: unlimited). When the kernel refuses,
/// the limit found stays, and is returned.
#[cfg(feature = "cli")]
pub(crate) fn raise_to_hard_limit() -> Option<u64> {
    let limit = getrlimit(Resource::Nofile);
    if limit.current == limit.maximum {
        return limit.current;
    }
    match setrlimit(Resource::Nofile, Rlimit { current: limit.maximum, maximum: limit.maximum }) {
        Ok(()) => {
            if let Some(soft) = limit.current {
                let _ = SOFT_LIMIT_BEFORE_RAISE.set(soft);
            }
            getrlimit(Resource::Nofile).current
        }
        Err(error) => {
            tracing::warn!(%error, soft = ?limit.current, hard = ?limit.maximum, "cannot raise the open-file limit");
            limit.current
        }
    }
}

/// Puts back the soft limit this process had before it raised its own, if
/// it did. Meant for a child between fork and exec: it makes only the
/// async-signal-safe `getrlimit`/`setrlimit` calls and allocates nothing.
///
/// # Errors
/// Fails when the kernel refuses the limit.
pub(crate) fn restore_in_child() -> std::io::Result<()> {
    let Some(&soft) = SOFT_LIMIT_BEFORE_RAISE.get() else { return Ok(()) };
    let limit = getrlimit(Resource::Nofile);
    if limit.current == Some(soft) {
        return Ok(());
    }
    setrlimit(Resource::Nofile, Rlimit { current: Some(soft), maximum: limit.maximum })?;
    Ok(())
}
