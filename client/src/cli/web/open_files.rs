//! The gateway's open-file limit.
//!
//! Every connection costs a descriptor, and the usual soft limit of 1,024
//! would end the gateway's accepting long before its connection caps. At
//! start it raises its soft limit to the hard limit, and sizes its caps to
//! the limit in force ([`super::bounds::Caps::for_descriptor_limit`]).

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};

/// Raises the soft open-file limit to the hard limit, and returns the soft
/// limit in force afterwards (`None`: unlimited). When the kernel refuses,
/// the limit found stays, and is returned.
pub(super) fn raise_to_hard_limit() -> Option<u64> {
    let limit = getrlimit(Resource::Nofile);
    if limit.current == limit.maximum {
        return limit.current;
    }
    match setrlimit(Resource::Nofile, Rlimit { current: limit.maximum, maximum: limit.maximum }) {
        Ok(()) => getrlimit(Resource::Nofile).current,
        Err(error) => {
            tracing::warn!(%error, soft = ?limit.current, hard = ?limit.maximum, "cannot raise the open-file limit");
            limit.current
        }
    }
}
