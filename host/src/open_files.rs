//! The host's open-file limit.
//!
//! Every pane costs the host a few descriptors (the PTY master, the
//! keeper's control connection, a pidfd) and every client one more, so the
//! usual soft limit of 1,024 ends a host at about five hundred panes. At
//! start the host raises its soft limit to the hard limit, and hands the
//! limit it found to the processes it starts (keepers, and through them the
//! panes' programs): some programs still use `select()`, which breaks on
//! descriptors above 1,023, so they keep the limit a login would give them.

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
use std::sync::OnceLock;

/// The soft limit the host started with, before [`raise`].
static INHERITED_SOFT_LIMIT: OnceLock<Option<u64>> = OnceLock::new();

/// What [`raise`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Raised {
    /// The soft limit found (`None`: unlimited).
    pub from: Option<u64>,
    /// The soft limit now in force.
    pub to: Option<u64>,
}

/// Raises the soft open-file limit to the hard limit, remembering the one
/// found for [`restore_in_child`].
///
/// # Errors
/// Fails when the kernel refuses the new limit; the old one stays.
pub(crate) fn raise() -> rustix::io::Result<Raised> {
    let limit = getrlimit(Resource::Nofile);
    let _ = INHERITED_SOFT_LIMIT.set(limit.current);
    if limit.current == limit.maximum {
        return Ok(Raised { from: limit.current, to: limit.current });
    }
    setrlimit(Resource::Nofile, Rlimit { current: limit.maximum, maximum: limit.maximum })?;
    Ok(Raised { from: limit.current, to: limit.maximum })
}

/// Puts back the soft limit the host started with. Meant for a child
/// between fork and exec: it makes only the async-signal-safe
/// `getrlimit`/`setrlimit` calls and allocates nothing.
///
/// # Errors
/// Fails when the kernel refuses the limit.
pub(crate) fn restore_in_child() -> std::io::Result<()> {
    let Some(&Some(soft)) = INHERITED_SOFT_LIMIT.get() else { return Ok(()) };
    let limit = getrlimit(Resource::Nofile);
    if limit.current == Some(soft) {
        return Ok(());
    }
    setrlimit(Resource::Nofile, Rlimit { current: Some(soft), maximum: limit.maximum })?;
    Ok(())
}
