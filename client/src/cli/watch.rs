//! `panehost watch [--json]`: every pane of the host, then a line for each
//! pane that starts, changes activity, size or title, exits or leaves,
//! until interrupted.

use super::context::Context;
use super::json;
use super::ls::state;
use super::output::{print_json, print_line, print_lines};
use super::printable;
use panehost_ipc::{Event, PaneSummary};

/// Arguments of `watch`.
#[derive(Debug, clap::Args)]
pub(crate) struct WatchArgs {
    /// Print the panes as `{"panes": [...]}`, then one `{"event": ...}` per
    /// line, in the protocol's JSON (docs/PROTOCOL.md, section 4).
    #[arg(long)]
    json: bool,
}

/// Follows the host's news until the subscription or the connection ends
/// (or standard output closes).
pub(crate) async fn run(context: &Context, args: WatchArgs) -> anyhow::Result<()> {
    let client = context.connect().await?;
    let (panes, mut news) = client.watch().await?;
    let shown = if args.json {
        print_json(&serde_json::json!({ "panes": panes }))?
    } else {
        panes
            .iter()
            .map(|pane| print_line(&listed(pane)))
            .collect::<std::io::Result<Vec<_>>>()?
            .into_iter()
            .all(|ok| ok)
    };
    if !shown {
        return Ok(());
    }
    while let Some(event) = news.next().await {
        let shown = if args.json { print_json(&json::event_line(&event))? } else { print_lines(&told(&event))? };
        if !shown {
            return Ok(());
        }
        if let Event::Ended { reason } = &event {
            anyhow::bail!("the host ended the watch: {reason}");
        }
    }
    anyhow::bail!("the connection to the host was lost")
}

/// A pane of the first list.
fn listed(pane: &PaneSummary) -> String {
    format!("{} {} {} {}", pane.id, pane.runtime, state(&pane.state), pane.activity)
}

/// One line for one piece of news (a line for each pane of a new list),
/// each made printable on its own.
fn told(event: &Event) -> String {
    let line = match event {
        Event::PaneStarted { pane } => format!("{} started {}", pane.id, pane.runtime),
        Event::PaneActivity { pane, activity } => format!("{pane} {activity}"),
        Event::PaneExited { pane, status } => match &status.signal {
            Some(signal) => format!("{pane} exited {} ({signal})", status.code),
            None => format!("{pane} exited {}", status.code),
        },
        Event::PaneChanged { pane, size, title } => format!("{pane} size {}x{}, title: {title}", size.cols, size.rows),
        Event::PaneEnded { pane, reason } => format!("{pane} ended: {reason}"),
        Event::PaneList { panes, missed } => {
            let mut lines = vec![format!("(fell behind: {missed} events missed; the panes now:)")];
            lines.extend(panes.iter().map(|pane| printable::line(&listed(pane)).into_owned()));
            return lines.join("\n");
        }
        Event::Ended { reason } => format!("(watch ended: {reason})"),
        other => format!("{other:?}"),
    };
    printable::line(&line).into_owned()
}
