//! The canary: judges a candidate version of a runtime's CLI before anyone
//! installs it, without promoting it.
//!
//! A run stages the candidate ([`staging`]: an npm version into a scratch
//! prefix, or a binary where it is), probes it without a network
//! ([`offline_probes`]: `--version` and the help commands of
//! [`relied_flags`](crate::relied_flags), each with a scratch HOME, a
//! scrubbed environment and a timeout), checks every flag the adapter
//! relies on, and reports a [`Verdict`] ([`verdict`]) in a [`CanaryReport`]
//! ([`report`]). Everything that runs code of the candidate (npm installing
//! it, its install scripts, every probe) runs in the sandbox of
//! [`crate::sandbox`]: the caller's home and the host's state directory are
//! empty there, the system read-only, and only scratch directories
//! writable; where the sandbox cannot be made, nothing runs and the verdict
//! is BLOCKED. Promotion is never performed: nothing installed is touched,
//! and the scratch prefix is removed afterwards. [`installed`] picks the
//! runtimes whose published version differs from the installed one, for
//! the weekly timer. With `--live`, [`behaviour`] then runs the candidate
//! through the live proof's steps, in the same sandbox, and compares each
//! with the pinned version's record.

pub mod behaviour;
pub mod clock;
pub mod installed;
pub mod npm;
mod offline_probes;
pub mod optional_dependencies;
pub mod report;
pub mod staging;
pub mod verdict;

use crate::descriptor::Descriptor;
use crate::environment::HostEnvironment;
use crate::identity::Identity;
use crate::sandbox::{Sandbox, SandboxNetwork, SANDBOX_DESCRIPTION};
use behaviour::{run_behaviour, BehaviourSetting, StagedCandidate};
use npm::NpmRun;
use offline_probes::{probe_offline, ProbeSetting};
pub use report::CanaryReport;
use report::{CandidateRecord, IsolationRecord, PROMOTION};
pub use staging::Candidate;
use staging::{is_acceptable_version, stage_binary, stage_npm, Staged, StagingError};
use std::path::PathBuf;
use std::time::{Duration, SystemTime};
pub use verdict::{Findings, Verdict};

/// How long staging (one npm command) may take.
pub const STAGING_TIMEOUT: Duration = Duration::from_secs(15 * 60);

/// What the report says of the probes' network.
pub const PRIVATE_NETWORK: &str = "private network namespace (loopback only)";

/// One canary run, as asked.
#[derive(Debug, Clone)]
pub struct CanaryRequest<'a> {
    /// The runtime whose adapter the candidate must satisfy.
    pub descriptor: &'a Descriptor,
    /// The candidate.
    pub candidate: Candidate,
    /// The caller's environment: `PATH` (for npm, node and the probes),
    /// `HOME` (hidden from the candidate), the registry settings (proxies).
    pub environment: &'a HostEnvironment,
    /// The host's state directory, hidden from the candidate like the home.
    pub state_dir: PathBuf,
    /// Where scratch prefixes are made (one per run).
    pub scratch_root: PathBuf,
    /// How long each probe may take.
    pub probe_timeout: Duration,
    /// How long each npm command may take.
    pub staging_timeout: Duration,
    /// Keep the scratch prefix after the run (for a closer look).
    pub keep_scratch: bool,
    /// Run the behaviour stage (`--live`) after the help checks pass.
    pub behaviour: Option<BehaviourSetting>,
}

/// A request the canary cannot act on.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CanaryError {
    /// `--version` for a runtime that is not an npm package.
    #[error("runtime {0} is not published as an npm package: give the candidate with --binary")]
    NoPackage(String),
    /// A version npm would not take as one.
    #[error("{0:?} is not a version or a dist-tag (letters, digits, '.', '+', '-', '_')")]
    BadVersion(String),
}

/// Runs the canary. Blocking: it may install a package and runs several
/// probes, each up to its timeout.
///
/// # Errors
/// Only for a request that cannot be acted on; everything that happens to
/// the candidate is in the report.
pub fn run_canary(request: &CanaryRequest<'_>) -> Result<CanaryReport, CanaryError> {
    let descriptor = request.descriptor;
    let started = SystemTime::now();
    let (started_at, started_stamp) = clock::utc_stamps(started);
    let mut candidate = CandidateRecord::default();
    let hidden = hidden_dirs(request);
    let mut isolation = IsolationRecord {
        sandbox: SANDBOX_DESCRIPTION.to_owned(),
        hidden: hidden.iter().map(|dir| dir.display().to_string()).collect(),
        ..IsolationRecord::default()
    };
    let staging = match &request.candidate {
        Candidate::NpmVersion(version) => {
            let package =
                descriptor.npm_package.as_deref().ok_or_else(|| CanaryError::NoPackage(descriptor.id.clone()))?;
            if !is_acceptable_version(version) {
                return Err(CanaryError::BadVersion(version.clone()));
            }
            candidate.source = "npm".into();
            candidate.package = Some(package.to_owned());
            candidate.requested_version = Some(version.clone());
            let scratch = request.scratch_root.join(format!(
                "{}-{version}-{started_stamp}-{}",
                descriptor.id,
                std::process::id()
            ));
            candidate.staged_in = Some(scratch.display().to_string());
            isolation.writable.push(scratch.display().to_string());
            match NpmRun::from_environment(request.environment, request.staging_timeout) {
                Ok(npm) => stage_npm(descriptor, package, version, &scratch, &npm, &hidden),
                Err(reason) => Err(StagingError::Blocked(reason)),
            }
        }
        Candidate::Binary(path) => {
            candidate.source = "binary".into();
            stage_binary(path)
        }
    };
    let mut findings = Findings::default();
    let mut report = CanaryReport {
        runtime: descriptor.id.clone(),
        verdict: Verdict::Blocked,
        findings: Findings::default(),
        candidate,
        version: report::VersionRecord {
            floor: descriptor.version.floor.clone(),
            floor_status: crate::version::FloorStatus::Indeterminate.as_str().to_owned(),
            ..Default::default()
        },
        network: PRIVATE_NETWORK.to_owned(),
        isolation,
        probes: Vec::new(),
        requirements: Default::default(),
        self_update_switches: Default::default(),
        promotion: PROMOTION.to_owned(),
        steps: Vec::new(),
        behaviour: None,
        started_at,
        started_stamp,
    };
    match staging {
        Ok(staged) => {
            let probed = probe_staged(request, &staged, &hidden, &mut report, &mut findings);
            let passed_help = findings.blocked.is_empty() && findings.failures.is_empty();
            if let (Some(setting), Some(probed), true) = (&request.behaviour, probed, passed_help) {
                let scratch = request.scratch_root.join(format!(
                    "{}-live-{}-{}",
                    descriptor.id,
                    report.started_stamp,
                    std::process::id()
                ));
                let candidate = StagedCandidate {
                    bin_dir: &probed.bin_dir,
                    shown: &probed.shown,
                    search_path: &probed.search_path,
                };
                let outcome = run_behaviour(&descriptor.id, setting, candidate, &hidden, &scratch, &mut findings);
                report.isolation.writable.push(scratch.display().to_string());
                report.steps = outcome.steps;
                report.behaviour = Some(outcome.record);
                if !request.keep_scratch {
                    remove_scratch(&scratch);
                }
            } else if request.behaviour.is_some() {
                report.behaviour = Some(behaviour::BehaviourRecord {
                    comparison: "not_run: the help checks did not pass".to_owned(),
                    ..Default::default()
                });
            }
        }
        Err(StagingError::Blocked(reason)) => findings.blocked.push(format!("staging failed: {reason}")),
        Err(StagingError::SandboxRefused(reason)) => {
            report.isolation.sandbox = format!("none: {reason}; nothing of the candidate ran");
            findings.blocked.push(format!("no sandbox: {reason}"));
        }
        Err(StagingError::NoExecutable(reason)) => findings.failures.push(reason),
    }
    if let Some(scratch) = report.candidate.staged_in.clone().filter(|_| !request.keep_scratch) {
        report.candidate.staged_removed = remove_scratch(&PathBuf::from(scratch));
    }
    report.verdict = findings.verdict();
    report.findings = findings;
    tracing::info!(runtime = %report.runtime, verdict = report.verdict.as_str(), "canary finished");
    Ok(report)
}

/// What no command of the candidate may see: the caller's home and the
/// host's state directory (a home of `/`, when `HOME` is unset, hides
/// nothing more: the sandbox shows nothing of `/` but what it lists).
fn hidden_dirs(request: &CanaryRequest<'_>) -> Vec<PathBuf> {
    let mut hidden: Vec<PathBuf> = [request.environment.home(), request.state_dir.clone()]
        .into_iter()
        .map(|dir| std::path::absolute(&dir).unwrap_or(dir))
        .filter(|dir| dir.parent().is_some())
        .collect();
    hidden.dedup();
    hidden
}

/// What the behaviour stage needs of a probed candidate.
struct Probed {
    /// The directory the candidate's executable is found in.
    bin_dir: PathBuf,
    /// What the sandbox showed of it, read-only.
    shown: Vec<PathBuf>,
    /// The probes' `PATH`.
    search_path: String,
}

fn probe_staged(
    request: &CanaryRequest<'_>,
    staged: &Staged,
    hidden: &[PathBuf],
    report: &mut CanaryReport,
    findings: &mut Findings,
) -> Option<Probed> {
    report.candidate.package_version = staged.package_version.clone();
    match Identity::of(&staged.executable) {
        Ok(identity) => {
            report.candidate.executable = Some(identity.path.display().to_string());
            report.candidate.sha256 = Some(identity.sha256);
        }
        Err(err) => {
            findings.failures.push(format!("cannot read {}: {err}", staged.executable.display()));
            return None;
        }
    }
    let host_path = request.environment.get("PATH").unwrap_or("/usr/bin:/bin");
    let search_path = match &staged.path_prefix {
        Some(prefix) => format!("{}:{host_path}", prefix.display()),
        None => host_path.to_owned(),
    };
    let sandbox = Sandbox {
        network: SandboxNetwork::Private,
        hidden: hidden.to_vec(),
        read_only: staged.scratch.iter().cloned().collect(),
        writable: Vec::new(),
    };
    let mut shown = Vec::new();
    if let Ok(view) = sandbox.view(&staged.executable, Some(&search_path)) {
        report.isolation.read_only = view.read_only.iter().map(|dir| dir.display().to_string()).collect();
        shown = view.read_only;
    }
    let setting = ProbeSetting {
        executable: &staged.executable,
        search_path: Some(&search_path),
        timeout: request.probe_timeout,
        sandbox: &sandbox,
    };
    let seen = probe_offline(request.descriptor, setting, findings);
    report.version = seen.version;
    report.probes = seen.probes;
    report.requirements = seen.requirements;
    report.self_update_switches = seen.switches;
    if seen.sandbox_refused {
        report.network = "none: the sandbox was refused, so no probe ran".to_owned();
        report.isolation.sandbox = "none: the sandbox was refused (see the findings), so no probe ran".to_owned();
    }
    // The live proof's host finds the CLI where the probes did: in the
    // staged prefix's `.bin`, or beside a `--binary` candidate.
    let bin_dir = staged.path_prefix.clone().or_else(|| staged.executable.parent().map(PathBuf::from))?;
    if !shown.iter().any(|dir| bin_dir.starts_with(dir)) {
        shown.push(bin_dir.clone());
    }
    Some(Probed { bin_dir, shown, search_path })
}

/// Removes a scratch prefix; true when it is gone.
fn remove_scratch(scratch: &std::path::Path) -> bool {
    match std::fs::remove_dir_all(scratch) {
        Ok(()) => true,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => true,
        Err(err) => {
            tracing::warn!(scratch = %scratch.display(), "cannot remove the scratch prefix: {err}");
            false
        }
    }
}
