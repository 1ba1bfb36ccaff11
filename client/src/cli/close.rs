//! `panehost close PANE [--json]`

use super::context::Context;
use super::json;
use super::output::{print_json, print_line};
use panehost_ipc::{ExitStatus, PaneId, PaneSweep, Request, Response};

/// Arguments of `close`.
#[derive(Debug, clap::Args)]
pub(crate) struct CloseArgs {
    /// The pane.
    pane: String,
    /// Print the host's `closed` answer, `{"pane", "status": {"code", "signal"},
    /// "sweep": {"method", "ended", "survivors"}}`,
    /// in the protocol's JSON (docs/PROTOCOL.md, section 4).
    #[arg(long)]
    json: bool,
}

/// Ends the pane and prints how its process ended, and what else of the
/// pane was ended.
pub(crate) async fn run(context: &Context, args: CloseArgs) -> anyhow::Result<()> {
    let client = context.connect().await?;
    let pane = PaneId(args.pane);
    let answer = client.request(Request::Close { pane: pane.clone() }).await?;
    let Response::Closed { status, sweep, .. } = &answer else {
        anyhow::bail!("the host answered close with something else: {answer:?}");
    };
    if args.json {
        print_json(&json::answer(answer.clone()))?;
    } else {
        let mut text = format!("{pane}: {}", describe(status));
        if let Some(sweep) = sweep {
            text.push_str(&format!("; {}", describe_sweep(sweep)));
        }
        print_line(&text)?;
    }
    Ok(())
}

/// `ended 3 other processes (process_tree)`, with the survivors if any.
pub(crate) fn describe_sweep(sweep: &PaneSweep) -> String {
    let mut text = format!("ended {} other processes ({})", sweep.ended, sweep.method);
    if !sweep.survivors.is_empty() {
        let pids: Vec<String> = sweep.survivors.iter().map(u32::to_string).collect();
        text.push_str(&format!(", {} survived: {}", sweep.survivors.len(), pids.join(" ")));
    }
    text
}

/// `exited with code 0`, or `killed by SIGTERM (code 143)`.
pub(crate) fn describe(status: &ExitStatus) -> String {
    match &status.signal {
        Some(signal) => format!("killed by {signal} (code {})", status.code),
        None => format!("exited with code {}", status.code),
    }
}
