//! docs/ARCHITECTURE.md has a table of every source file of `host/src`
//! (section "The host, from the socket inwards"): one row per file, named
//! by its path below `host/src`, with its job. This test keeps the table
//! and the tree in step: it fails when a `.rs` file under `host/src` has no
//! row, when a row names a file that does not exist, and when a row is
//! doubled, has no job, or is not a file row at all.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The heading of the section that holds the file tables.
const SECTION: &str = "## The host, from the socket inwards";

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn page() -> String {
    let path = repo().join("docs/ARCHITECTURE.md");
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()))
}

/// Every `.rs` file below `host/src`, by its path below it (`/`-separated).
fn source_files() -> BTreeSet<String> {
    let root = repo().join("host/src");
    let mut files = BTreeSet::new();
    collect(&root, &root, &mut files);
    assert!(!files.is_empty(), "no source file found under {}", root.display());
    files
}

fn collect(root: &Path, dir: &Path, files: &mut BTreeSet<String>) {
    let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display()));
    for entry in entries {
        let path = entry.unwrap_or_else(|e| panic!("cannot list {}: {e}", dir.display())).path();
        if path.is_dir() {
            collect(root, &path, files);
        } else if path.extension().is_some_and(|extension| extension == "rs") {
            let relative = path.strip_prefix(root).expect("a file below the root");
            let parts: Vec<String> =
                relative.components().map(|part| part.as_os_str().to_string_lossy().into_owned()).collect();
            files.insert(parts.join("/"));
        }
    }
}

fn cells(line: &str) -> Vec<&str> {
    let inner = line.trim().trim_start_matches('|').trim_end_matches('|');
    inner.split('|').map(str::trim).collect()
}

/// The files the section's tables name, or what is wrong with its rows.
fn table_files(page: &str) -> Result<Vec<String>, Vec<String>> {
    let Some(start) = page.find(SECTION) else { return Err(vec![format!("no section {SECTION:?}")]) };
    let section = &page[start + SECTION.len()..];
    let section = match section.find("\n## ") {
        Some(end) => &section[..end],
        None => section,
    };
    let mut files = Vec::new();
    let mut problems = Vec::new();
    for line in section.lines().map(str::trim).filter(|line| line.starts_with('|')) {
        let row = cells(line);
        let is_separator = row.iter().all(|cell| !cell.is_empty() && cell.chars().all(|c| c == '-' || c == ':'));
        if is_separator || row.first() == Some(&"file") {
            continue;
        }
        let name = row.first().copied().unwrap_or_default();
        let path = name.strip_prefix('`').and_then(|name| name.strip_suffix('`')).filter(|path| path.ends_with(".rs"));
        let Some(path) = path else {
            problems.push(format!("a row whose first cell is not a `.rs` path in backquotes: {line}"));
            continue;
        };
        if row.len() < 2 || row[1].is_empty() {
            problems.push(format!("{path}: the row gives no job"));
        }
        files.push(path.to_owned());
    }
    if files.is_empty() && problems.is_empty() {
        problems.push(format!("the section {SECTION:?} has no file rows"));
    }
    if problems.is_empty() {
        Ok(files)
    } else {
        Err(problems)
    }
}

/// Everything that keeps the page's tables from naming exactly `sources`.
fn check(page: &str, sources: &BTreeSet<String>) -> Vec<String> {
    let named = match table_files(page) {
        Ok(named) => named,
        Err(problems) => return problems,
    };
    let mut problems = Vec::new();
    let mut seen = BTreeSet::new();
    for file in &named {
        if !seen.insert(file.as_str()) {
            problems.push(format!("host/src/{file} has more than one row"));
        }
    }
    for file in sources.iter().filter(|file| !seen.contains(file.as_str())) {
        problems.push(format!("host/src/{file} has no row in the table (add it, with its job)"));
    }
    for file in seen.iter().filter(|file| !sources.contains(**file)) {
        problems.push(format!("the table names host/src/{file}, which does not exist (remove or rename its row)"));
    }
    problems
}

#[test]
fn the_file_table_names_every_host_source_file_and_no_other() {
    let problems = check(&page(), &source_files());
    assert!(
        problems.is_empty(),
        "docs/ARCHITECTURE.md, section {SECTION:?}, is out of step with host/src:\n{}",
        problems.join("\n")
    );
}

/// The check itself: the real page with one row taken out, or one row
/// added for a file that does not exist, is refused, naming the file.
#[test]
fn a_missing_row_and_a_row_for_no_file_are_both_caught() {
    let page = page();
    let sources = source_files();
    let row_of = |file: &str| page.lines().find(|line| line.starts_with(&format!("| `{file}` |"))).map(str::to_owned);

    let removed = sources.iter().find_map(|file| row_of(file).map(|row| (file.clone(), row)));
    let (file, row) = removed.expect("a row for some source file");
    let without = page.replacen(&format!("{row}\n"), "", 1);
    let problems = check(&without, &sources);
    assert!(
        problems.iter().any(|problem| problem.contains(&format!("host/src/{file} has no row"))),
        "removing the row of {file} went unnoticed: {problems:?}"
    );

    let with_extra = page.replacen(&format!("{row}\n"), &format!("{row}\n| `pane/no_such_file.rs` | nothing |\n"), 1);
    let problems = check(&with_extra, &sources);
    assert!(
        problems.iter().any(|problem| problem.contains("host/src/pane/no_such_file.rs, which does not exist")),
        "a row for a file that does not exist went unnoticed: {problems:?}"
    );
}
