//! The command line.

use std::path::PathBuf;

/// The runtimes that install here, in the order they run: the built-in
/// runtimes (in their order) whose descriptor names the npm package or
/// PyPI distribution they are published as. That fact lives in each
/// runtime's own file, not in a list here; each has its pin in its
/// evidence record (`adapters/evidence/<id>.json`), as a test checks.
/// Nothing is read from the disk: the canary runs this program in a
/// sandbox where the repository may be hidden.
pub fn live_runtimes() -> Vec<String> {
    panehost_adapters::runtimes::built_in()
        .into_iter()
        .filter(|descriptor| descriptor.npm_package.is_some() || descriptor.pypi_distribution.is_some())
        .map(|descriptor| descriptor.id)
        .collect()
}

pub const USAGE: &str = "usage: panehost-live [--runtime ID]... [--cache DIR] [--records DIR] [--doc FILE]
                     [--bin-dir DIR] [--keep] [--doc-only] [--boundaries] [--expect DIR]
                     [--candidate-bin-dir DIR [--comparison FILE]] [--print-records-dir]

  --runtime ID   run only this runtime (repeatable): one whose evidence record
                 in adapters/evidence/ pins a version (default: all of them)
  --cache DIR    where the pinned CLIs are installed, one npm prefix each
                 (default: $PANEHOST_CLI_CACHE, else ~/.cache/panehost/clis)
  --records DIR  where the records go (default: tests/live-records)
  --doc FILE     the page to generate (default: docs/COMPATIBILITY.md)
  --bin-dir DIR  where panehost and panehost-model-endpoint are
                 (default: the directory of this binary)
  --keep         keep the scratch directory (HOME, logs) and print its path
  --doc-only     only rewrite the page from the records; run nothing
  --boundaries   the permission-profile proof instead of the other steps: a write
                 each profile must refuse or allow; records in RECORDS/boundaries
  --expect DIR   fail (exit 1) when a step that passed in DIR's record of its
                 runtime does not pass in this run
  --candidate-bin-dir DIR
                 run the one --runtime from DIR (a candidate version staged
                 elsewhere, as the canary does) instead of the pinned install
  --comparison FILE
                 with --expect: write each step beside the expected record's
                 as JSON, with a verdict (the canary's behaviour stage)
  --print-records-dir
                 print the default records directory and exit";

/// What to do.
#[derive(Debug, Clone)]
pub struct Options {
    pub runtimes: Vec<String>,
    pub cache: PathBuf,
    pub records: PathBuf,
    pub doc: PathBuf,
    pub bin_dir: PathBuf,
    pub repo: PathBuf,
    pub keep: bool,
    pub doc_only: bool,
    /// Run the boundary proof (`boundary/`) instead of the other steps.
    pub boundaries: bool,
    /// Records to judge this run against (`regressions.rs`).
    pub expect: Option<PathBuf>,
    /// The one runtime's CLI is in this directory, not installed from its
    /// pin (`--candidate-bin-dir`).
    pub candidate_bin_dir: Option<PathBuf>,
    /// Where the step-by-step comparison with the expected record goes
    /// (`comparison.rs`).
    pub comparison: Option<PathBuf>,
    /// Print the default records directory and do nothing else.
    pub print_records_dir: bool,
}

impl Options {
    /// Parses the arguments; `Err("")` asks for the usage.
    pub fn parse(args: impl Iterator<Item = String>) -> Result<Options, String> {
        let repo = PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().map(PathBuf::from).unwrap_or_default();
        let home = std::env::var_os("HOME").map(PathBuf::from).unwrap_or_else(|| PathBuf::from("/"));
        let cache = std::env::var_os("PANEHOST_CLI_CACHE")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".cache/panehost/clis"));
        let bin_dir = std::env::current_exe()
            .ok()
            .and_then(|exe| exe.parent().map(PathBuf::from))
            .ok_or("cannot find this binary's directory")?;
        let mut options = Options {
            runtimes: Vec::new(),
            cache,
            records: repo.join("tests/live-records"),
            doc: repo.join("docs/COMPATIBILITY.md"),
            bin_dir,
            repo,
            keep: false,
            doc_only: false,
            boundaries: false,
            expect: None,
            candidate_bin_dir: None,
            comparison: None,
            print_records_dir: false,
        };
        let mut args = args.peekable();
        while let Some(arg) = args.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((flag, value)) if flag.starts_with("--") => (flag.to_owned(), Some(value.to_owned())),
                _ => (arg.clone(), None),
            };
            let mut value = || inline.clone().or_else(|| args.next()).ok_or(format!("{flag} needs a value"));
            match flag.as_str() {
                "--runtime" => {
                    let id = value()?;
                    let live = live_runtimes();
                    if !live.contains(&id) {
                        return Err(format!("--runtime: {id:?} is not one of {}", live.join(", ")));
                    }
                    if !options.runtimes.contains(&id) {
                        options.runtimes.push(id);
                    }
                }
                "--cache" => options.cache = absolute(value()?),
                "--records" => options.records = absolute(value()?),
                "--doc" => options.doc = absolute(value()?),
                "--bin-dir" => options.bin_dir = absolute(value()?),
                "--keep" => options.keep = true,
                "--doc-only" => options.doc_only = true,
                "--boundaries" => options.boundaries = true,
                "--expect" => options.expect = Some(absolute(value()?)),
                "--candidate-bin-dir" => options.candidate_bin_dir = Some(absolute(value()?)),
                "--comparison" => options.comparison = Some(absolute(value()?)),
                "--print-records-dir" => options.print_records_dir = true,
                "--help" | "-h" => return Err(String::new()),
                other => return Err(format!("unknown argument {other:?}")),
            }
        }
        if options.candidate_bin_dir.is_some() && options.runtimes.len() != 1 {
            return Err("--candidate-bin-dir needs exactly one --runtime".into());
        }
        if options.comparison.is_some() && options.expect.is_none() {
            return Err("--comparison needs --expect (the records to compare with)".into());
        }
        let live = live_runtimes();
        if options.runtimes.is_empty() {
            options.runtimes = live;
        } else {
            // Always in the same order.
            options.runtimes.sort_by_key(|id| live.iter().position(|known| known == id));
        }
        Ok(options)
    }
}

fn absolute(path: String) -> PathBuf {
    let path = PathBuf::from(path);
    if path.is_absolute() {
        path
    } else {
        std::env::current_dir().map(|dir| dir.join(&path)).unwrap_or(path)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The live runtimes are the built-in runtimes published on npm or
    /// PyPI, and each has its pin in its evidence record: exactly the
    /// records that pin a version.
    #[test]
    fn the_live_runtimes_are_those_whose_evidence_pins_a_version() {
        let options = Options::parse(std::iter::empty()).expect("no arguments");
        let live = live_runtimes();
        for id in &live {
            assert!(crate::install::is_pinned(&options.repo, id), "{id} has no pinned evidence record");
        }
        assert_eq!(options.runtimes, live, "all of them by default");
        for pinned in ["codex", "claude", "qwen", "kimi", "hermes"] {
            assert!(live.iter().any(|id| id == pinned), "{pinned} in {live:?}");
        }
        for unpinned in ["shell", "fixture", "cursor"] {
            assert!(!live.iter().any(|id| id == unpinned), "{unpinned} in {live:?}");
        }
        let evidence = options.repo.join("adapters/evidence");
        let pinned_files = std::fs::read_dir(&evidence)
            .expect("the evidence records")
            .filter_map(|entry| entry.ok()?.path().file_stem()?.to_str().map(str::to_owned))
            .filter(|id| crate::install::is_pinned(&options.repo, id))
            .count();
        assert_eq!(live.len(), pinned_files, "a pinned record of no built-in runtime, or one twice");
        let asked = Options::parse(["--runtime", "qwen", "--runtime", "claude"].map(String::from).into_iter())
            .expect("two runtimes");
        assert_eq!(asked.runtimes, ["claude", "qwen"], "in the order of the built-in runtimes");
    }
}
