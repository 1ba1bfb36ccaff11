//! `--expect DIR`: a run judged against the records in `DIR` (the
//! committed ones). A step that passed there and does not pass now is a
//! regression, and the run fails; a step that newly passes, or a step the
//! expected record does not have, is no regression. This is what CI runs.

use crate::record::{self, Record, PASS};
use std::path::Path;

/// Every step that passed in `DIR`'s record of its runtime and did not
/// pass in `records`, as `runtime step: result (detail)`.
///
/// # Errors
/// When the expected records cannot be read.
pub fn find(expected_dir: &Path, records: &[Record]) -> Result<Vec<String>, String> {
    let expected = record::read_all(expected_dir)?;
    let mut regressions = Vec::new();
    for now in records {
        let Some(before) = expected.iter().find(|record| record.runtime == now.runtime) else { continue };
        for step in before.steps.iter().filter(|step| step.result == PASS) {
            match now.step(&step.name) {
                Some(current) if current.result == PASS => {}
                Some(current) => regressions.push(format!(
                    "{} {}: {} ({})",
                    now.runtime,
                    step.name,
                    current.result,
                    current.detail.chars().take(300).collect::<String>()
                )),
                None => regressions.push(format!("{} {}: not run", now.runtime, step.name)),
            }
        }
    }
    Ok(regressions)
}
