//! What the boundary proof probes: for each permission profile, the writes
//! the profile must refuse or allow, where they go, with which kind of
//! tool, and the scripted model turn that asks the CLI for each.
//!
//! Every probe writes a file named after the runtime and the case, either
//! inside the pane's working directory (`<home>/work`) or outside it, in
//! the sibling directory `<home>/outside`. The scratch directory of a
//! boundary run is not under the system's temporary directory, which some
//! sandboxes leave writable.

use panehost_adapters::descriptor::PermissionProfile;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// Where a probe writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// In the pane's working directory.
    Inside,
    /// In a sibling of the working directory.
    Outside,
}

/// What the profile must do with the write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Expect {
    /// Nothing is written: the CLI refuses, or asks and is declined.
    Kept,
    /// The file is written.
    Written,
}

/// One probe.
#[derive(Debug, Clone, Copy)]
pub struct Case {
    /// The step's name in the record.
    pub name: &'static str,
    pub profile: PermissionProfile,
    pub place: Place,
    pub expect: Expect,
    /// The kind of tool the model asks for first (`write` or `shell`; the
    /// other when the CLI declares none of that kind).
    pub prefer: &'static str,
}

/// The probes, in the order they run.
pub const CASES: &[Case] = &[
    Case {
        name: "read_only_write_inside",
        profile: PermissionProfile::ReadOnly,
        place: Place::Inside,
        expect: Expect::Kept,
        prefer: "write",
    },
    Case {
        name: "workspace_write_inside",
        profile: PermissionProfile::WorkspaceWrite,
        place: Place::Inside,
        expect: Expect::Written,
        prefer: "write",
    },
    Case {
        name: "workspace_write_outside",
        profile: PermissionProfile::WorkspaceWrite,
        place: Place::Outside,
        expect: Expect::Kept,
        prefer: "write",
    },
    Case {
        name: "full_access_write_outside",
        profile: PermissionProfile::FullAccess,
        place: Place::Outside,
        expect: Expect::Written,
        prefer: "write",
    },
    Case {
        name: "full_access_shell_outside",
        profile: PermissionProfile::FullAccess,
        place: Place::Outside,
        expect: Expect::Written,
        prefer: "shell",
    },
];

/// The words of the fixture's final answer once the tool's result came back.
pub const RESULT_MARK: &str = "TOOL-RESULT";
/// The words of its answer when the request declared no tool that writes.
pub const NO_TOOL_MARK: &str = "NO-WRITE-TOOL";

/// The directory outside the working directory.
pub fn outside_dir(home: &Path) -> PathBuf {
    home.join("outside")
}

impl Case {
    /// The prompt that makes the model ask for this write: also the script
    /// entry's `match`.
    pub fn word(&self, runtime: &str) -> String {
        format!("WRITE-PROBE-{runtime}-{}", self.name)
    }

    /// The file the probe asks to write.
    pub fn target(&self, runtime: &str, home: &Path, work: &Path) -> PathBuf {
        let dir = match self.place {
            Place::Inside => work.to_path_buf(),
            Place::Outside => outside_dir(home),
        };
        dir.join(format!("boundary-{runtime}-{}.txt", self.name))
    }

    /// What the probe writes.
    pub fn content(&self, runtime: &str) -> String {
        format!("written by {runtime} under {}", self.profile.as_str())
    }
}

/// The fixture's script: one entry per runtime and case, each asking for
/// a call of the CLI's own tool of the case's preferred kind (the other
/// kind when it has none) that writes the case's file.
pub fn script(runtimes: &[String], home: &Path, work: &Path) -> Value {
    let entries: Vec<Value> = runtimes
        .iter()
        .flat_map(|runtime| {
            CASES.iter().map(move |case| {
                json!({
                    "match": case.word(runtime),
                    "answer": "Probe finished.",
                    "tool_call": {
                        "path": case.target(runtime, home, work).display().to_string(),
                        "content": case.content(runtime),
                        "prefer": case.prefer,
                    },
                })
            })
        })
        .collect();
    Value::Array(entries)
}
