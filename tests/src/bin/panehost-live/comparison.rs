//! `--comparison FILE`: every step of a run beside the same step of the
//! expected record (the pinned version's), with a verdict. The canary's
//! behaviour stage (docs/CANARY.md) runs a candidate version through the
//! live proof and reads this file.
//!
//! ```json
//! {"runtime": "codex", "pinned_version": "0.171.0", "candidate_version": "0.172.0",
//!  "verdict": "FAIL",
//!  "steps": [{"name": "start", "result": "fail", "pinned_result": "pass",
//!             "changed": true, "detail": "…the screen it stopped at…"}]}
//! ```
//!
//! `verdict` is `PASS` when every step that passed for the pinned version
//! passes again, `FAIL` when one does not (that step is `changed`), and
//! `NO_PINNED_RECORD` when the expected directory has no record of the
//! runtime. A step the pinned record lacks has no `pinned_result`; a
//! pinned step this run did not reach is listed with the result `not_run`.

use crate::record::{self, Record, PASS};
use serde::Serialize;
use std::path::Path;

/// The verdict when every step that passed before passes again.
const PASS_VERDICT: &str = "PASS";
/// The verdict when one does not.
const FAIL_VERDICT: &str = "FAIL";
/// The verdict when there is nothing to compare with.
const NO_PINNED_RECORD: &str = "NO_PINNED_RECORD";
/// The result of a pinned step this run did not reach.
const NOT_RUN: &str = "not_run";

/// One runtime's run beside its pinned record.
#[derive(Debug, Serialize)]
struct Comparison<'a> {
    runtime: &'a str,
    pinned_version: Option<&'a str>,
    candidate_version: &'a str,
    verdict: &'static str,
    steps: Vec<StepComparison<'a>>,
}

/// One step beside the pinned record's.
#[derive(Debug, Serialize)]
struct StepComparison<'a> {
    name: &'a str,
    result: &'a str,
    pinned_result: Option<&'a str>,
    /// It passed for the pinned version and does not now.
    changed: bool,
    detail: &'a str,
}

/// Writes the comparison of the one record in `records` (the candidate's
/// run) with its expected record in `expected_dir`, to `file`.
///
/// # Errors
/// No record or more than one, expected records that cannot be read, or a
/// file that cannot be written.
pub fn write(expected_dir: &Path, records: &[Record], file: &Path) -> Result<(), String> {
    let [candidate] = records else {
        return Err(format!("a comparison is of one runtime's run; this run has {}", records.len()));
    };
    let expected = record::read_all(expected_dir)?;
    let pinned = expected.iter().find(|record| record.runtime == candidate.runtime);
    let comparison = compare(candidate, pinned);
    let text = serde_json::to_string_pretty(&comparison).map_err(|e| e.to_string())?;
    std::fs::write(file, text + "\n").map_err(|e| format!("cannot write {}: {e}", file.display()))?;
    eprintln!("[live] comparison with the pinned record: {} ({})", comparison.verdict, file.display());
    Ok(())
}

fn compare<'a>(candidate: &'a Record, pinned: Option<&'a Record>) -> Comparison<'a> {
    let Some(pinned) = pinned else {
        return Comparison {
            runtime: &candidate.runtime,
            pinned_version: None,
            candidate_version: &candidate.cli_version,
            verdict: NO_PINNED_RECORD,
            steps: candidate.steps.iter().map(|step| unpinned(step.name.as_str(), step)).collect(),
        };
    };
    let mut steps: Vec<StepComparison<'a>> = candidate
        .steps
        .iter()
        .map(|step| {
            let pinned_result = pinned.step(&step.name).map(|before| before.result.as_str());
            StepComparison {
                name: &step.name,
                result: &step.result,
                pinned_result,
                changed: pinned_result == Some(PASS) && step.result != PASS,
                detail: &step.detail,
            }
        })
        .collect();
    for before in pinned.steps.iter().filter(|before| candidate.step(&before.name).is_none()) {
        steps.push(StepComparison {
            name: &before.name,
            result: NOT_RUN,
            pinned_result: Some(&before.result),
            changed: before.result == PASS,
            detail: "this run did not reach the step",
        });
    }
    let verdict = if steps.iter().any(|step| step.changed) { FAIL_VERDICT } else { PASS_VERDICT };
    Comparison {
        runtime: &candidate.runtime,
        pinned_version: Some(&pinned.cli_version),
        candidate_version: &candidate.cli_version,
        verdict,
        steps,
    }
}

fn unpinned<'a>(name: &'a str, step: &'a record::StepRecord) -> StepComparison<'a> {
    StepComparison { name, result: &step.result, pinned_result: None, changed: false, detail: &step.detail }
}

#[cfg(test)]
mod tests {
    use super::*;
    use record::StepRecord;

    fn run(version: &str, steps: &[(&str, &str)]) -> Record {
        Record {
            runtime: "codex".into(),
            cli_version: version.into(),
            binary_sha256: String::new(),
            host_version: String::new(),
            date: String::new(),
            steps: steps
                .iter()
                .map(|(name, result)| StepRecord {
                    name: (*name).into(),
                    result: (*result).into(),
                    detail: format!("{name} detail"),
                    ms: 1,
                })
                .collect(),
        }
    }

    #[test]
    fn a_step_that_passed_for_the_pin_and_fails_now_is_named() {
        let pinned = run("1.0.0", &[("start", "pass"), ("send", "pass"), ("resume_latest", "not_applicable")]);
        let candidate = run("1.1.0", &[("start", "pass"), ("send", "fail"), ("resume_latest", "pass")]);
        let comparison = compare(&candidate, Some(&pinned));
        assert_eq!(comparison.verdict, FAIL_VERDICT);
        let changed: Vec<&str> = comparison.steps.iter().filter(|step| step.changed).map(|step| step.name).collect();
        assert_eq!(changed, ["send"]);
        assert_eq!(comparison.steps[1].detail, "send detail");
        assert_eq!(comparison.pinned_version, Some("1.0.0"));
    }

    #[test]
    fn every_pinned_pass_passing_again_is_a_pass_and_a_step_not_reached_is_not() {
        let pinned = run("1.0.0", &[("start", "pass"), ("send", "blocked")]);
        let same = run("1.1.0", &[("start", "pass"), ("send", "fail"), ("new_step", "fail")]);
        assert_eq!(compare(&same, Some(&pinned)).verdict, PASS_VERDICT);
        let short = run("1.1.0", &[("send", "pass")]);
        let comparison = compare(&short, Some(&pinned));
        assert_eq!(comparison.verdict, FAIL_VERDICT);
        let start = comparison.steps.iter().find(|step| step.name == "start").unwrap();
        assert_eq!((start.result, start.changed), (NOT_RUN, true));
    }

    #[test]
    fn without_a_pinned_record_there_is_nothing_to_judge() {
        let candidate = run("1.1.0", &[("start", "pass")]);
        let comparison = compare(&candidate, None);
        assert_eq!(comparison.verdict, NO_PINNED_RECORD);
        assert_eq!(comparison.steps[0].pinned_result, None);
    }
}
