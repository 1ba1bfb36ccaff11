//! The canary's probes of a staged candidate: `--version` and the help
//! commands of [`relied_flags`](crate::relied_flags), each through the
//! probe runner in the canary's sandbox (no network, none of the user's
//! files), and what they show.

use crate::canary::report::{ProbeRecord, RequirementsRecord, SwitchesRecord, VersionRecord};
use crate::canary::verdict::Findings;
use crate::descriptor::Descriptor;
use crate::probe::{describe_exit, run_probe_capturing, ProbeError, ProbeExit, ProbeRequest, ProbeRun};
use crate::relied_flags::{
    help_commands, lists_flag, requirements, self_update_switches, unmet_requirements, HelpScope, HelpTexts,
    Requirement, RequirementKind,
};
use crate::sandbox::Sandbox;
use crate::version::{floor_status, parse_version, FloorStatus};
use std::path::Path;
use std::time::{Duration, Instant};

/// What the probes showed.
#[derive(Debug, Clone, Default)]
pub(crate) struct ProbeFindings {
    pub(crate) version: VersionRecord,
    pub(crate) probes: Vec<ProbeRecord>,
    pub(crate) requirements: RequirementsRecord,
    pub(crate) switches: SwitchesRecord,
    /// The sandbox was refused: nothing ran.
    pub(crate) sandbox_refused: bool,
}

/// Where and how the candidate's probes run.
#[derive(Debug, Clone, Copy)]
pub(crate) struct ProbeSetting<'a> {
    pub(crate) executable: &'a Path,
    pub(crate) search_path: Option<&'a str>,
    pub(crate) timeout: Duration,
    /// The sandbox each probe runs in (without a network).
    pub(crate) sandbox: &'a Sandbox,
}

/// Runs the version probe and the help commands in the sandbox and records
/// what they show in `findings`. Stops at a refused sandbox (which blocks
/// the run).
pub(crate) fn probe_offline(
    descriptor: &Descriptor,
    setting: ProbeSetting<'_>,
    findings: &mut Findings,
) -> ProbeFindings {
    let mut seen = ProbeFindings {
        version: VersionRecord {
            floor: descriptor.version.floor.clone(),
            floor_status: FloorStatus::Indeterminate.as_str().to_owned(),
            ..VersionRecord::default()
        },
        ..ProbeFindings::default()
    };
    let mut environment = descriptor.self_update_off.environment.clone();
    environment.extend(descriptor.environment.iter().cloned());
    let probe = |args: &[String], records: &mut Vec<ProbeRecord>, findings: &mut Findings| {
        run_one(setting, &environment, args, records, findings)
    };
    if descriptor.version.args.is_empty() {
        findings.unverified.push("the adapter declares no version probe: the version is indeterminate".into());
    } else {
        let Some(run) = probe(&descriptor.version.args, &mut seen.probes, findings) else {
            seen.sandbox_refused = !findings.blocked.is_empty();
            return seen;
        };
        read_version(descriptor, &run, &mut seen.version, findings);
    }
    let mut help = HelpTexts::new();
    for args in help_commands(descriptor) {
        match probe(&args, &mut seen.probes, findings) {
            Some(run) => help.insert(args, format!("{}\n{}", run.stdout, run.stderr)),
            None if findings.blocked.is_empty() => continue,
            None => {
                seen.sandbox_refused = true;
                return seen;
            }
        }
    }
    check_help(descriptor, &help, &mut seen, findings);
    seen
}

/// Runs one probe in the sandbox and records it; `None` when it did not
/// run (a refused sandbox blocks the run; anything else fails it).
fn run_one(
    setting: ProbeSetting<'_>,
    environment: &[(String, String)],
    args: &[String],
    records: &mut Vec<ProbeRecord>,
    findings: &mut Findings,
) -> Option<ProbeRun> {
    let started = Instant::now();
    let request = ProbeRequest {
        program: setting.executable,
        args,
        search_path: setting.search_path,
        extra_env: environment,
        timeout: setting.timeout,
        sandbox: Some(setting.sandbox),
    };
    let outcome = run_probe_capturing(&request);
    let seconds = (started.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
    let (exit, output) = match &outcome {
        Ok(run) => (describe_exit(run.exit), format!("{}\n{}", run.stdout, run.stderr)),
        Err(err) => (format!("did not run: {err}"), String::new()),
    };
    let first_line = output.lines().map(str::trim).find(|line| !line.is_empty()).unwrap_or("").to_owned();
    records.push(ProbeRecord { args: args.to_vec(), exit, seconds, output_bytes: output.trim().len(), first_line });
    let command = args.join(" ");
    match outcome {
        Err(ProbeError::SandboxRefused(reason)) => {
            findings.blocked.push(format!("no sandbox: {reason}"));
            None
        }
        Err(err) => {
            findings.failures.push(format!("`{command}` did not run: {err}"));
            None
        }
        Ok(run) => {
            if matches!(run.exit, ProbeExit::TimedOut | ProbeExit::Signal(_)) {
                findings.failures.push(format!("`{command}` crashed: {}", describe_exit(run.exit)));
            }
            Some(run)
        }
    }
}

/// The version line, the floor check, and what they mean for the verdict.
fn read_version(descriptor: &Descriptor, run: &ProbeRun, record: &mut VersionRecord, findings: &mut Findings) {
    let args = descriptor.version.args.join(" ");
    if !run.succeeded() {
        findings.failures.push(format!("`{args}` failed ({}): {}", describe_exit(run.exit), first_words(run.text())));
        return;
    }
    let text = run.text();
    let line =
        text.lines().find(|line| parse_version(line).is_some()).unwrap_or_else(|| text.lines().next().unwrap_or(""));
    record.printed = Some(line.trim().to_owned()).filter(|line| !line.is_empty());
    let status = floor_status(record.printed.as_deref(), descriptor.version.floor.as_deref());
    record.floor_status = status.as_str().to_owned();
    if let Some(refused) = descriptor.refusal(record.printed.as_deref()) {
        findings.failures.push(format!(
            "version {} is one the adapter refuses (from {}{}): {}",
            line.trim(),
            refused.from,
            refused.before.as_deref().map(|before| format!(" before {before}")).unwrap_or_default(),
            refused.reason
        ));
    }
    match (status, &descriptor.version.floor) {
        (FloorStatus::Below, floor) => findings.failures.push(format!(
            "version {} is below the floor {}",
            line.trim(),
            floor.as_deref().unwrap_or("?")
        )),
        (FloorStatus::Indeterminate, _) => {
            findings.unverified.push(format!("the version is indeterminate: `{args}` printed {:?}", first_words(text)))
        }
        (FloorStatus::AtOrAbove, None) => {
            findings.unverified.push("the adapter declares no version floor to compare with".into())
        }
        (FloorStatus::AtOrAbove, Some(_)) => {}
    }
}

/// The requirements against the help, and the self-update switches.
fn check_help(descriptor: &Descriptor, help: &HelpTexts, seen: &mut ProbeFindings, findings: &mut Findings) {
    if let Some(notice) = help.of(&["--help".to_owned()]).and_then(notice_instead_of_help) {
        findings.failures.push(notice);
    }
    let unmet = unmet_requirements(descriptor, help);
    seen.requirements.checked = requirements(descriptor).iter().map(describe_requirement).collect();
    seen.requirements.missing = unmet.iter().map(describe_requirement).collect();
    for requirement in &unmet {
        findings.failures.push(format!("{} is not in the help", describe_requirement(requirement)));
    }
    let all = help.joined();
    for switch in self_update_switches(descriptor) {
        if lists_flag(&all, &switch) {
            seen.switches.seen.push(switch);
        } else {
            findings.unverified.push(format!("self-update switch `{switch}` is not listed in the help"));
            seen.switches.unseen.push(switch);
        }
    }
    if let Some(note) = &descriptor.self_update_off.note {
        findings.unverified.push(format!("self-update is switched off by {note}, which the help cannot show"));
    }
}

/// A finding when `--help` printed no usage at all: every CLI's own help
/// names its usage (`Usage:`, `usage:`, `USAGE`), and a text without one
/// is a notice in its place, as a retired CLI prints (kimi-cli 1.52.0:
/// "kimi-cli is no longer maintained", then it runs another program's
/// installer). Quoted so the report shows what the candidate said.
fn notice_instead_of_help(text: &str) -> Option<String> {
    // A help that printed nothing (or crashed) misses every requirement,
    // which says enough.
    if text.trim().is_empty() || text.to_lowercase().contains("usage") {
        return None;
    }
    Some(format!(
        "`--help` shows no usage: the candidate printed a notice, not a CLI's help (a retired or replaced \
         release?): {:?}",
        first_words(text.trim())
    ))
}

/// `--continue` (flag), `read-only` (value), `-s` (flag of `resume --help`).
pub(crate) fn describe_requirement(requirement: &Requirement) -> String {
    let kind = match requirement.kind {
        RequirementKind::Flag => "flag",
        RequirementKind::Value => "value",
    };
    match &requirement.scope {
        HelpScope::Any => format!("`{}` ({kind})", requirement.token),
        HelpScope::Subcommand(subcommand) => format!("`{}` ({kind} of `{subcommand} --help`)", requirement.token),
    }
}

fn first_words(text: &str) -> String {
    text.chars().take(160).collect::<String>().replace('\n', " / ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_help_without_usage_is_a_notice_and_quoted() {
        let retired = "kimi-cli is no longer maintained.\nRunning the Kimi Code install script...\n";
        let finding = notice_instead_of_help(retired).expect("a notice");
        assert!(finding.contains("no longer maintained"), "{finding}");
        assert_eq!(notice_instead_of_help(" \n"), None, "an empty help misses every requirement instead");
    }

    #[test]
    fn every_usage_spelling_is_a_help() {
        for help in ["Usage: claude [options]", "usage: hermes [-h]", "omp v18\n\nUSAGE\n  $ omp", "Usage of run:"] {
            assert_eq!(notice_instead_of_help(help), None, "{help}");
        }
    }
}
