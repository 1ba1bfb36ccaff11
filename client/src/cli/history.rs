//! `panehost history PANE [--lines N] [--json]`

use super::context::Context;
use super::output::print_line;
use panehost_ipc::PaneId;
use serde_json::json;

/// Arguments of `history`.
#[derive(Debug, clap::Args)]
pub(crate) struct HistoryArgs {
    /// The pane.
    pane: String,
    /// Lines from above the screen, at most [default: 1000]
    #[arg(long, value_name = "N")]
    lines: Option<u32>,
    /// Print `{"pane", "from", "to", "text", "truncated"}` as JSON.
    #[arg(long)]
    json: bool,
}

/// Prints the lines that scrolled off the pane's screen, then the screen.
/// Without `--json`, a note on standard error says when older lines are
/// missing.
pub(crate) async fn run(context: &Context, args: HistoryArgs) -> anyhow::Result<()> {
    let client = context.connect().await?;
    let history = client.history(&PaneId(args.pane), args.lines).await?;
    if args.json {
        let value = json!({
            "pane": history.pane.as_str(),
            "from": history.from,
            "to": history.to,
            "text": history.text,
            "truncated": history.truncated,
        });
        print_line(&value.to_string())?;
    } else {
        if history.truncated {
            eprintln!("(older lines are not held: output from offset {} to {})", history.from, history.to);
        }
        print_line(history.text.trim_end_matches('\n'))?;
    }
    Ok(())
}
