//! `panehost history PANE [--lines N] [--json]`

use super::context::Context;
use super::json;
use super::output::{print_json, print_lines};
use panehost_ipc::{PaneId, Response};

/// Arguments of `history`.
#[derive(Debug, clap::Args)]
pub(crate) struct HistoryArgs {
    /// The pane.
    pane: String,
    /// Lines from above the screen, at most [default: 1000]
    #[arg(long, value_name = "N")]
    lines: Option<u32>,
    /// Print the host's `history` answer, `{"pane", "from", "to", "text",
    /// "truncated"}`, in the protocol's JSON (docs/PROTOCOL.md, section 4).
    #[arg(long)]
    json: bool,
}

/// Prints the lines that scrolled off the pane's screen, then the screen.
/// Without `--json`, a note on standard error says when older lines are
/// missing, and why: the ring no longer holds them, or the host held more
/// than were asked for (`--lines`, or its bound for a wide pane).
pub(crate) async fn run(context: &Context, args: HistoryArgs) -> anyhow::Result<()> {
    let client = context.connect().await?;
    let history = client.history(&PaneId(args.pane.clone()), args.lines).await?;
    if args.json {
        print_json(&json::answer(Response::History(history)))?;
    } else {
        if history.from > 0 {
            eprintln!(
                "(older lines are not held: the host holds output from offset {} to {})",
                history.from, history.to
            );
        } else if history.truncated {
            let asked = args.lines.map_or_else(|| "the default 1000".to_owned(), |lines| lines.to_string());
            eprintln!(
                "(older lines were left out: {asked} lines above the screen were asked for; --lines asks for more)"
            );
        }
        print_lines(history.text.trim_end_matches('\n'))?;
    }
    Ok(())
}
