//! docs/COMPATIBILITY.md claims only what tests/live-records/ shows: every
//! `live proof V` cell needs a record of that runtime, of version `V`, with
//! a passing step behind the cell's column. The page must also be exactly
//! what `panehost-live --doc-only` makes of the records and the adapters'
//! declarations. None of this runs a CLI.

#[allow(dead_code)]
#[path = "../src/bin/panehost-live/record.rs"]
mod record;

#[allow(dead_code)]
#[path = "../src/bin/panehost-live/compatibility.rs"]
mod compatibility;

use compatibility::{Column, COLUMNS, DOC_COMMAND, LIVE_PROOF, TABLE_END, TABLE_START};
use record::{Record, StepRecord, PASS};
use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn page() -> String {
    let path = repo().join("docs/COMPATIBILITY.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

fn records() -> Vec<Record> {
    record::read_all(&repo().join("tests/live-records")).unwrap_or_else(|e| panic!("{e}"))
}

/// The problems with the page's `live proof` cells, given `records`.
fn check(page: &str, records: &[Record]) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(start) = page.find(TABLE_START) else { return vec!["the table's start marker is missing".into()] };
    let Some(end) = page.find(TABLE_END) else { return vec!["the table's end marker is missing".into()] };
    let mut lines = page[start + TABLE_START.len()..end].lines().filter(|l| l.starts_with('|'));
    let Some(header) = lines.next() else { return vec!["the table has no header".into()] };
    let titles: Vec<&str> = cells(header);
    for line in lines.skip(1) {
        let row = cells(line);
        let runtime = row.first().map(|c| c.trim_matches('`')).unwrap_or_default();
        for (index, cell) in row.iter().enumerate() {
            for item in cell.split("<br>").map(str::trim).filter(|item| item.starts_with(LIVE_PROOF)) {
                let title = titles.get(index).copied().unwrap_or_default();
                let Some(column) = COLUMNS.iter().find(|c| c.title == title) else {
                    problems.push(format!("{runtime}: {item:?} in column {title:?}, which no record step backs"));
                    continue;
                };
                if let Err(problem) = backed(runtime, item, column, records) {
                    problems.push(format!("{runtime}, {title}: {item:?}: {problem}"));
                }
            }
        }
    }
    problems
}

fn cells(line: &str) -> Vec<&str> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(str::trim).collect()
}

/// Whether `item` (`live proof V` or `live proof V (reference, latest)`)
/// is backed by a passing step of `runtime`'s record.
fn backed(runtime: &str, item: &str, column: &Column, records: &[Record]) -> Result<(), String> {
    let rest = item[LIVE_PROOF.len()..].trim();
    let (version, named) = match rest.split_once(" (") {
        Some((version, named)) => (version.trim(), Some(named.trim_end_matches(')'))),
        None => (rest, None),
    };
    let record = records.iter().find(|r| r.runtime == runtime).ok_or("no record in tests/live-records/")?;
    if record.cli_version != version {
        return Err(format!("the record is of version {:?}", record.cli_version));
    }
    let passing: Vec<&StepRecord> =
        column.steps.iter().filter_map(|name| record.step(name)).filter(|step| step.result == PASS).collect();
    if passing.is_empty() {
        return Err(format!("no step of {:?} passed in the record", column.steps));
    }
    if let Some(named) = named {
        for short in named.split(", ") {
            let found = passing.iter().any(|step| step.name == short || step.name.ends_with(&format!("_{short}")));
            if !found {
                return Err(format!("the record has no passing step for {short:?}"));
            }
        }
    }
    Ok(())
}

#[test]
fn every_live_proof_cell_has_a_passing_step_in_a_record() {
    let problems = check(&page(), &records());
    assert!(
        problems.is_empty(),
        "docs/COMPATIBILITY.md claims more than tests/live-records/ shows:\n{}",
        problems.join("\n")
    );
}

#[test]
fn the_page_is_generated_from_the_records_and_the_declarations() {
    let expected = compatibility::render(&panehost_adapters::runtimes::built_in(), &records());
    assert!(
        page() == expected,
        "docs/COMPATIBILITY.md is not what the records and the descriptors make; regenerate it:\n  {DOC_COMMAND}"
    );
}

#[test]
fn a_live_cell_without_a_record_or_a_passing_step_is_caught() {
    let descriptors = panehost_adapters::runtimes::built_in();
    let step = |name: &str, result: &str| StepRecord {
        name: name.into(),
        result: result.into(),
        detail: String::new(),
        ms: 1,
    };
    let record = Record {
        runtime: "claude".into(),
        cli_version: "9.9.9".into(),
        binary_sha256: String::new(),
        host_version: "panehost test".into(),
        date: "2000-01-01".into(),
        steps: vec![step("start", PASS), step("send", PASS), step("resume_reference", PASS)],
    };
    let page = compatibility::render(&descriptors, std::slice::from_ref(&record));
    assert!(check(&page, std::slice::from_ref(&record)).is_empty(), "a page made from its own records passes");
    assert!(page.contains("live proof 9.9.9 (reference)"));

    let without = check(&page, &[]);
    assert!(without.iter().any(|p| p.contains("no record")), "{without:?}");

    let mut failed = record.clone();
    failed.steps[1].result = "fail".into();
    let problems = check(&page, std::slice::from_ref(&failed));
    assert!(problems.iter().any(|p| p.contains("send") && p.contains("no step")), "{problems:?}");

    let mut other = record.clone();
    other.cli_version = "1.0.0".into();
    assert!(!check(&page, &[other]).is_empty());
}

#[test]
fn end_to_end_cells_name_tests_that_drive_that_runtime() {
    for (runtime, column, file) in compatibility::END_TO_END_TESTS {
        let path = repo().join("tests/tests").join(file);
        let text =
            std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{runtime} {column}: {}: {e}", path.display()));
        assert!(text.contains(&format!("\"{runtime}\"")), "{} does not start {runtime}", path.display());
    }
}
