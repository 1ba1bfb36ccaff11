//! `panehost send PANE [TEXT] [--enter]`

use super::context::Context;
use anyhow::Context as _;
use panehost_ipc::PaneId;
use std::io::Read;

/// Arguments of `send`.
#[derive(Debug, clap::Args)]
pub(crate) struct SendArgs {
    /// The pane.
    pane: String,
    /// The text to type; standard input when absent or `-`.
    text: Option<String>,
    /// Press Enter after the input.
    #[arg(long)]
    enter: bool,
}

/// Writes the text, or all of standard input, to the pane. Input larger
/// than one request travels in several.
pub(crate) async fn run(context: &Context, args: SendArgs) -> anyhow::Result<()> {
    let input = match args.text {
        Some(text) if text != "-" => text.into_bytes(),
        _ => tokio::task::spawn_blocking(|| {
            let mut input = Vec::new();
            std::io::stdin().lock().read_to_end(&mut input).map(|_| input)
        })
        .await?
        .context("cannot read standard input")?,
    };
    let client = context.connect().await?;
    client.send_input(&PaneId(args.pane), &input, args.enter).await?;
    Ok(())
}
