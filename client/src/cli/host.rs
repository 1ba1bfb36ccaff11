//! `panehost host`: the daemon in the foreground.

use super::context::Context;
use super::HostLaunch;

/// Hands the resolved paths to the daemon and blocks until it ends.
pub(super) fn run(context: &Context, run_host: fn(HostLaunch) -> anyhow::Result<()>) -> anyhow::Result<()> {
    run_host(context.host_launch())
}
