//! `panehost interrupt PANE [--json]`

use super::context::Context;
use super::json;
use super::output::{print_json, print_lines};
use super::printable;
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
        print_json(&json::answer(Response::Interrupted(report)))?;
        return Ok(());
    }
    let mut text = printable::line(&format!("{}: {}", report.pane, report.outcome)).into_owned();
    for step in &report.steps {
        text.push_str(&format!(
            "\n{}",
            printable::line(&format!("  +{}ms {} {}", step.at_ms, step.action, step.detail))
        ));
    }
    print_lines(text.trim_end())?;
    Ok(())
}
