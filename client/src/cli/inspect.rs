//! `panehost inspect PANE [--json]`

use super::context::Context;
use super::output::{print_json, print_line, print_lines};
use super::{json, ls};
use panehost_ipc::{PaneDetail, PaneId, Response};

/// Arguments of `inspect`.
#[derive(Debug, clap::Args)]
pub(crate) struct InspectArgs {
    /// The pane.
    pane: String,
    /// Print the host's `inspected` answer, `{"pane": {...}, "screen": {...}}`,
    /// in the protocol's JSON (docs/PROTOCOL.md, section 4).
    #[arg(long)]
    json: bool,
}

/// Prints a header line and the screen's text, or the answer as JSON.
pub(crate) async fn run(context: &Context, args: InspectArgs) -> anyhow::Result<()> {
    let client = context.connect().await?;
    let detail = client.inspect(&PaneId(args.pane)).await?;
    if args.json {
        print_json(&json::answer(Response::Inspected(detail)))?;
    } else {
        print_line(&header(&detail))?;
        print_lines(&detail.screen.text)?;
    }
    Ok(())
}

/// `p1 shell running pid 4242 80x24 gen 1 offset 1234 cursor 3,0 "title"`
fn header(detail: &PaneDetail) -> String {
    let pane = &detail.pane;
    let mut header = format!(
        "{} {} {} pid {} {} gen {} offset {} cursor {},{}",
        pane.id,
        pane.runtime,
        ls::state(&pane.state),
        pane.pid,
        pane.size,
        pane.generation,
        pane.offset,
        detail.screen.cursor.row,
        detail.screen.cursor.col,
    );
    if !pane.title.is_empty() {
        header.push_str(&format!(" {:?}", pane.title));
    }
    header
}
