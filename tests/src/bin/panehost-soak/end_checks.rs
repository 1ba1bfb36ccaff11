//! The checks made once the load has ended: the final `list` against what
//! the program believes of its panes; the followers' bytes, gaps and
//! numbered lines; the host's log.

use crate::followers::Followers;
use crate::host::HostDir;
use crate::panes::{Life, PaneKind};
use crate::report::{Check, Report};
use crate::verify::{self, VerifiedRanges};
use crate::world::World;
use panehost_client::ClientOptions;
use panehost_ipc::{PaneId, PaneState};
use std::collections::{HashMap, HashSet};
use std::time::Duration;

/// The final `list`: every pane believed alive listed exactly once, none
/// closed listed, no unknown pane beyond the starts lost with the host,
/// and every pane said to have exited listed as exited. Gives the listed
/// panes and their pids.
pub async fn check_list(world: &World, report: &mut Report) -> Vec<(PaneId, u32)> {
    let options =
        ClientOptions { request_timeout: Some(Duration::from_secs(60)), ..ClientOptions::named("panehost-soak check") };
    let panes = match world.life.connect(&options).await {
        Ok(link) => match link.client.list().await {
            Ok(panes) => panes,
            Err(error) => {
                report.checks.push(Check::new("the host answers list", false, error.to_string()));
                return Vec::new();
            }
        },
        Err(problem) => {
            report.checks.push(Check::new("the host answers list", false, problem));
            return Vec::new();
        }
    };
    report.checks.push(Check::new("the host answers list", true, format!("{} panes", panes.len())));
    let mut count: HashMap<&PaneId, usize> = HashMap::new();
    for pane in &panes {
        *count.entry(&pane.id).or_default() += 1;
    }
    let entries = world.book.entries();
    let known: HashSet<&PaneId> = entries.iter().map(|entry| &entry.id).collect();
    let mut problems = Vec::new();
    let duplicated: Vec<String> = count.iter().filter(|(_, n)| **n > 1).map(|(id, n)| format!("{id} x{n}")).collect();
    if !duplicated.is_empty() {
        problems.push(format!("listed more than once: {}", duplicated.join(", ")));
    }
    let mut alive = 0;
    let mut by_kind: HashMap<PaneKind, usize> = HashMap::new();
    for entry in &entries {
        let listed = count.get(&entry.id).copied().unwrap_or(0);
        match entry.life {
            Life::Alive => {
                alive += 1;
                *by_kind.entry(entry.kind).or_default() += 1;
                if listed == 0 {
                    problems.push(format!("{} ({}) is missing", entry.id, entry.kind.label()));
                }
                let summary = panes.iter().find(|pane| pane.id == entry.id);
                if entry.exited && summary.is_some_and(|pane| pane.state == PaneState::Running) {
                    problems.push(format!("{} was said to have exited but is listed running", entry.id));
                }
            }
            Life::Closed if listed > 0 => problems.push(format!("{} was closed but is listed", entry.id)),
            _ => {}
        }
    }
    let unknown: Vec<&PaneId> = panes.iter().map(|pane| &pane.id).filter(|id| !known.contains(id)).collect();
    let lost = world.book.starts_lost() as usize;
    if unknown.len() > lost {
        problems.push(format!(
            "{} panes nobody started are listed ({} starts were lost with the host): {unknown:?}",
            unknown.len(),
            lost
        ));
    }
    let uncertain = entries.iter().filter(|entry| entry.life == Life::Uncertain).count();
    let closed = entries.iter().filter(|entry| entry.life == Life::Closed).count();
    report.figure("panes", "started in all", entries.len());
    report.figure("panes", "closed", closed);
    report.figure("panes", "believed alive at the end", alive);
    for kind in PaneKind::ALL {
        report.figure("panes", &format!("  of them {}", kind.label()), by_kind.get(&kind).copied().unwrap_or(0));
    }
    report.figure(
        "panes",
        "exited (still listed)",
        panes.iter().filter(|p| matches!(p.state, PaneState::Exited(_))).count(),
    );
    report.figure("panes", "fate unknown (close lost, not finished)", uncertain);
    report.figure("panes", "listed but never started by the soak", unknown.len());
    report.checks.push(Check::new(
        "every pane believed alive listed exactly once; ids unique; none closed listed",
        problems.is_empty(),
        if problems.is_empty() { format!("{alive} alive, {} listed", panes.len()) } else { problems.join("; ") },
    ));
    panes.iter().map(|pane| (pane.id.clone(), pane.pid)).collect()
}

/// The followers' bytes against the host's (a last pass), their
/// announced gaps, and their numbered lines.
pub async fn check_followers(world: &World, followers: &Followers, verified: &mut VerifiedRanges, report: &mut Report) {
    let failures_before = world.ledger.failures_of("verify");
    let tally = verify::verify_followers(world, followers, verified).await;
    let records = followers.snapshot();
    let mut lines = 0;
    for record in records.iter().filter(|record| record.kind.prints_numbered_lines()) {
        lines += verify::check_numbered_lines(world, record).lines_checked;
    }
    let received: u64 = records.iter().map(|record| record.bytes()).sum();
    let reconnects: u64 = records.iter().map(|record| record.reconnects).sum();
    let mut gaps: std::collections::BTreeMap<&str, (u64, u64)> = std::collections::BTreeMap::new();
    for gap in records.iter().flat_map(|record| &record.gaps) {
        let entry = gaps.entry(gap.kind.label()).or_default();
        entry.0 += 1;
        entry.1 += gap.to - gap.from;
    }
    let slow = records.iter().filter(|record| record.slow).count();
    report.figure("followers", "followers (slow readers)", format!("{} ({slow})", records.len()));
    report.figure("followers", "bytes received", received);
    report.figure("followers", "reconnects", reconnects);
    for (kind, (count, bytes)) in &gaps {
        report.figure("followers", &format!("gaps announced: {kind}"), format!("{count} ({bytes} bytes)"));
    }
    report.figure("followers", "verification passes", verified.passes());
    report.figure("followers", "bytes verified byte-exact", verified.total());
    report.figure(
        "followers",
        "bytes not verified (the host no longer held them)",
        received.saturating_sub(verified.total()),
    );
    report.figure("followers", "bytes the last pass could not compare", tally.bytes_not_held);
    report.figure("followers", "announced gaps checked against the host", verified.gaps_checked());
    report.figure("followers", "numbered lines checked in order", lines);
    let ended: Vec<String> =
        records.iter().filter_map(|r| r.ended.as_ref().map(|reason| format!("{} {reason}", r.pane))).collect();
    if !ended.is_empty() {
        report.figure("followers", "subscriptions ended", ended.join(", "));
    }
    let verify_failures = world.ledger.failures_of("verify");
    report.checks.push(Check::new(
        "followers' bytes equal the host's wherever both hold them",
        verify_failures == 0 && verified.total() > 0,
        format!(
            "{} bytes verified in {} passes, {verify_failures} mismatches or read-back failures ({} in the last pass)",
            verified.total(),
            verified.passes(),
            verify_failures - failures_before
        ),
    ));
    let continuity = world.ledger.failures_of("follower");
    report.checks.push(Check::new(
        "followers' streams contiguous but for announced gaps",
        continuity == 0 && received > 0,
        format!("{continuity} unannounced gaps or broken streams, {received} bytes received"),
    ));
    let holes = world.ledger.failures_of("numbered lines");
    report.checks.push(Check::new(
        "numbered lines run on inside every run of bytes",
        holes == 0 && lines > 0,
        format!("{lines} lines checked, {holes} holes"),
    ));
}

/// Counts the host log's warnings and errors and keeps the errors and
/// panics for the report.
pub fn read_host_log(dir: &HostDir, report: &mut Report) {
    let log = std::fs::read_to_string(&dir.log).unwrap_or_default();
    let mut errors = 0;
    let mut warnings = 0;
    let mut panics = 0;
    for line in log.lines() {
        let panicked = line.contains("panicked");
        if line.contains(" ERROR ") || panicked {
            errors += 1;
            if report.log_lines.len() < 20 {
                report.log_lines.push(line.chars().take(400).collect());
            }
        } else if line.contains(" WARN ") {
            warnings += 1;
        }
        panics += usize::from(panicked);
    }
    report.figure("host log", "lines", log.lines().count());
    report.figure("host log", "ERROR lines", errors);
    report.figure("host log", "WARN lines", warnings);
    report.checks.push(Check::new("no panic in the host's log", panics == 0, format!("{panics} panic line(s)")));
}
