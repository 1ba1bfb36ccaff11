//! `panehost interrupt PANE [--json]`

use super::context::Context;
use super::json;
use super::output::print_line;
use panehost_ipc::{PaneId, Response};

/// Arguments of `interrupt`.
#[derive(Debug, clap::Args)]
pub(crate) struct InterruptArgs {
    /// The pane.
    pane: String,
    /// Escalate to SIGTERM and SIGKILL when SIGINT is not confirmed.
    #[arg(long)]
    terminate: bool,
    /// Print the host's `interrupted` answer (the report) in the protocol's
    /// JSON (docs/PROTOCOL.md, section 4).
    #[arg(long)]
    json: bool,
}

/// Interrupts the pane and prints what was done.
pub(crate) async fn run(context: &Context, args: InterruptArgs) -> anyhow::Result<()> {
    let client = context.connect().await?;
    let report = client.interrupt_with(&PaneId(args.pane), args.terminate).await?;
    if args.json {
        print_line(&json::answer(Response::Interrupted(report)).to_string())?;
        return Ok(());
    }
    let mut text = format!("{}: {}", report.pane, report.outcome);
    for step in &report.steps {
        text.push_str(&format!("\n  +{}ms {} {}", step.at_ms, step.action, step.detail));
    }
    print_line(text.trim_end())?;
    Ok(())
}
