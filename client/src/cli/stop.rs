//! `panehost stop [--close-panes]`: ends the host.
//!
//! By default the host exits leaving every pane with its keeper, as after a
//! crash or for an upgrade: the next host (the next command starts one)
//! takes them back. With `--close-panes` it closes every pane first.

use super::context::Context;
use super::host_process::HostProcess;
use super::output::print_line;
use std::time::Duration;

/// How long the host has to exit: closing panes takes up to 4.5 s each,
/// all at once.
const STOP_WAIT: Duration = Duration::from_secs(15);

/// Arguments of `stop`.
#[derive(Debug, clap::Args)]
pub(crate) struct StopArgs {
    /// Close every pane (end its processes) before the host exits, instead
    /// of leaving the panes for the next host.
    #[arg(long)]
    close_panes: bool,
}

/// Stops the host that answers on the socket, if one does (with
/// `--remote`, the one on the other machine, by `panehost stop` there).
pub(crate) fn run(context: &Context, args: StopArgs) -> anyhow::Result<()> {
    if let Some(link) = &context.remote {
        return super::remote::stop(link, args.close_panes);
    }
    let Some(host) = HostProcess::find(&context.socket)? else {
        print_line(&format!("no host is running at {}", context.socket.display()))?;
        return Ok(());
    };
    host.stop(args.close_panes, STOP_WAIT)?;
    if args.close_panes {
        print_line(&format!("stopped the host (pid {}) and closed its panes", host.pid))?;
    } else {
        print_line(&format!(
            "stopped the host (pid {}); its panes stay with their keepers, and the next command's host takes them back",
            host.pid
        ))?;
    }
    Ok(())
}
