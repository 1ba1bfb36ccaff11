//! The canary's report: a JSON document (see docs/CANARY.md for every
//! field), a summary for people, and the file it is kept in.

use crate::canary::behaviour::{BehaviourRecord, StepComparison};
use crate::canary::verdict::{Findings, Verdict};
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What the report says about promotion, always.
pub const PROMOTION: &str = "not performed: the canary never installs, replaces or points anything at the candidate";

/// One canary run, as reported.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CanaryReport {
    /// The runtime id.
    pub runtime: String,
    /// The conclusion.
    pub verdict: Verdict,
    /// Why, in sentences: blocked, failures and unverified items.
    pub findings: Findings,
    /// The candidate and where it came from.
    pub candidate: CandidateRecord,
    /// What `--version` printed, and the floor check.
    pub version: VersionRecord,
    /// How the probes were cut off from the network.
    pub network: String,
    /// What the candidate's commands (npm, its install scripts, the
    /// probes) could see of the filesystem.
    pub isolation: IsolationRecord,
    /// Every probe that ran, in order.
    pub probes: Vec<ProbeRecord>,
    /// The flags, words and values the adapter relies on, as checked.
    pub requirements: RequirementsRecord,
    /// The self-update switches, as seen in the help or not.
    pub self_update_switches: SwitchesRecord,
    /// Always [`PROMOTION`].
    pub promotion: String,
    /// With `--live`: each step of the live proof, the candidate's result
    /// beside the pinned version's (empty without it).
    pub steps: Vec<StepComparison>,
    /// With `--live`: how the behaviour stage ran.
    pub behaviour: Option<BehaviourRecord>,
    /// When the run started (UTC, `2026-11-30T09:41:07Z`).
    pub started_at: String,
    /// The same moment for file names (`20261130T094107Z`).
    #[serde(skip)]
    pub started_stamp: String,
}

/// Where the candidate came from.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct CandidateRecord {
    /// `npm` (staged from the registry) or `binary` (probed where it is).
    pub source: String,
    /// The npm package, when staged.
    pub package: Option<String>,
    /// The version asked for, when staged.
    pub requested_version: Option<String>,
    /// The version the installed `package.json` declares, when staged.
    pub package_version: Option<String>,
    /// The executable probed (links resolved), when there was one.
    pub executable: Option<String>,
    /// Its SHA-256, lowercase hex.
    pub sha256: Option<String>,
    /// The scratch prefix it was staged in.
    pub staged_in: Option<String>,
    /// Whether that prefix was removed after the probes.
    pub staged_removed: bool,
}

/// What the candidate's commands could see of the filesystem.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct IsolationRecord {
    /// How they were isolated
    /// ([`SANDBOX_DESCRIPTION`](crate::sandbox::SANDBOX_DESCRIPTION)), or
    /// `none: ...` when the sandbox was refused and so nothing of the
    /// candidate ran.
    pub sandbox: String,
    /// Replaced by empty read-only directories: the caller's home and the
    /// host's state directory.
    pub hidden: Vec<String>,
    /// Shown read-only to the probes: the system directories, and the
    /// staged prefix or the candidate's own package tree.
    pub read_only: Vec<String>,
    /// Writable, besides each command's scratch home and its own empty
    /// `/tmp`: the scratch prefix, while npm staged the package.
    pub writable: Vec<String>,
}

/// The version probe's reading.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct VersionRecord {
    /// The first line of the output holding a dotted version.
    pub printed: Option<String>,
    /// The adapter's floor.
    pub floor: Option<String>,
    /// `at_or_above`, `below` or `indeterminate`.
    pub floor_status: String,
}

/// One probe.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ProbeRecord {
    /// The arguments after the executable.
    pub args: Vec<String>,
    /// `exit status: 0`, `signal: 9`, `timed out`, or why it did not run.
    pub exit: String,
    /// How long it took.
    pub seconds: f64,
    /// Bytes of output (standard output and error).
    pub output_bytes: usize,
    /// The first line of output that is not blank.
    pub first_line: String,
}

/// The requirements of `relied_flags`, checked against the help.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct RequirementsRecord {
    /// Every requirement, as `token` (`flag` or `value`, `any` help or a
    /// subcommand's).
    pub checked: Vec<String>,
    /// Those the help does not list.
    pub missing: Vec<String>,
}

/// The self-update switches, which help seldom lists.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct SwitchesRecord {
    /// Shown in the help.
    pub seen: Vec<String>,
    /// Not shown (unverified).
    pub unseen: Vec<String>,
}

impl CanaryReport {
    /// The report as pretty JSON.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(self).unwrap_or_else(|err| format!("{{\"error\": \"{err}\"}}"))
    }

    /// The version in the report's file name: the one asked for, else the
    /// one printed, else `unknown`.
    pub fn version_label(&self) -> String {
        let printed = self
            .version
            .printed
            .as_deref()
            .and_then(crate::version::parse_version)
            .map(|parts| parts.iter().map(u64::to_string).collect::<Vec<_>>().join("."));
        self.candidate.requested_version.clone().or(printed).unwrap_or_else(|| "unknown".to_owned())
    }

    /// Writes the report to `DIR/<runtime>-<version>-<time>.json` (a temp
    /// file renamed into place) and returns the path.
    ///
    /// # Errors
    /// Fails when the directory or the file cannot be written.
    pub fn write_to(&self, dir: &Path) -> std::io::Result<PathBuf> {
        std::fs::create_dir_all(dir)?;
        let name = format!("{}-{}-{}.json", self.runtime, self.version_label(), self.started_stamp);
        let path = dir.join(name);
        let temporary = dir.join(format!(".{}.{}.tmp", self.runtime, std::process::id()));
        std::fs::write(&temporary, self.to_json() + "\n")?;
        std::fs::rename(&temporary, &path)?;
        Ok(path)
    }

    /// A few lines for people.
    pub fn summary(&self) -> String {
        let mut lines = vec![format!("canary {} {}: {}", self.runtime, self.version_label(), self.verdict.as_str())];
        let candidate = &self.candidate;
        match (&candidate.package, &candidate.requested_version) {
            (Some(package), Some(version)) => {
                lines.push(format!("  candidate: {package}@{version} from the npm registry"))
            }
            _ => lines.push(format!("  candidate: {}", candidate.executable.as_deref().unwrap_or("-"))),
        }
        lines.push(format!(
            "  version:   {} (floor {}: {})",
            self.version.printed.as_deref().unwrap_or("-"),
            self.version.floor.as_deref().unwrap_or("none"),
            self.version.floor_status
        ));
        lines.push(format!("  network:   {}", self.network));
        let isolation = &self.isolation;
        if isolation.sandbox.starts_with("none") {
            lines.push(format!("  files:     {}", isolation.sandbox));
        } else {
            lines.push(format!(
                "  files:     sandboxed: {} hidden (empty, read-only); writable: {}",
                isolation.hidden.join(", "),
                if isolation.writable.is_empty() { "a scratch home".to_owned() } else { isolation.writable.join(", ") }
            ));
        }
        lines.push(format!(
            "  flags:     {} checked, {} missing",
            self.requirements.checked.len(),
            self.requirements.missing.len()
        ));
        if let Some(behaviour) = &self.behaviour {
            let changed = self.steps.iter().filter(|step| step.changed).count();
            lines.push(format!(
                "  behaviour: {} ({} steps against the pinned {}, {changed} changed)",
                behaviour.comparison,
                self.steps.len(),
                behaviour.pinned_version.as_deref().unwrap_or("-")
            ));
        }
        let sections = [
            ("blocked", &self.findings.blocked),
            ("failure", &self.findings.failures),
            ("unverified", &self.findings.unverified),
        ];
        for (label, items) in sections {
            lines.extend(items.iter().map(|item| format!("  {label}: {item}")));
        }
        lines.push(format!("  promotion: {}", self.promotion));
        lines.join("\n")
    }
}
