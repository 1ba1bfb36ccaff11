//! `panehost canary --runtime ID (--version V | --binary PATH) [--live] [--json]`
//! and `panehost canary --all-installed [--live] [--json]`.
//!
//! The canary needs the runtime descriptors, which this crate does not
//! know: the binary hands it a function ([`Entrypoints::run_canary`](super::Entrypoints))
//! that runs it and returns what to print. It needs no host.

use super::context::Context;
use super::output::{print_json_text, print_text};
use super::UsageError;
use std::path::PathBuf;
use std::process::ExitCode;

/// Arguments of `canary`.
#[derive(Debug, clap::Args)]
pub(crate) struct CanaryArgs {
    /// The runtime whose adapter the candidate must satisfy.
    #[arg(long, value_name = "ID", required_unless_present = "all_installed")]
    runtime: Option<String>,
    /// Stage this version of the runtime's npm package from the registry.
    #[arg(long, value_name = "V", conflicts_with = "binary", required_unless_present_any = ["binary", "all_installed"])]
    version: Option<String>,
    /// Probe this executable where it is.
    #[arg(long, value_name = "PATH")]
    binary: Option<PathBuf>,
    /// Judge the published version of every installed runtime whose
    /// published version differs from the installed one.
    #[arg(long, conflicts_with_all = ["runtime", "version", "binary"])]
    all_installed: bool,
    /// Print the report as JSON (with --all-installed, an array).
    #[arg(long)]
    json: bool,
    /// Keep the scratch prefix a version was staged in.
    #[arg(long)]
    keep_scratch: bool,
    /// After the help checks, run the candidate through the live proof's
    /// steps in the sandbox and compare each with the pinned version's
    /// record (docs/CANARY.md, "The behaviour stage").
    #[arg(long)]
    live: bool,
    /// The live proof to run with --live [default: panehost-live beside
    /// this executable].
    #[arg(long, value_name = "PATH", requires = "live")]
    live_proof: Option<PathBuf>,
    /// The pinned versions' records to compare with [default: the live
    /// proof's own, `tests/live-records` of its source tree].
    #[arg(long, value_name = "DIR", requires = "live")]
    pinned_records: Option<PathBuf>,
}

impl CanaryArgs {
    /// True for `--all-installed`.
    pub(crate) fn is_all_installed(&self) -> bool {
        self.all_installed
    }
}

/// What the canary is asked to judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CanaryTarget {
    /// A version of a runtime's npm package.
    Version {
        /// The runtime id.
        runtime: String,
        /// The version or dist-tag.
        version: String,
    },
    /// An executable on disk.
    Binary {
        /// The runtime id.
        runtime: String,
        /// The executable.
        path: PathBuf,
    },
    /// The published version of each installed runtime, where it differs.
    AllInstalled,
}

/// What `panehost canary` hands to the binary's canary.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanaryLaunch {
    /// What to judge.
    pub target: CanaryTarget,
    /// The state directory; reports go to its `canary/` folder.
    pub state_dir: PathBuf,
    /// Keep scratch prefixes.
    pub keep_scratch: bool,
    /// Run the behaviour stage, and with what.
    pub live: Option<LiveStage>,
}

/// The behaviour stage's tools, as given on the command line.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct LiveStage {
    /// `--live-proof`: the live proof to run.
    pub live_proof: Option<PathBuf>,
    /// `--pinned-records`: the records to compare with.
    pub pinned_records: Option<PathBuf>,
}

/// What the canary returns for printing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CanaryOutput {
    /// Printed with `--json`.
    pub json: String,
    /// Printed otherwise.
    pub summary: String,
    /// The command's exit code (see docs/CANARY.md).
    pub exit_code: u8,
}

/// Runs the canary through `run_canary` and prints its output.
pub(super) fn run(
    context: &Context,
    args: CanaryArgs,
    run_canary: fn(CanaryLaunch) -> anyhow::Result<CanaryOutput>,
) -> anyhow::Result<ExitCode> {
    context.init_logging();
    let target = match (args.is_all_installed(), args.runtime, args.version, args.binary) {
        (true, ..) => CanaryTarget::AllInstalled,
        (false, Some(runtime), Some(version), None) => CanaryTarget::Version { runtime, version },
        (false, Some(runtime), None, Some(path)) => CanaryTarget::Binary { runtime, path },
        _ => return Err(UsageError("give --runtime with --version or --binary, or --all-installed".into()).into()),
    };
    let live = args
        .live
        .then(|| LiveStage { live_proof: args.live_proof.clone(), pinned_records: args.pinned_records.clone() });
    let launch = CanaryLaunch { target, state_dir: context.state_dir.clone(), keep_scratch: args.keep_scratch, live };
    let output = run_canary(launch)?;
    if args.json {
        print_json_text(&output.json)?;
    } else {
        print_text(&format!("{}\n", output.summary))?;
    }
    Ok(ExitCode::from(output.exit_code))
}
