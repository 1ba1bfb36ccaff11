//! HACKING.md names the files a change touches (adding a request, adding
//! a runtime) and the commands that rewrite generated files. This test
//! keeps those names true: every path it writes in backticks, relative to
//! the repository's root, must exist. A path with a placeholder (`<id>`),
//! a build output (`target/...`) or one outside the repository (`/proc`,
//! `~/...`) is not checked.

use std::path::PathBuf;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The text of every inline code span (`...`, which may run over a line
/// break) of a Markdown page, with the line it starts on; fenced blocks
/// are left out.
fn code_spans(page: &str) -> Vec<(usize, String)> {
    let mut prose = String::new();
    let mut fenced = false;
    for line in page.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        } else if !fenced {
            prose.push_str(line);
        }
        // Every line keeps its line break, so that line numbers hold.
        prose.push('\n');
    }
    let mut spans = Vec::new();
    let mut line = 1;
    for (index, part) in prose.split('`').enumerate() {
        if index % 2 == 1 {
            spans.push((line, part.to_owned()));
        }
        line += part.matches('\n').count();
    }
    spans
}

/// Whether a code span is a path in the repository that can be checked.
fn is_repository_path(span: &str) -> bool {
    let placeholder_or_not_a_path = |c: char| c.is_whitespace() || "<>*{}()=:@$~,'\"|".contains(c);
    span.contains('/')
        && !span.contains(placeholder_or_not_a_path)
        && !span.starts_with('/')
        && !span.starts_with("target/")
        && !span.contains("..")
}

fn missing_paths(page: &str) -> Vec<String> {
    code_spans(page)
        .into_iter()
        .filter(|(_, span)| is_repository_path(span))
        .filter(|(_, span)| !repo().join(span).exists())
        .map(|(line, span)| format!("line {line}: `{span}`"))
        .collect()
}

#[test]
fn every_path_hacking_md_names_exists() {
    let path = repo().join("HACKING.md");
    let page = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let checked = code_spans(&page).into_iter().filter(|(_, span)| is_repository_path(span)).count();
    assert!(checked >= 40, "only {checked} paths found in HACKING.md: is the page still the one this test reads?");
    let missing = missing_paths(&page);
    assert!(missing.is_empty(), "HACKING.md names paths that do not exist:\n{}", missing.join("\n"));
}

#[test]
fn a_path_that_does_not_exist_is_found() {
    let page = "1. `host/src/server/dispatch.rs`, then `host/src/no_such_file.rs`\n```sh\nno/such/command\n```\n";
    assert_eq!(missing_paths(page), ["line 1: `host/src/no_such_file.rs`"]);
    // Placeholders, build outputs and paths outside the repository are
    // not paths to check.
    let page = "`adapters/src/runtimes/<id>.rs` `target/debug/panehost` `/proc/PID/stat` `~/.local/state`";
    assert!(missing_paths(page).is_empty());
}
