//! `panehost ask PANE TEXT [--timeout SECS] [--json]`: submit a prompt and
//! wait until the turn ends; print what the turn added to the screen.

use super::context::Context;
use super::json;
use super::output::{print_json, print_lines};
use panehost_ipc::{PaneId, Response};
use std::time::Duration;

/// Arguments of `ask`.
#[derive(Debug, clap::Args)]
pub(crate) struct AskArgs {
    /// The pane.
    pane: String,
    /// The prompt.
    text: String,
    /// How long to wait for the end of the turn, in seconds [default: 600]
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
    /// Print the host's `answered` answer (the turn report) in the
    /// protocol's JSON (docs/PROTOCOL.md, section 4).
    #[arg(long)]
    json: bool,
}

/// Asks and prints the answer (the lines the turn added to the screen).
pub(crate) async fn run(context: &Context, args: AskArgs) -> anyhow::Result<()> {
    let client = context.connect().await?;
    let report = client.ask(&PaneId(args.pane), &args.text, args.timeout.map(Duration::from_secs)).await?;
    if args.json {
        print_json(&json::answer(Response::Answered(report)))?;
    } else {
        print_lines(&report.added_text)?;
    }
    Ok(())
}
