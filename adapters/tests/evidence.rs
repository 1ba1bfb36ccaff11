//! Every flag an adapter relies on appears in the real CLI's help, as
//! recorded in `adapters/evidence/` (rerun `adapters/evidence/capture.sh`
//! to record a new version), and the floor is the version recorded. What
//! "relied on" means is `panehost_adapters::relied_flags`, the definition
//! the canary applies to a candidate version too.

use panehost_adapters::descriptor::Evidence;
use panehost_adapters::relied_flags::{
    help_commands, lists_value, relied_on_flags, requirements, unmet_requirements, HelpTexts,
};
use panehost_adapters::runtimes;
use panehost_adapters::version::parse_version;
use std::path::PathBuf;

fn record(file: &str) -> serde_json::Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("evidence").join(file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|err| panic!("{}: {err}", path.display()));
    serde_json::from_str(&text).unwrap()
}

/// Every help text a record holds, by the arguments that printed it.
fn recorded_help(record: &serde_json::Value) -> HelpTexts {
    let mut help = HelpTexts::new();
    for command in record["commands"].as_array().unwrap() {
        let args: Vec<String> =
            command["args"].as_array().unwrap().iter().filter_map(|arg| arg.as_str()).map(str::to_owned).collect();
        help.insert(args, command["output"].as_str().unwrap_or_default().to_owned());
    }
    help
}

/// Only the help of the commands the canary asks: what it would see.
fn canary_view(record: &serde_json::Value, commands: &[Vec<String>]) -> HelpTexts {
    let recorded = recorded_help(record);
    let mut help = HelpTexts::new();
    for args in commands {
        if let Some(text) = recorded.of(args) {
            help.insert(args.clone(), text.to_owned());
        }
    }
    help
}

#[test]
fn every_requirement_is_met_by_the_help_the_canary_asks_for() {
    let mut checked = 0;
    for descriptor in runtimes::built_in() {
        let Evidence::CapturedHelp { file } = &descriptor.evidence else { continue };
        let record = record(file);
        assert_eq!(record["runtime"], descriptor.id.as_str(), "{file} is not the record of {}", descriptor.id);
        assert_eq!(record["package"].as_str(), descriptor.npm_package.as_deref(), "{}: the package", descriptor.id);
        let commands = help_commands(&descriptor);
        for args in &commands {
            assert!(recorded_help(&record).of(args).is_some(), "{}: {args:?} is not recorded in {file}", descriptor.id);
        }
        let unmet = unmet_requirements(&descriptor, &canary_view(&record, &commands));
        assert!(unmet.is_empty(), "{}: not in the recorded help ({file}): {unmet:?}", descriptor.id);
        let recorded = parse_version(record["version"].as_str().unwrap());
        let floor = descriptor.version.floor.as_deref().and_then(parse_version);
        assert_eq!(recorded, floor, "{}: the floor is the version whose help was recorded", descriptor.id);
        checked += 1;
    }
    assert_eq!(
        checked, 15,
        "codex, claude, gemini, opencode, qwen, copilot, grok, droid, qoder, amp, omp, pi and deepseek (npm), hermes and kimi (PyPI) install here"
    );
}

#[test]
fn only_runtimes_with_recorded_help_enforce_permission_profiles() {
    for descriptor in runtimes::built_in() {
        if descriptor.permission_profiles.is_empty() {
            continue;
        }
        assert!(
            matches!(descriptor.evidence, Evidence::CapturedHelp { .. }),
            "{} maps permission profiles without recorded help",
            descriptor.id
        );
        assert!(!requirements(&descriptor).is_empty());
    }
}

#[test]
fn the_value_check_catches_a_mode_the_cli_does_not_have() {
    let gemini = recorded_help(&record("gemini.json")).joined();
    assert!(lists_value(&gemini, "auto_edit"));
    assert!(!lists_value(&gemini, "auto-edit"), "qwen spells it auto-edit, gemini auto_edit");
    let qwen = recorded_help(&record("qwen.json")).joined();
    assert!(lists_value(&qwen, "auto-edit"));
    let codex = recorded_help(&record("codex.json")).joined();
    assert!(lists_value(&codex, "read-only") && !lists_value(&codex, "on-failure"));
    let claude = runtimes::built_in().into_iter().find(|d| d.id == "claude").unwrap();
    assert!(relied_on_flags(&claude).contains(&"--permission-mode".to_owned()));
    assert!(relied_on_flags(&claude).contains(&"--disallowedTools".to_owned()));
}

#[test]
fn the_check_catches_a_flag_the_cli_does_not_have() {
    let claude = runtimes::built_in().into_iter().find(|d| d.id == "claude").unwrap();
    let record = record("claude.json");
    let mut help = canary_view(&record, &help_commands(&claude));
    assert!(unmet_requirements(&claude, &help).is_empty());
    let top = help.of(&["--help".to_owned()]).unwrap().replace("--continue", "--resume-latest");
    help = HelpTexts::new();
    help.insert(vec!["--help".to_owned()], top);
    help.insert(
        vec!["auth".to_owned(), "--help".to_owned()],
        recorded_help(&record).of(&["auth".into(), "--help".into()]).unwrap().to_owned(),
    );
    let unmet: Vec<String> = unmet_requirements(&claude, &help).into_iter().map(|r| r.token).collect();
    assert_eq!(unmet, ["--continue"]);
}
