//! `panehost send PANE [TEXT] [--enter]`

use super::context::Context;
use super::UsageError;
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
        // Reading a terminal until end of file would wait, silently, for
        // a Ctrl-D the user does not know is expected.
        _ if super::terminal::stdin_is_terminal() => {
            return Err(UsageError(
                "no text to send: give it as an argument (`panehost send PANE 'ls -l' --enter`), or pipe it \
                 into standard input"
                    .to_owned(),
            )
            .into());
        }
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
