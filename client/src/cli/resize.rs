//! `panehost resize PANE COLSxROWS`

use super::context::Context;
use super::size_arg;
use panehost_ipc::{PaneId, Size};

/// Arguments of `resize`.
#[derive(Debug, clap::Args)]
pub(crate) struct ResizeArgs {
    /// The pane.
    pane: String,
    /// The new size.
    #[arg(value_name = "COLSxROWS", value_parser = size_arg::parse_size)]
    size: Size,
}

/// Resizes the pane's terminal.
pub(crate) async fn run(context: &Context, args: ResizeArgs) -> anyhow::Result<()> {
    let client = context.connect().await?;
    client.resize(&PaneId(args.pane), args.size).await?;
    Ok(())
}
