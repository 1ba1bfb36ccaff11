//! `panehost close PANE [--json]`

use super::context::Context;
use super::output::print_line;
use panehost_ipc::{ExitStatus, PaneId};
use serde_json::json;

/// Arguments of `close`.
#[derive(Debug, clap::Args)]
pub(crate) struct CloseArgs {
    /// The pane.
    pane: String,
    /// Print the exit status as JSON.
    #[arg(long)]
    json: bool,
}

/// Ends the pane and prints how its process ended.
pub(crate) async fn run(context: &Context, args: CloseArgs) -> anyhow::Result<()> {
    let client = context.connect().await?;
    let pane = PaneId(args.pane);
    let status = client.close(&pane).await?;
    if args.json {
        print_line(&json!({"id": pane.as_str(), "exit_code": status.code, "signal": status.signal}).to_string())?;
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
