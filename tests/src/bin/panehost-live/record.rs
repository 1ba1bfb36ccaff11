//! One JSON record per runtime run, in `tests/live-records/<runtime>.json`:
//! the evidence behind every `live proof` cell of docs/COMPATIBILITY.md.
//!
//! ```json
//! {"runtime": "claude", "cli_version": "2.1.197", "binary_sha256": "…",
//!  "host_version": "panehost 0.1.0", "date": "2026-11-30",
//!  "steps": [{"name": "start", "result": "pass", "detail": "…", "ms": 5210}]}
//! ```
//!
//! `result` is `pass`, `fail`, `not_applicable` (a declared limitation,
//! named in `detail`) or `blocked` (the CLI cannot do it offline: it
//! insists on its vendor's sign-in or servers; `detail` starts with the
//! short reason, up to the first `: `, then the evidence). Paths never appear as they were on the machine that
//! ran: the scratch HOME is `<home>`, the CLI cache `<cache>`, the scratch
//! directory `<scratch>`, the repository `<repo>`.
//!
//! This file is also compiled into `tests/tests/compatibility_doc.rs`.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// `result` of a step that showed what it set out to show.
pub const PASS: &str = "pass";
/// `result` of a step that did not.
pub const FAIL: &str = "fail";
/// `result` of a step the runtime declares it cannot do.
pub const NOT_APPLICABLE: &str = "not_applicable";
/// `result` of a step the CLI cannot do offline (its vendor's sign-in or
/// servers stand in the way), with the reason first in `detail`.
pub const BLOCKED: &str = "blocked";

/// The short reason of a `blocked` step: its detail up to the first `: `.
pub fn blocked_reason(detail: &str) -> &str {
    detail.split_once(": ").map_or(detail, |(reason, _)| reason)
}

/// One runtime's run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Record {
    /// The runtime id.
    pub runtime: String,
    /// The version the CLI printed (its dotted number), or `""` when it
    /// could not be read.
    pub cli_version: String,
    /// SHA-256 of the executable the host identified, or `""`.
    pub binary_sha256: String,
    /// The host's name and version from its handshake.
    pub host_version: String,
    /// The day of the run, UTC, `YYYY-MM-DD`.
    pub date: String,
    /// Every step, in the order it ran.
    pub steps: Vec<StepRecord>,
}

/// One step of a run.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct StepRecord {
    /// The step: `install`, `detect`, `start`, `send`, `completion`,
    /// `interrupt`, `close`, `resume_reference`, `resume_latest`,
    /// `reconnect`, `leftovers`.
    pub name: String,
    /// `pass`, `fail`, `not_applicable` or `blocked`.
    pub result: String,
    /// What was seen, for people.
    pub detail: String,
    /// How long the step took, in milliseconds.
    pub ms: u64,
}

impl Record {
    /// The step called `name`, if the run has one.
    pub fn step(&self, name: &str) -> Option<&StepRecord> {
        self.steps.iter().find(|step| step.name == name)
    }
}

/// Reads every `*.json` record in `dir`, sorted by runtime id.
///
/// # Errors
/// A file that cannot be read or is not a record, naming the file.
pub fn read_all(dir: &Path) -> Result<Vec<Record>, String> {
    let mut records = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(error) if error.kind() == std::io::ErrorKind::NotFound => return Ok(records),
        Err(error) => return Err(format!("cannot list {}: {error}", dir.display())),
    };
    for entry in entries {
        let path = entry.map_err(|e| format!("cannot list {}: {e}", dir.display()))?.path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
        let record: Record =
            serde_json::from_str(&text).map_err(|e| format!("{} is not a live record: {e}", path.display()))?;
        let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default();
        if record.runtime != stem {
            return Err(format!("{} holds the record of {:?}", path.display(), record.runtime));
        }
        records.push(record);
    }
    records.sort_by(|a, b| a.runtime.cmp(&b.runtime));
    Ok(records)
}

/// Writes `record` to `dir/<runtime>.json`, replacing an earlier one.
///
/// # Errors
/// When the directory or file cannot be written.
pub fn write(dir: &Path, record: &Record) -> Result<(), String> {
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let path = dir.join(format!("{}.json", record.runtime));
    let mut text = serde_json::to_string_pretty(record).map_err(|e| e.to_string())?;
    text.push('\n');
    std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// Replaces machine paths by placeholders, longest first.
#[derive(Debug, Clone, Default)]
pub struct Sanitizer {
    pairs: Vec<(String, String)>,
}

impl Sanitizer {
    /// Writes `path` (and its canonical form) as `placeholder`.
    pub fn add(&mut self, path: &Path, placeholder: &str) {
        let mut forms = vec![path.display().to_string()];
        if let Ok(canonical) = path.canonicalize() {
            forms.push(canonical.display().to_string());
        }
        for form in forms {
            let form = form.trim_end_matches('/').to_owned();
            if form.len() > 1 && !self.pairs.iter().any(|(known, _)| *known == form) {
                self.pairs.push((form, placeholder.to_owned()));
            }
        }
        self.pairs.sort_by_key(|pair| std::cmp::Reverse(pair.0.len()));
    }

    /// `text` with every known path replaced. The scratch HOME also shows
    /// up in CLIs' own spelling of a directory (`-tmp-…-home-work`), which becomes
    /// `<home>-work`.
    pub fn clean(&self, text: &str) -> String {
        let mut text = text.to_owned();
        for (path, placeholder) in &self.pairs {
            text = text.replace(path.as_str(), placeholder);
            let dashed = path.replace('/', "-");
            if dashed.len() > 8 {
                text = text.replace(&dashed, placeholder);
            }
        }
        text
    }
}
