//! `panehost start RUNTIME [--cwd DIR] [--size COLSxROWS] [--model M] [--profile NAME [--accept-weaker-boundary]] [--allow-refused-version] [--label NAME=VALUE]... [--env NAME=VALUE]... [--rerun-after-host-loss] [-- ARGS...]`

use super::context::Context;
use super::output::{print_json, print_line};
use super::{json, pair_arg, size_arg};
use anyhow::Context as _;
use panehost_ipc::{Response, ResumeRequest, Size, StartParams};
use std::path::PathBuf;

/// Arguments of `start`.
#[derive(Debug, clap::Args)]
pub(crate) struct StartArgs {
    /// The runtime to run, such as `shell` (see `panehost runtimes`).
    pub(crate) runtime: String,
    /// Working directory of the pane [default: the host's home directory]
    #[arg(long, value_name = "DIR")]
    cwd: Option<PathBuf>,
    /// Terminal size [default: 80x24]
    #[arg(long, value_name = "COLSxROWS", value_parser = size_arg::parse_size)]
    size: Option<Size>,
    /// The model, for runtimes that take one.
    #[arg(long, value_name = "MODEL")]
    model: Option<String>,
    /// Resume this exact session of the runtime.
    #[arg(long, value_name = "REFERENCE", conflicts_with = "resume_latest")]
    resume: Option<String>,
    /// Resume the runtime's latest session.
    #[arg(long)]
    resume_latest: bool,
    /// Close the pane once it has run this many seconds.
    #[arg(long, value_name = "SECS")]
    max_wall_secs: Option<u64>,
    /// The permission profile the runtime must enforce: read_only,
    /// workspace_write or full_access (see `panehost runtimes`). A runtime
    /// that cannot enforce it refuses to start. Without it, a runtime that
    /// enforces workspace_write gets it (the host's default).
    #[arg(long, value_name = "NAME")]
    profile: Option<String>,
    /// Start even when the runtime cannot enforce the profile.
    #[arg(long, requires = "profile")]
    accept_weaker_boundary: bool,
    /// Start even a version the runtime's adapter refuses (`panehost
    /// runtimes` says which and why).
    #[arg(long)]
    allow_refused_version: bool,
    /// Refuse to start unless the runtime is ready (see `panehost runtimes`).
    #[arg(long)]
    require_ready: bool,
    /// For `shell` with a command: run the command again if a host restart
    /// finds its keeper gone (a reboot). Without it, such a pane ends
    /// instead: a one-shot command is not run twice unasked.
    #[arg(long, requires = "command")]
    rerun_after_host_loss: bool,
    /// A label for the pane, such as `owner=ada`; repeat for more. `ls
    /// --label` finds panes by their labels.
    #[arg(long = "label", value_name = "NAME=VALUE", value_parser = pair_arg::parse_pair)]
    labels: Vec<(String, String)>,
    /// For `shell` and runtimes from the configuration file: an
    /// environment variable for the pane's process; repeat for more.
    #[arg(long = "env", value_name = "NAME=VALUE", value_parser = pair_arg::parse_pair)]
    env: Vec<(String, String)>,
    /// Print the pane as JSON.
    #[arg(long)]
    json: bool,
    /// For `shell`: the program and arguments to run instead of a shell.
    #[arg(last = true, value_name = "ARGS")]
    pub(crate) command: Vec<String>,
}

/// Starts the pane and prints its id (or the pane as JSON).
pub(crate) async fn run(context: &Context, args: StartArgs) -> anyhow::Result<()> {
    // The host runs elsewhere: a relative directory means this one's.
    let cwd = match args.cwd {
        Some(cwd) => Some(
            std::path::absolute(&cwd)
                .with_context(|| format!("cannot resolve {}", cwd.display()))?
                .to_string_lossy()
                .into_owned(),
        ),
        None => None,
    };
    let resume = match (args.resume, args.resume_latest) {
        (Some(reference), _) => Some(ResumeRequest::Reference(reference)),
        (None, true) => Some(ResumeRequest::Latest),
        (None, false) => None,
    };
    let params = StartParams {
        runtime: args.runtime,
        cwd,
        size: args.size,
        command: args.command,
        model: args.model,
        resume,
        max_wall_ms: args.max_wall_secs.map(|secs| secs.saturating_mul(1000)),
        permission_profile: args.profile,
        accept_weaker_boundary: args.accept_weaker_boundary,
        require_ready: args.require_ready,
        rerun_after_host_loss: args.rerun_after_host_loss,
        labels: args.labels.into_iter().collect(),
        env: args.env.into_iter().collect(),
        allow_refused_version: args.allow_refused_version,
    };
    let client = context.connect().await?;
    let pane = client.start(params).await?;
    if args.json {
        print_json(&json::answer(Response::Started(pane)))?;
    } else {
        print_line(pane.id.as_str())?;
    }
    Ok(())
}
