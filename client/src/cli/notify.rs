//! `panehost notify --event EVENT [PAYLOAD]`: run by a CLI's hook or notify
//! program inside a pane, it reports a turn signal to the host.
//!
//! It finds its pane through `PANEHOST_PANE` and `PANEHOST_NOTIFY_TOKEN`
//! and the host through `PANEHOST_SOCKET`, all set by the host for every
//! pane. The payload is the argument after the options (Codex passes its
//! JSON there), else standard input when that is not a terminal (Claude
//! Code's hooks write JSON there). It never starts a host, never waits long,
//! and always exits 0, so a hook can never break the CLI that runs it;
//! problems go to standard error.

use super::context::Context;
use crate::{Client, ClientOptions};
use panehost_ipc::{PaneId, Request};
use std::io::Read;
use std::time::Duration;

/// How long a notify may take in all.
const NOTIFY_TIMEOUT: Duration = Duration::from_secs(5);
/// Most payload read from standard input.
const MAX_PAYLOAD: u64 = 256 * 1024;

/// Arguments of `notify`.
#[derive(Debug, clap::Args)]
pub(crate) struct NotifyArgs {
    /// `turn_started`, `turn_completed` or `notification`.
    #[arg(long)]
    event: String,
    /// The hook's payload; read from standard input when absent.
    payload: Option<String>,
}

/// Reports the signal; failures are printed, never returned.
pub(crate) async fn run(context: &Context, args: NotifyArgs) -> anyhow::Result<()> {
    if let Err(err) = tokio::time::timeout(NOTIFY_TIMEOUT, report(context, args))
        .await
        .unwrap_or_else(|_| Err(anyhow::anyhow!("timed out")))
    {
        super::output::eprint_lines(&format!("panehost notify: {err:#}"));
    }
    Ok(())
}

async fn report(context: &Context, args: NotifyArgs) -> anyhow::Result<()> {
    let pane =
        std::env::var("PANEHOST_PANE").map_err(|_| anyhow::anyhow!("PANEHOST_PANE is not set: not inside a pane"))?;
    let token = std::env::var("PANEHOST_NOTIFY_TOKEN").unwrap_or_default();
    let payload = match args.payload {
        Some(payload) => payload,
        None if !super::terminal::stdin_is_terminal() => read_stdin(),
        None => String::new(),
    };
    let client = Client::connect(&context.socket, &ClientOptions::named("panehost-notify")).await?;
    client.request(Request::Notify { pane: PaneId(pane), token, event: args.event, payload }).await?;
    Ok(())
}

fn read_stdin() -> String {
    let mut payload = String::new();
    let _ = std::io::stdin().take(MAX_PAYLOAD).read_to_string(&mut payload);
    payload
}
