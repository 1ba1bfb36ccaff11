//! `--boundaries`: each permission profile shown enforced by the real CLI.
//!
//! For one runtime, after `install` and `detect`, one step per case of
//! `cases.rs`, each in a pane of its own started through the host with the
//! case's `permission_profile`: the fixture plays a model that asks the CLI
//! to write a file with the CLI's own writing tool, or its shell tool (the
//! case says which first), and the step checks on disk whether the file was
//! written, with what the CLI told the model and showed on its screen
//! (`probe.rs`, `verdict.rs`). Then `leftovers`, as in the other proof.
//!
//! The record has the shape of the other live records (version, SHA-256,
//! steps with their results and durations) and goes to
//! `RECORDS/boundaries/<id>.json`, apart from theirs.

pub mod cases;
mod log;
mod probe;
mod verdict;

use crate::detect;
use crate::outcome::{skipped, timed};
use crate::record::StepRecord;
use crate::run::{self, Ctx, State};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The most one probe may take: a start, a turn, perhaps a declined
/// approval, a close.
const PROBE_LIMIT: Duration = Duration::from_secs(150);

/// Where the records of the boundary proof go, under the records directory.
pub fn records_dir(records: &Path) -> PathBuf {
    records.join("boundaries")
}

/// Runs every probe for `ctx`'s runtime after its `install` step.
pub async fn run(ctx: &Ctx<'_>, install: StepRecord) -> (Vec<StepRecord>, State) {
    let mut steps = vec![install];
    let mut state = State::default();
    steps.push(timed("detect", run::STEP_LIMIT, detect::run(ctx, &mut state)).await);
    let found = state.info.as_ref().is_some_and(|info| info.available);
    for case in cases::CASES {
        if !found {
            steps.push(skipped(case.name, "the host did not find the CLI"));
        } else {
            steps.push(timed(case.name, PROBE_LIMIT, probe::run(ctx, case)).await);
        }
    }
    steps.push(timed("leftovers", run::STEP_LIMIT, run::leftovers(ctx)).await);
    (steps, state)
}
