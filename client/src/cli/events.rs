//! `panehost events PANE [--from OFFSET] [--json]`

use super::context::Context;
use super::json;
use super::output::{print_json, write_stdout};
use crate::{FollowItem, PaneFollower, ReconnectPolicy};
use panehost_ipc::{Event, PaneId};

/// Arguments of `events`.
#[derive(Debug, clap::Args)]
pub(crate) struct EventsArgs {
    /// The pane.
    pane: String,
    /// Start after this output offset [default: the current screen]
    #[arg(long, value_name = "OFFSET")]
    from: Option<u64>,
    /// Print one JSON object per line instead of the raw output bytes: a
    /// stream's `start`, then each `event`, in the protocol's JSON
    /// (docs/PROTOCOL.md, section 4).
    #[arg(long)]
    json: bool,
}

/// Streams the pane until its subscription ends, across lost connections.
/// Without `--json` only output bytes are written, exactly as the pane
/// produced them.
pub(crate) async fn run(context: &Context, args: EventsArgs) -> anyhow::Result<()> {
    let connector = context.connector()?;
    let mut follower =
        PaneFollower::with_connector(connector, ReconnectPolicy::default(), PaneId(args.pane), args.from).await?;
    while let Some(item) = follower.next().await? {
        let still_read = if args.json {
            let line = match &item {
                FollowItem::Start(start) => {
                    json::start_line(follower.pane(), follower.generation().unwrap_or_default(), start)
                }
                FollowItem::Event(event) => json::event_line(event),
            };
            print_json(&line)?
        } else {
            match &item {
                FollowItem::Event(Event::Output { data, .. }) => write_stdout(data.as_slice())?,
                _ => true,
            }
        };
        if !still_read {
            // Whoever read standard output is gone.
            break;
        }
    }
    Ok(())
}
