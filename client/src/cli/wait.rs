//! `panehost wait PANE PATTERN [--output [--from OFFSET]] [--timeout SECS]
//! [--json]`: wait until a pane's screen (or its output) matches a regular
//! expression; print what matched.

use super::context::Context;
use super::json;
use super::output::{print_json, print_lines};
use panehost_ipc::{PaneId, Response, WaitForParams, WaitTarget};

/// Arguments of `wait`.
#[derive(Debug, clap::Args)]
pub(crate) struct WaitArgs {
    /// The pane.
    pane: String,
    /// A regular expression (Rust `regex` syntax), such as '[$#] $' (a shell's prompt) or 'claude> '.
    pattern: String,
    /// Match the output as the program wrote it, escape sequences included,
    /// instead of the screen; only output from now on counts (or from --from).
    #[arg(long)]
    output: bool,
    /// With --output: the output offset to search from.
    #[arg(long, value_name = "OFFSET", requires = "output")]
    from: Option<u64>,
    /// How long to wait, in seconds [default: 30]
    #[arg(long, value_name = "SECS")]
    timeout: Option<u64>,
    /// Print the host's `waited` answer, `{"pane", "target", "offset",
    /// "matched"}`, in the protocol's JSON (docs/PROTOCOL.md, section 4).
    #[arg(long)]
    json: bool,
}

/// Waits and prints the matched text; fails (`WAIT_TIMEOUT`,
/// `PANE_EXITED`) when the pattern was not seen.
pub(crate) async fn run(context: &Context, args: WaitArgs) -> anyhow::Result<()> {
    let client = context.connect().await?;
    let params = WaitForParams {
        pane: PaneId(args.pane),
        pattern: args.pattern,
        target: if args.output { WaitTarget::Output } else { WaitTarget::Screen },
        from: args.from,
        timeout_ms: args.timeout.map(|secs| secs.saturating_mul(1000)),
    };
    let found = client.wait_for(params).await?;
    if args.json {
        print_json(&json::answer(Response::Waited(found)))?;
    } else {
        print_lines(&found.matched)?;
    }
    Ok(())
}
