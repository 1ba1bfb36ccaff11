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
    tokens
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
fn the_check_catches_a_flag_the_cli_does_not_have() {
    let claude = runtimes::built_in().into_iter().find(|d| d.id == "claude").unwrap();
    let help = help_text(&record("claude.json"));
    assert!(appears(&help, "--continue"));
    assert!(!appears(&help, "--resume-latest"));
    assert!(relied_on(&claude).contains(&"--resume".to_owned()));
}
