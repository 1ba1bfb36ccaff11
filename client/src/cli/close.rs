//! `panehost close PANE [--json]`

use super::context::Context;
use super::json;
use super::output::{print_json, print_line};
use panehost_ipc::{ExitStatus, PaneId, Response};

/// Arguments of `close`.
#[derive(Debug, clap::Args)]
pub(crate) struct CloseArgs {
    /// The pane.
    pane: String,
    /// Print the host's `closed` answer, `{"pane", "status": {"code", "signal"}}`,
    /// in the protocol's JSON (docs/PROTOCOL.md, section 4).
    #[arg(long)]
    json: bool,
}

/// Ends the pane and prints how its process ended.
pub(crate) async fn run(context: &Context, args: CloseArgs) -> anyhow::Result<()> {
    let client = context.connect().await?;
    let pane = PaneId(args.pane);
    let status = client.close(&pane).await?;
    if args.json {
        print_json(&json::answer(Response::Closed { pane, status }))?;
    } else {
        print_line(&format!("{pane}: {}", describe(&status)))?;
    }
    Ok(())
}

/// `exited with code 0`, or `killed by SIGTERM (code 143)`.
pub(crate) fn describe(status: &ExitStatus) -> String {
    match &status.signal {
        Some(signal) => format!("killed by {signal} (code {})", status.code),
        None => format!("exited with code {}", status.code),
    }
}
