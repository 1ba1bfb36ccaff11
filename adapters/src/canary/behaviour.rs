//! The canary's behaviour stage (`--live`): the candidate goes through the
//! live proof's steps, and each step is compared with the pinned version's
//! record.
//!
//! The help text shows that a flag is listed, not that the CLI still
//! starts, answers, resumes and stops as the adapter expects. This stage
//! runs `panehost-live` (the live proof, `tests/src/bin/panehost-live`)
//! with `--candidate-bin-dir` pointing at the staged candidate, offline
//! against the local model endpoint fixture, and `--comparison` against the
//! pinned version's record. Everything runs in the canary's sandbox (no
//! network but loopback, the home and the state directory hidden): the live
//! proof's host, its keepers, the fixture and the candidate alike. The
//! verdict is PASS only when every step that passed for the pinned version
//! passes for the candidate; a step that changed is named with the live
//! proof's detail (the screen text it stopped at).

use crate::canary::verdict::Findings;
use crate::probe::{describe_exit, run_probe_capturing, ProbeError, ProbeExit, ProbeRequest};
use crate::sandbox::{Sandbox, SandboxNetwork, SYSTEM_DIRS};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// How long the whole live proof of one candidate may take: its own
/// limits end one runtime within five minutes, and a host and a fixture
/// start and stop around it.
pub const BEHAVIOUR_TIMEOUT: Duration = Duration::from_secs(12 * 60);

/// The name of the comparison file the live proof writes.
const COMPARISON_FILE: &str = "comparison.json";

/// How much of a step's detail a finding quotes.
const DETAIL_QUOTED: usize = 400;

/// Where the live proof is, and what it compares with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BehaviourSetting {
    /// The `panehost-live` executable; `panehost` and
    /// `panehost-model-endpoint` must be beside it.
    pub live_program: PathBuf,
    /// The pinned versions' records (`tests/live-records`).
    pub pinned_records: PathBuf,
    /// How long the run may take.
    pub timeout: Duration,
}

/// The candidate as the behaviour stage runs it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct StagedCandidate<'a> {
    /// The directory the live proof's host finds the CLI in.
    pub(crate) bin_dir: &'a Path,
    /// What of the candidate the sandbox must show read-only (its staged
    /// prefix or package tree, and `node`).
    pub(crate) shown: &'a [PathBuf],
    /// `PATH` for the live proof (the candidate's directory first).
    pub(crate) search_path: &'a str,
}

/// One step of the candidate's run beside the pinned version's.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepComparison {
    /// The live proof's step (`start`, `send`, `resume_reference`, ...).
    pub name: String,
    /// The candidate's result: `pass`, `fail`, `not_applicable`,
    /// `blocked`, or `not_run`.
    pub result: String,
    /// The pinned version's result, when its record has the step.
    pub pinned_result: Option<String>,
    /// It passed for the pinned version and does not for the candidate.
    pub changed: bool,
    /// What the live proof saw, for people.
    pub detail: String,
}

/// What the live proof writes with `--comparison`.
#[derive(Debug, Clone, Deserialize)]
struct Comparison {
    runtime: String,
    pinned_version: Option<String>,
    candidate_version: String,
    verdict: String,
    steps: Vec<StepComparison>,
}

/// The behaviour stage as reported.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct BehaviourRecord {
    /// `PASS`, `FAIL`, `NO_PINNED_RECORD`, or `not_run: <why>`.
    pub comparison: String,
    /// The pinned version the steps are compared with.
    pub pinned_version: Option<String>,
    /// The version the candidate printed in the live proof's `detect`.
    pub candidate_version: Option<String>,
    /// How the live proof ended.
    pub exit: String,
    /// How long it took.
    pub seconds: f64,
    /// The last lines the live proof printed (its progress).
    pub output_tail: Vec<String>,
}

/// What the stage found: its record and the steps.
#[derive(Debug, Clone, Default)]
pub(crate) struct BehaviourOutcome {
    pub(crate) record: BehaviourRecord,
    pub(crate) steps: Vec<StepComparison>,
}

/// Runs the live proof on the candidate in the sandbox, in `scratch` (a new
/// directory, writable inside), and records what changed in `findings`.
pub(crate) fn run_behaviour(
    runtime: &str,
    setting: &BehaviourSetting,
    candidate: StagedCandidate<'_>,
    hidden: &[PathBuf],
    scratch: &Path,
    findings: &mut Findings,
) -> BehaviourOutcome {
    let mut outcome = BehaviourOutcome::default();
    if !setting.pinned_records.join(format!("{runtime}.json")).is_file() {
        let why = format!(
            "no live record of the pinned version of {runtime} in {} to compare with",
            setting.pinned_records.display()
        );
        findings.unverified.push(format!("behaviour not judged: {why}"));
        outcome.record.comparison = format!("not_run: {why}");
        return outcome;
    }
    let Some(bin_dir) = setting.live_program.parent() else {
        findings.blocked.push(format!("the live proof {} has no directory", setting.live_program.display()));
        return outcome;
    };
    if let Err(err) = std::fs::create_dir_all(scratch.join("cache")) {
        findings.blocked.push(format!("cannot make the behaviour stage's scratch {}: {err}", scratch.display()));
        return outcome;
    }
    let mut read_only: Vec<PathBuf> = vec![bin_dir.to_path_buf(), setting.pinned_records.clone()];
    read_only.extend(
        candidate.shown.iter().filter(|dir| !SYSTEM_DIRS.iter().any(|system| dir.starts_with(system))).cloned(),
    );
    let sandbox = Sandbox {
        network: SandboxNetwork::Private,
        hidden: hidden.to_vec(),
        read_only,
        writable: vec![scratch.to_path_buf()],
    };
    let comparison_file = scratch.join(COMPARISON_FILE);
    let arg = |path: &Path| path.display().to_string();
    let args = [
        "--runtime".to_owned(),
        runtime.to_owned(),
        "--candidate-bin-dir".to_owned(),
        arg(candidate.bin_dir),
        "--cache".to_owned(),
        arg(&scratch.join("cache")),
        "--records".to_owned(),
        arg(&scratch.join("records")),
        "--doc".to_owned(),
        arg(&scratch.join("COMPATIBILITY.md")),
        "--expect".to_owned(),
        arg(&setting.pinned_records),
        "--comparison".to_owned(),
        arg(&comparison_file),
    ];
    let request = ProbeRequest {
        program: &setting.live_program,
        args: &args,
        search_path: Some(candidate.search_path),
        extra_env: &[],
        timeout: setting.timeout,
        sandbox: Some(&sandbox),
    };
    let started = Instant::now();
    let run = run_probe_capturing(&request);
    outcome.record.seconds = (started.elapsed().as_secs_f64() * 10.0).round() / 10.0;
    let run = match run {
        Ok(run) => run,
        Err(ProbeError::SandboxRefused(reason)) => {
            findings.blocked.push(format!("no sandbox for the live proof: {reason}"));
            outcome.record.comparison = "not_run: no sandbox".to_owned();
            return outcome;
        }
        Err(err) => {
            findings.blocked.push(format!("the live proof did not run: {err}"));
            outcome.record.comparison = "not_run: the live proof did not run".to_owned();
            return outcome;
        }
    };
    outcome.record.exit = describe_exit(run.exit);
    outcome.record.output_tail = tail(&run.stderr, 12);
    let comparison = std::fs::read_to_string(&comparison_file)
        .ok()
        .and_then(|text| serde_json::from_str::<Comparison>(&text).ok())
        .filter(|comparison| comparison.runtime == runtime);
    let Some(comparison) = comparison else {
        let how = if run.exit == ProbeExit::TimedOut { "timed out" } else { "ended" };
        findings.blocked.push(format!(
            "the live proof {how} ({}) without comparing the steps: {}",
            outcome.record.exit,
            outcome.record.output_tail.last().map(String::as_str).unwrap_or("no output")
        ));
        outcome.record.comparison = "not_run: the live proof wrote no comparison".to_owned();
        return outcome;
    };
    judge(&comparison, findings);
    outcome.record.comparison = comparison.verdict.clone();
    outcome.record.pinned_version = comparison.pinned_version;
    outcome.record.candidate_version = Some(comparison.candidate_version).filter(|version| !version.is_empty());
    outcome.steps = comparison.steps;
    outcome
}

/// A finding for every step that passed for the pinned version and does
/// not now, quoting what the live proof saw.
fn judge(comparison: &Comparison, findings: &mut Findings) {
    let pinned = comparison.pinned_version.as_deref().unwrap_or("?");
    for step in comparison.steps.iter().filter(|step| step.changed) {
        let detail: String = step.detail.chars().take(DETAIL_QUOTED).collect();
        findings.failures.push(format!(
            "behaviour: `{}` passed for the pinned {pinned} and is `{}` for the candidate: {detail}",
            step.name, step.result
        ));
    }
    if comparison.verdict == "NO_PINNED_RECORD" {
        findings.unverified.push("behaviour not judged: the live proof found no pinned record".to_owned());
    }
}

/// The last `count` non-empty lines of `text`.
fn tail(text: &str, count: usize) -> Vec<String> {
    let lines: Vec<&str> = text.lines().map(str::trim_end).filter(|line| !line.is_empty()).collect();
    lines[lines.len().saturating_sub(count)..].iter().map(|line| (*line).to_owned()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn comparison(steps: &[(&str, &str, Option<&str>)]) -> Comparison {
        Comparison {
            runtime: "codex".into(),
            pinned_version: Some("0.171.0".into()),
            candidate_version: "0.172.0".into(),
            verdict: "FAIL".into(),
            steps: steps
                .iter()
                .map(|(name, result, pinned)| StepComparison {
                    name: (*name).into(),
                    result: (*result).into(),
                    pinned_result: pinned.map(str::to_owned),
                    changed: *pinned == Some("pass") && *result != "pass",
                    detail: format!("the screen of {name}"),
                })
                .collect(),
        }
    }

    #[test]
    fn a_step_that_changed_is_a_failure_naming_it_with_what_was_seen() {
        let mut findings = Findings::default();
        judge(
            &comparison(&[("start", "pass", Some("pass")), ("send", "fail", Some("pass")), ("new", "fail", None)]),
            &mut findings,
        );
        assert_eq!(findings.failures.len(), 1, "{findings:?}");
        let failure = &findings.failures[0];
        assert!(failure.contains("`send` passed for the pinned 0.171.0 and is `fail`"), "{failure}");
        assert!(failure.contains("the screen of send"), "{failure}");
    }

    #[test]
    fn the_comparison_file_the_live_proof_writes_is_read() {
        let text = r#"{"runtime":"codex","pinned_version":"0.171.0","candidate_version":"0.172.0","verdict":"PASS",
            "steps":[{"name":"start","result":"pass","pinned_result":"pass","changed":false,"detail":"settled"}]}"#;
        let read: Comparison = serde_json::from_str(text).unwrap();
        assert_eq!(read.steps[0].name, "start");
        let mut findings = Findings::default();
        judge(&read, &mut findings);
        assert_eq!(findings, Findings::default());
    }

    #[test]
    fn the_tail_keeps_the_last_lines() {
        assert_eq!(tail("a\n\nb\nc\n", 2), ["b", "c"]);
        assert!(tail("", 3).is_empty());
    }
}
