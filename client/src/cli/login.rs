//! `panehost login RUNTIME [--cwd DIR]`: open a pane running the runtime's
//! own sign-in, and attach to it when this is a terminal (else print the
//! pane id, as `start` does).

use super::attach::{self, AttachArgs};
use super::context::Context;
use super::output::print_line;
use super::{detach_key, terminal};
use std::path::PathBuf;

/// Arguments of `login`.
#[derive(Debug, clap::Args)]
pub(crate) struct LoginArgs {
    /// The runtime to sign in to (see `panehost runtimes`).
    runtime: String,
    /// Working directory of the pane [default: the host's home directory]
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
}

/// Opens the sign-in pane, then attaches or prints its id.
pub(crate) async fn run(context: &Context, args: LoginArgs) -> anyhow::Result<()> {
    let cwd = match args.cwd {
        Some(cwd) => Some(std::path::absolute(cwd)?.display().to_string()),
        None => None,
    };
    let client = context.connect().await?;
    let interactive = terminal::stdin_is_terminal();
    let size = if interactive { terminal::size() } else { None };
    let pane = client.login(&args.runtime, cwd, size).await?;
    drop(client);
    if !interactive {
        print_line(&pane.id.0)?;
        return Ok(());
    }
    attach::run(context, AttachArgs::new(pane.id.0, detach_key::DEFAULT_DETACH_KEY_BYTE)).await
}
