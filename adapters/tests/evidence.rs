//! Every flag an adapter relies on appears in the real CLI's help, as
//! recorded in `adapters/evidence/` (rerun `adapters/evidence/capture.sh`
//! to record a new version), and the floor is the version recorded.

use panehost_adapters::descriptor::{Descriptor, Evidence, LoginForm, ModelForm};
use panehost_adapters::runtimes;
use panehost_adapters::version::parse_version;
use std::path::PathBuf;

fn record(file: &str) -> serde_json::Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("evidence").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// All the help text a record holds.
fn help_text(record: &serde_json::Value) -> String {
    record["commands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|command| command["output"].as_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The flags and subcommand words a descriptor's launcher passes (the
/// self-update settings are documented separately: most CLIs do not list
/// them in their help).
fn relied_on(descriptor: &Descriptor) -> Vec<String> {
    let mut tokens = Vec::new();
    let flag = |arg: &str| arg.split('=').next().unwrap_or(arg).to_owned();
    tokens.extend(descriptor.base_args.iter().filter(|arg| arg.starts_with('-')).map(|arg| flag(arg)));
    if let ModelForm::Optional { flag: model } | ModelForm::Required { flag: model } = &descriptor.model {
        tokens.push(model.clone());
    }
    for form in &descriptor.resume_forms {
        if form.leads {
            tokens.push(form.args[0].clone());
        }
        tokens.extend(form.args.iter().filter(|arg| arg.starts_with('-')).map(|arg| flag(arg)));
    }
    if let LoginForm::InTerminal { args } = &descriptor.login {
        tokens.extend(args.iter().take(1).cloned());
    }
    for (_, form) in &descriptor.permission_profiles {
        tokens.extend(form.args.iter().filter(|arg| arg.starts_with('-')).map(|arg| flag(arg)));
    }
    tokens
}

/// The values a descriptor's permission profiles pass (after `=`, or as
/// arguments of their own), each item of a comma-separated list on its own:
/// sandbox policies, approval modes, tool names.
fn profile_values(descriptor: &Descriptor) -> Vec<String> {
    let mut values = Vec::new();
    for (_, form) in &descriptor.permission_profiles {
        for arg in &form.args {
            let value = match arg.split_once('=') {
                Some((_, value)) if arg.starts_with('-') => value,
                None if !arg.starts_with('-') => arg.as_str(),
                _ => continue,
            };
            values.extend(value.split(',').map(str::to_owned));
        }
    }
    values
}

/// True when `value` is a word of the help: the possible values of an
/// option are listed quoted, after a colon, or as `kind(argument)`.
fn appears_as_value(help: &str, value: &str) -> bool {
    help.split(|c: char| !(c.is_ascii_alphanumeric() || matches!(c, '-' | '_'))).any(|word| word == value)
}

/// The help one command of a record printed (`["resume", "--help"]`).
fn command_help(record: &serde_json::Value, args: &[&str]) -> Option<String> {
    record["commands"].as_array().unwrap().iter().find_map(|command| {
        let recorded: Vec<&str> = command["args"].as_array()?.iter().filter_map(|arg| arg.as_str()).collect();
        (recorded == args).then(|| command["output"].as_str().unwrap_or_default().to_owned())
    })
}

fn appears(help: &str, token: &str) -> bool {
    help.split(|c: char| c.is_whitespace() || matches!(c, ',' | '[' | ']' | '(' | ')' | '`' | '|' | '<' | '>'))
        .any(|word| word == token)
}

#[test]
fn every_flag_relied_on_appears_in_the_recorded_help() {
    let mut checked = 0;
    for descriptor in runtimes::built_in() {
        let Evidence::CapturedHelp { file } = &descriptor.evidence else { continue };
        let record = record(file);
        assert_eq!(record["runtime"], descriptor.id.as_str(), "{file} is not the record of {}", descriptor.id);
        let help = help_text(&record);
        for token in relied_on(&descriptor) {
            assert!(appears(&help, &token), "{}: {token:?} is not in the recorded help ({file})", descriptor.id);
        }
        let recorded = parse_version(record["version"].as_str().unwrap());
        let floor = descriptor.version.floor.as_deref().and_then(parse_version);
        assert_eq!(recorded, floor, "{}: the floor is the version whose help was recorded", descriptor.id);
        checked += 1;
    }
    assert_eq!(checked, 7, "codex, claude, gemini, opencode, qwen, copilot and grok install here");
}

#[test]
fn every_permission_profile_value_appears_in_the_recorded_help() {
    let mut checked = 0;
    for descriptor in runtimes::built_in() {
        if descriptor.permission_profiles.is_empty() {
            continue;
        }
        // Only flags checked against a real CLI's help may enforce a profile.
        let Evidence::CapturedHelp { file } = &descriptor.evidence else {
            panic!("{} maps permission profiles without recorded help", descriptor.id)
        };
        let record = record(file);
        let help = help_text(&record);
        for value in profile_values(&descriptor) {
            assert!(
                appears_as_value(&help, &value),
                "{}: profile value {value:?} is not in the recorded help ({file})",
                descriptor.id
            );
            checked += 1;
        }
        // A resume that is a subcommand takes the profile's flags too.
        for form in descriptor.resume_forms.iter().filter(|form| form.leads) {
            let subcommand = form.args[0].as_str();
            let help = command_help(&record, &[subcommand, "--help"])
                .unwrap_or_else(|| panic!("{}: no recorded help of `{subcommand}`", descriptor.id));
            for (profile, profile_form) in &descriptor.permission_profiles {
                for arg in profile_form.args.iter().filter(|arg| arg.starts_with('-')) {
                    let flag = arg.split('=').next().unwrap();
                    assert!(
                        appears(&help, flag),
                        "{}: {flag} ({}) is not in the recorded help of `{subcommand}`",
                        descriptor.id,
                        profile.as_str()
                    );
                }
            }
        }
    }
    assert!(checked > 0);
}

#[test]
fn the_value_check_catches_a_mode_the_cli_does_not_have() {
    let gemini = help_text(&record("gemini.json"));
    assert!(appears_as_value(&gemini, "auto_edit"));
    assert!(!appears_as_value(&gemini, "auto-edit"), "qwen spells it auto-edit, gemini auto_edit");
    let qwen = help_text(&record("qwen.json"));
    assert!(appears_as_value(&qwen, "auto-edit"));
    let codex = help_text(&record("codex.json"));
    assert!(appears_as_value(&codex, "read-only") && !appears_as_value(&codex, "on-failure"));
    let claude = runtimes::built_in().into_iter().find(|d| d.id == "claude").unwrap();
    assert!(relied_on(&claude).contains(&"--permission-mode".to_owned()));
    assert!(relied_on(&claude).contains(&"--disallowedTools".to_owned()));
}

#[test]
fn the_check_catches_a_flag_the_cli_does_not_have() {
    let claude = runtimes::built_in().into_iter().find(|d| d.id == "claude").unwrap();
    let help = help_text(&record("claude.json"));
    assert!(appears(&help, "--continue"));
    assert!(!appears(&help, "--resume-latest"));
    assert!(relied_on(&claude).contains(&"--resume".to_owned()));
}
