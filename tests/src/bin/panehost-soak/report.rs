//! The figures of a run as readable tables on stdout.

use crate::health::Sample;
use crate::ledger::Ledger;
use std::fmt::Write;

/// One end-of-run check.
#[derive(Debug, Clone)]
pub struct Check {
    /// What was checked.
    pub name: String,
    /// Whether it held.
    pub passed: bool,
    /// The figures behind it.
    pub detail: String,
}

impl Check {
    /// A check that held when `passed`.
    pub fn new(name: &str, passed: bool, detail: impl Into<String>) -> Check {
        Check { name: name.to_owned(), passed, detail: detail.into() }
    }
}

/// Everything the report shows.
#[derive(Debug, Default)]
pub struct Report {
    /// The run's parameters, one line.
    pub header: String,
    /// Named figures, in order: `(section, name, value)`.
    pub figures: Vec<(String, String, String)>,
    /// The host measured at start, after the restart, at the end.
    pub samples: Vec<Sample>,
    /// The checks.
    pub checks: Vec<Check>,
    /// Lines of the host's log worth reading.
    pub log_lines: Vec<String>,
}

impl Report {
    /// Adds a figure under `section`.
    pub fn figure(&mut self, section: &str, name: &str, value: impl ToString) {
        self.figures.push((section.to_owned(), name.to_owned(), value.to_string()));
    }

    /// True when every check held.
    pub fn passed(&self) -> bool {
        self.checks.iter().all(|check| check.passed)
    }

    /// The report as text.
    pub fn render(&self, ledger: &Ledger) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "\n{}\n", self.header);

        let operations = ledger.operations();
        let mut rows = vec![row(&["operation", "ok", "documented error", "lost to restart", "failed"])];
        let mut totals = [0u64; 4];
        for (kind, counts) in &operations {
            let values = [counts.ok, counts.expected_errors, counts.lost_to_restart, counts.failed];
            for (total, value) in totals.iter_mut().zip(values) {
                *total += value;
            }
            rows.push(row(&[
                kind,
                &values[0].to_string(),
                &values[1].to_string(),
                &values[2].to_string(),
                &values[3].to_string(),
            ]));
        }
        rows.push(row(&[
            "total",
            &totals[0].to_string(),
            &totals[1].to_string(),
            &totals[2].to_string(),
            &totals[3].to_string(),
        ]));
        table(&mut out, &rows);

        let codes = ledger.error_codes();
        if !codes.is_empty() {
            let mut rows = vec![row(&["documented error code", "count"])];
            rows.extend(codes.iter().map(|(code, n)| row(&[code, &n.to_string()])));
            table(&mut out, &rows);
        }

        let mut rows = vec![row(&["figure", "value"])];
        let mut section = "";
        // Grouped by section, sections in the order they first appear.
        let mut sections: Vec<&str> = Vec::new();
        for (figure_section, _, _) in &self.figures {
            if !sections.contains(&figure_section.as_str()) {
                sections.push(figure_section);
            }
        }
        let mut figures: Vec<&(String, String, String)> = self.figures.iter().collect();
        figures.sort_by_key(|(figure_section, _, _)| sections.iter().position(|s| s == figure_section));
        for (figure_section, name, value) in figures {
            if figure_section != section {
                rows.push(row(&[&format!("[{figure_section}]"), ""]));
                section = figure_section;
            }
            rows.push(row(&[&format!("  {name}"), value]));
        }
        let counters = ledger.counters();
        if !counters.is_empty() {
            rows.push(row(&["[counters]", ""]));
            rows.extend(counters.iter().map(|(name, n)| row(&[&format!("  {name}"), &n.to_string()])));
        }
        table(&mut out, &rows);

        if !self.samples.is_empty() {
            let mut rows = vec![row(&[
                "host",
                "open fds",
                "fd bound",
                "panes",
                "soak connections",
                "keepers",
                "RSS MiB",
                "fds by kind",
            ])];
            for sample in &self.samples {
                rows.push(row(&[
                    &sample.label,
                    &sample.fds.to_string(),
                    &sample.bound.to_string(),
                    &sample.panes.to_string(),
                    &sample.connections.to_string(),
                    &sample.keepers.to_string(),
                    &format!("{:.1}", sample.rss_kib as f64 / 1024.0),
                    &sample.kinds,
                ]));
            }
            table(&mut out, &rows);
        }

        let mut rows = vec![row(&["check", "result", "detail"])];
        for check in &self.checks {
            rows.push(row(&[&check.name, if check.passed { "PASS" } else { "FAIL" }, &check.detail]));
        }
        table(&mut out, &rows);

        let failures = ledger.failures();
        if !failures.is_empty() {
            let _ = writeln!(
                out,
                "failures ({} in all, the first {} shown):",
                ledger.failure_count(),
                failures.len().min(40)
            );
            for failure in failures.iter().take(40) {
                let _ = writeln!(out, "  {:>7.1}s  {}: {}", failure.at.as_secs_f64(), failure.what, failure.detail);
            }
            out.push('\n');
        }
        if !self.log_lines.is_empty() {
            let _ = writeln!(out, "host log lines worth reading:");
            for line in &self.log_lines {
                let _ = writeln!(out, "  {line}");
            }
            out.push('\n');
        }
        let verdict = if self.passed() { "PASSED" } else { "FAILED" };
        let _ = writeln!(out, "soak {verdict}");
        out
    }
}

fn row(cells: &[&str]) -> Vec<String> {
    cells.iter().map(|cell| (*cell).to_owned()).collect()
}

/// Writes rows as a table: the first row is the heading; numbers are
/// right-aligned, text left-aligned; the last column is never padded.
fn table(out: &mut String, rows: &[Vec<String>]) {
    let columns = rows.iter().map(Vec::len).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|column| rows.iter().filter_map(|row| row.get(column)).map(|cell| cell.chars().count()).max().unwrap_or(0))
        .collect();
    let rule: String = widths.iter().map(|width| "-".repeat(*width)).collect::<Vec<_>>().join("-+-");
    for (index, row) in rows.iter().enumerate() {
        let cells: Vec<String> = row
            .iter()
            .enumerate()
            .map(|(column, cell)| {
                let numeric = index > 0 && !cell.is_empty() && cell.chars().all(|c| c.is_ascii_digit() || c == '.');
                if column + 1 == row.len() && !numeric {
                    cell.clone()
                } else if numeric {
                    format!("{cell:>width$}", width = widths[column])
                } else {
                    format!("{cell:<width$}", width = widths[column])
                }
            })
            .collect();
        let _ = writeln!(out, "{}", cells.join(" | ").trim_end());
        if index == 0 {
            let _ = writeln!(out, "{rule}");
        }
    }
    out.push('\n');
}
