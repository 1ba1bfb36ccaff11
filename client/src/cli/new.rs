//! `panehost new [RUNTIME] [--cwd DIR]` (also plain `panehost`): start a
//! pane at this terminal's size in this directory, and attach to it.

use super::attach::{self, AttachArgs};
use super::context::Context;
use super::{detach_key, terminal, UsageError};
use anyhow::Context as _;
use panehost_ipc::StartParams;
use std::path::PathBuf;

/// Arguments of `new`.
#[derive(Debug, clap::Args)]
pub(crate) struct NewArgs {
    /// The runtime to run (see `panehost runtimes`).
    #[arg(default_value = panehost_ipc::runtime::SHELL)]
    pub(crate) runtime: String,
    /// Working directory of the pane [default: the current directory]
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// The key that detaches: ^X, ctrl-X or 0xNN.
    #[arg(long, value_name = "KEY", default_value = detach_key::DEFAULT_DETACH_KEY, value_parser = detach_key::parse_detach_key)]
    detach_key: u8,
}

impl Default for NewArgs {
    fn default() -> Self {
        NewArgs {
            runtime: panehost_ipc::runtime::SHELL.to_owned(),
            cwd: None,
            detach_key: detach_key::DEFAULT_DETACH_KEY_BYTE,
        }
    }
}

/// Starts the pane, then attaches as `attach` does.
pub(crate) async fn run(context: &Context, args: NewArgs) -> anyhow::Result<()> {
    if !terminal::stdin_is_terminal() {
        return Err(UsageError(
            "new needs a terminal on standard input; use `start` to start a pane without attaching".to_owned(),
        )
        .into());
    }
    let cwd = match args.cwd {
        Some(cwd) => std::path::absolute(cwd)?,
        None => std::env::current_dir().context("cannot read the current directory")?,
    };
    let client = context.connect().await?;
    let params = StartParams {
        runtime: args.runtime,
        cwd: Some(cwd.display().to_string()),
        size: terminal::size(),
        ..StartParams::default()
    };
    let pane = client.start(params).await?;
    drop(client);
    attach::run(context, AttachArgs::new(pane.id.0, args.detach_key)).await
}
