//! `panehost canary`: the binary's side of the command. It resolves the
//! runtime in the host's catalog (built-in and custom runtimes), runs
//! `panehost_adapters::canary`, writes each report under
//! `STATE_DIR/canary/`, and returns what the command line prints. It needs
//! no running host and never changes one; the candidate sees neither the
//! caller's home nor the state directory.

use crate::config::runtimes_config_from_env;
use crate::server::daemon::catalog;
use anyhow::{bail, Context};
use panehost_adapters::canary::behaviour::{BehaviourSetting, BEHAVIOUR_TIMEOUT};
use panehost_adapters::canary::installed::{installed_runtimes, Decision};
use panehost_adapters::canary::npm::NpmRun;
use panehost_adapters::canary::{run_canary, CanaryReport, CanaryRequest, Candidate, Verdict, STAGING_TIMEOUT};
use panehost_adapters::probe::PROBE_TIMEOUT;
use panehost_adapters::{Catalog, HostEnvironment};
use panehost_client::cli::{CanaryLaunch, CanaryOutput, CanaryTarget, LiveStage};
use std::path::PathBuf;

/// Runs the canary as `launch` asks.
///
/// # Errors
/// Fails on an unknown runtime, a request the canary cannot act on, or a
/// report that cannot be written.
pub fn run(launch: CanaryLaunch) -> anyhow::Result<CanaryOutput> {
    let environment = HostEnvironment::capture();
    let catalog = catalog(environment.clone(), runtimes_config_from_env().as_deref());
    let reports_dir = launch.state_dir.join("canary");
    let scratch_root = scratch_root(&environment);
    let behaviour = launch.live.as_ref().map(behaviour_setting).transpose()?;
    let judge = |runtime: &str, candidate: Candidate| -> anyhow::Result<(CanaryReport, PathBuf)> {
        let Some(descriptor) = catalog.descriptor(runtime) else { bail!("unknown runtime {runtime:?}") };
        let request = CanaryRequest {
            descriptor,
            candidate,
            environment: &environment,
            state_dir: launch.state_dir.clone(),
            scratch_root: scratch_root.clone(),
            probe_timeout: PROBE_TIMEOUT,
            staging_timeout: STAGING_TIMEOUT,
            keep_scratch: launch.keep_scratch,
            behaviour: behaviour.clone(),
        };
        let report = run_canary(&request)?;
        let path = report
            .write_to(&reports_dir)
            .with_context(|| format!("cannot write the report under {}", reports_dir.display()))?;
        Ok((report, path))
    };
    match launch.target {
        CanaryTarget::Version { runtime, version } => {
            let (report, path) = judge(&runtime, Candidate::NpmVersion(version))?;
            Ok(single(&report, &path))
        }
        CanaryTarget::Binary { runtime, path } => {
            let (report, written) = judge(&runtime, Candidate::Binary(path))?;
            Ok(single(&report, &written))
        }
        CanaryTarget::AllInstalled => all_installed(&catalog, &environment, judge),
    }
}

fn single(report: &CanaryReport, path: &std::path::Path) -> CanaryOutput {
    CanaryOutput {
        json: report.to_json(),
        summary: format!("{}\n  report:    {}", report.summary(), path.display()),
        exit_code: report.verdict.exit_code(),
    }
}

/// Each installed runtime whose published version differs, judged; the
/// exit code is that of the most severe verdict (0 when nothing differs).
fn all_installed(
    catalog: &Catalog,
    environment: &HostEnvironment,
    judge: impl Fn(&str, Candidate) -> anyhow::Result<(CanaryReport, PathBuf)>,
) -> anyhow::Result<CanaryOutput> {
    let npm = NpmRun::from_environment(environment, STAGING_TIMEOUT).map_err(anyhow::Error::msg)?;
    let mut entries = Vec::new();
    let mut summary = Vec::new();
    let mut worst = Verdict::Pass;
    for found in installed_runtimes(catalog, &npm) {
        let installed = match (&found.installed_package, &found.installed) {
            (Some(package), Some(printed)) => format!("{package} (prints {printed})"),
            (Some(package), None) => package.clone(),
            (None, printed) => printed.clone().unwrap_or_else(|| "unknown".to_owned()),
        };
        let mut entry = serde_json::json!({
            "runtime": found.runtime,
            "package": found.package,
            "installed": found.installed,
            "installed_package": found.installed_package,
        });
        match found.decision {
            Decision::UpToDate => {
                entry["decision"] = "up_to_date".into();
                summary.push(format!(
                    "canary {}: installed {installed} is the published version; nothing to judge",
                    found.runtime
                ));
            }
            Decision::RegistryUnreachable(reason) => {
                entry["decision"] = "registry_unreachable".into();
                entry["reason"] = reason.clone().into();
                worst = more_severe(worst, Verdict::Blocked);
                summary.push(format!("canary {}: BLOCKED: {reason}", found.runtime));
            }
            Decision::Judge { published } => {
                let (report, path) = judge(&found.runtime, Candidate::NpmVersion(published.clone()))?;
                worst = more_severe(worst, report.verdict);
                entry["decision"] = "judged".into();
                entry["published"] = published.into();
                entry["report_file"] = path.display().to_string().into();
                entry["report"] = serde_json::to_value(&report)?;
                summary.push(format!(
                    "{}\n  installed: {installed}\n  report:    {}",
                    report.summary(),
                    path.display()
                ));
            }
        }
        entries.push(entry);
    }
    if entries.is_empty() {
        summary.push("canary: no installed runtime is published on npm".to_owned());
    }
    Ok(CanaryOutput {
        json: serde_json::to_string_pretty(&entries)?,
        summary: summary.join("\n"),
        exit_code: worst.exit_code(),
    })
}

fn more_severe(one: Verdict, other: Verdict) -> Verdict {
    if other.severity() > one.severity() {
        other
    } else {
        one
    }
}

/// The live proof for `--live`: `--live-proof`, else `panehost-live` beside
/// this executable; the records it compares with: `--pinned-records`, else
/// the ones it names itself (`--print-records-dir`: `tests/live-records` of
/// the source tree it was built from).
fn behaviour_setting(live: &LiveStage) -> anyhow::Result<BehaviourSetting> {
    let live_program = match &live.live_proof {
        Some(path) => std::path::absolute(path)?,
        None => std::env::current_exe().context("cannot find this executable")?.with_file_name(LIVE_PROOF_PROGRAM),
    };
    if !live_program.is_file() {
        bail!(
            "--live needs the live proof, {}, which is not there: build it with `cargo build -p panehost-tests` \
             (it comes with panehost-model-endpoint), or name it with --live-proof",
            live_program.display()
        );
    }
    let pinned_records = match &live.pinned_records {
        Some(dir) => std::path::absolute(dir)?,
        None => {
            let output = std::process::Command::new(&live_program)
                .arg("--print-records-dir")
                .output()
                .with_context(|| format!("cannot run {}", live_program.display()))?;
            if !output.status.success() {
                bail!("{} --print-records-dir failed ({})", live_program.display(), output.status);
            }
            PathBuf::from(String::from_utf8_lossy(&output.stdout).trim())
        }
    };
    if !pinned_records.is_dir() {
        bail!("the pinned records {} are not a directory: name them with --pinned-records", pinned_records.display());
    }
    Ok(BehaviourSetting { live_program, pinned_records, timeout: BEHAVIOUR_TIMEOUT })
}

/// The live proof's executable name.
const LIVE_PROOF_PROGRAM: &str = "panehost-live";

/// Where candidates are staged: `$XDG_CACHE_HOME/panehost/canary`, else
/// `~/.cache/panehost/canary`.
fn scratch_root(environment: &HostEnvironment) -> PathBuf {
    match environment.get("XDG_CACHE_HOME") {
        Some(cache) if cache.starts_with('/') => PathBuf::from(cache).join("panehost").join("canary"),
        _ => environment.home().join(".cache").join("panehost").join("canary"),
    }
}
