//! Custom runtimes from the configuration file: what loads, what is refused,
//! and where the refusal points.

use panehost_adapters::config::{default_config_path, load_custom_runtimes, load_file, ConfigLoad, ConfigProblem};
use panehost_adapters::contract::{declared_limitations, implied_limitations, LaunchFacts};
use panehost_adapters::descriptor::{Descriptor, Executable, ResumeMode};
use panehost_adapters::launcher::{plan_login, plan_start, StartRequest};
use panehost_adapters::{
    runtimes, AdmissionError, CommandPolicy, CompletionSignal, Evidence, HostEnvironment, LaunchPlan, LaunchPurpose,
    ModelForm,
};
use panehost_ipc::{limitation, ResumeRequest};
use std::path::{Path, PathBuf};

const UUID: &str = "0f3c2a1e-9b7d-4c5e-8a6f-1d2e3f4a5b6c";

/// A runtime with every resume mode but the picker, signing in outside the
/// terminal.
const MYCLI: &str = r#"# Runtimes this machine adds.
[runtime.mycli]
display_name = "My CLI"
executable = ["mycli"]
known_paths = ["~/.local/bin/mycli", "/opt/mycli/bin/mycli"]
version_floor = "1.2.0"
base_args = ["--no-telemetry"]
model_flag = "--model"
reads_environment = ["MYCLI_API_KEY"]
environment = { MYCLI_NO_UPDATE = "1" }
login = "outside_terminal"
limitations = ["COMPLETION_UNOBSERVED", "REFERENCE_PENDING_LIVE_PROOF", "LOGIN_NOT_IN_TERMINAL", "PERMISSION_PROFILE_UNENFORCED", "RECEIPT_UNAVAILABLE"]

[runtime.mycli.resume]
reference = ["--resume", "{reference}"]
reference_pattern = "[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}"
latest = ["--continue"]
"#;

/// A runtime whose resume is a leading subcommand and that signs in in the
/// terminal.
const OTHER: &str = r#"
[runtime.other]
display_name = "Other"
executable = ["other", "other-cli"]
supported = false
self_update_args = ["--no-update"]
self_update_environment = { OTHER_UPDATES = "off" }
interrupt_keys = "\u001b"
interrupt_keeps_request = true
login = "in_terminal"
login_args = ["login"]
limitations = ["PROVIDER_SELECTION_ONLY", "COMPLETION_UNOBSERVED", "PERMISSION_PROFILE_UNENFORCED", "RECEIPT_UNAVAILABLE", "INTERRUPT_KEEPS_REQUEST"]

[runtime.other.resume]
latest = ["resume", "--last"]
leads = true
"#;

fn built_in_ids() -> Vec<String> {
    runtimes::built_in().into_iter().map(|descriptor| descriptor.id).collect()
}

fn load(text: &str) -> ConfigLoad {
    let ids = built_in_ids();
    let ids: Vec<&str> = ids.iter().map(String::as_str).collect();
    load_custom_runtimes(text, &ids)
}

fn environment() -> HostEnvironment {
    let mut env = HostEnvironment::default();
    for (name, value) in [
        ("HOME", "/home/ada"),
        ("PATH", "/usr/bin:/bin"),
        ("MYCLI_API_KEY", "sk-test"),
        ("HOST_ONLY_SECRET", "must-not-leak"),
    ] {
        env.variables.insert(name.into(), value.into());
    }
    env
}

fn start(
    descriptor: &Descriptor,
    model: Option<&str>,
    resume: Option<ResumeRequest>,
) -> Result<LaunchPlan, AdmissionError> {
    let request = StartRequest { model: model.map(str::to_owned), resume, ..StartRequest::default() };
    plan_start(descriptor, PathBuf::from("/opt/cli"), PathBuf::from("/"), &request, &environment())
}

fn runtime<'a>(load: &'a ConfigLoad, id: &str) -> &'a Descriptor {
    load.runtimes
        .iter()
        .find(|descriptor| descriptor.id == id)
        .unwrap_or_else(|| panic!("{id} did not load: {load:#?}"))
}

fn ids(load: &ConfigLoad) -> Vec<&str> {
    load.runtimes.iter().map(|descriptor| descriptor.id.as_str()).collect()
}

/// The line (from 1) of the first line of `text` containing `marker`.
fn line_of(text: &str, marker: &str) -> usize {
    text.lines().position(|line| line.contains(marker)).unwrap_or_else(|| panic!("no {marker:?} in the text")) + 1
}

fn args(plan: &LaunchPlan) -> Vec<&str> {
    plan.args.iter().map(String::as_str).collect()
}

#[test]
fn a_valid_file_loads_both_runtimes_with_their_argv() {
    let text = format!("{MYCLI}{OTHER}");
    let load = load(&text);
    assert!(load.problems.is_empty(), "{:#?}", load.problems);
    assert_eq!(ids(&load), ["mycli", "other"], "in the order of the file");

    let mycli = runtime(&load, "mycli");
    assert_eq!(mycli.display_name, "My CLI");
    assert_eq!(
        mycli.executable,
        Executable::Named {
            names: vec!["mycli".into()],
            known_paths: vec!["~/.local/bin/mycli".into(), "/opt/mycli/bin/mycli".into()],
        }
    );
    assert_eq!(mycli.version.args, ["--version"]);
    assert_eq!(mycli.version.floor.as_deref(), Some("1.2.0"));
    assert!(mycli.supported);
    assert_eq!(mycli.command_policy, CommandPolicy::HostBuildsArgv);
    assert_eq!(mycli.completion, CompletionSignal::Unobserved);
    assert_eq!(mycli.evidence, Evidence::Operator);
    assert_eq!(mycli.model, ModelForm::Optional { flag: "--model".into() });
    assert_eq!(mycli.interrupt_keys, b"\x03");

    let plan = start(mycli, None, None).unwrap();
    assert_eq!(plan.purpose, LaunchPurpose::Start);
    assert_eq!(args(&plan), ["--no-telemetry"]);
    assert!(plan.env.contains(&("MYCLI_NO_UPDATE".into(), "1".into())));
    assert!(plan.env.contains(&("MYCLI_API_KEY".into(), "sk-test".into())));
    assert!(!plan.env.iter().any(|(name, _)| name == "HOST_ONLY_SECRET"));

    let plan = start(mycli, Some("big-model"), None).unwrap();
    assert_eq!(args(&plan), ["--no-telemetry", "--model", "big-model"]);

    let plan = start(mycli, None, Some(ResumeRequest::Reference(UUID.into()))).unwrap();
    assert_eq!(plan.purpose, LaunchPurpose::Resume(ResumeMode::Reference));
    assert_eq!(args(&plan), ["--no-telemetry", "--resume", UUID]);

    let plan = start(mycli, None, Some(ResumeRequest::Latest)).unwrap();
    assert_eq!(plan.purpose, LaunchPurpose::Resume(ResumeMode::ProviderSelection));
    assert_eq!(args(&plan), ["--no-telemetry", "--continue"]);

    let other = runtime(&load, "other");
    assert!(!other.supported);
    assert_eq!(other.interrupt_keys, b"\x1b");
    assert!(other.interrupt_keeps_request);
    assert!(!mycli.interrupt_keeps_request, "the default");
    assert_eq!(other.model, ModelForm::NotTaken);
    let Executable::Named { names, known_paths } = &other.executable else { panic!("{:?}", other.executable) };
    assert_eq!(names, &["other", "other-cli"]);
    assert!(known_paths.contains(&"~/.local/bin/other-cli".to_owned()), "the agent CLI defaults: {known_paths:?}");

    let plan = start(other, None, None).unwrap();
    assert_eq!(args(&plan), ["--no-update"]);
    assert!(plan.env.contains(&("OTHER_UPDATES".into(), "off".into())));
    let plan = start(other, None, Some(ResumeRequest::Latest)).unwrap();
    assert_eq!(args(&plan), ["resume", "--last", "--no-update"], "the subcommand leads");
    let refused = start(other, None, Some(ResumeRequest::Reference(UUID.into()))).unwrap_err();
    assert!(
        matches!(refused, AdmissionError::Unsupported { limitation: limitation::PROVIDER_SELECTION_ONLY, .. }),
        "{refused:?}"
    );
    let plan = plan_login(other, PathBuf::from("/opt/cli"), PathBuf::from("/"), &environment()).unwrap();
    assert_eq!(args(&plan), ["login", "--no-update"]);
    assert!(matches!(start(other, Some("m"), None), Err(AdmissionError::InvalidArgument(_))), "takes no model");

    for descriptor in &load.runtimes {
        let facts = LaunchFacts::gather(descriptor, &environment());
        assert_eq!(implied_limitations(&facts), declared_limitations(descriptor), "{}", descriptor.id);
    }
}

#[test]
fn the_example_in_the_documentation_loads() {
    let doc = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/CONFIG.md")).unwrap();
    let start = doc.find("```toml\n").expect("docs/CONFIG.md has a toml example") + "```toml\n".len();
    let example = &doc[start..start + doc[start..].find("```").unwrap()];
    let load = load(example);
    assert!(load.problems.is_empty(), "{:#?}", load.problems);
    assert!(!load.runtimes.is_empty());
}

#[test]
fn a_syntax_error_is_one_problem_on_its_line() {
    let text = "[runtime.mycli]\ndisplay_name = \"My CLI\"\nexecutable = [\"mycli\"\nbase_args = []\n";
    let load = load(text);
    assert!(load.runtimes.is_empty());
    assert_eq!(load.problems.len(), 1, "{:#?}", load.problems);
    let problem = &load.problems[0];
    assert!(matches!(problem.line, Some(3 | 4)), "{problem:?}");
    assert_eq!(problem.runtime, None);
    assert!(
        problem.to_string().starts_with(&format!("config.toml:{}: not valid TOML: ", problem.line.unwrap())),
        "{problem}"
    );

    let load = load_custom_runtimes("[runtime.a]\nx = 1\n\n\nname = \"unterminated\n", &[]);
    assert_eq!(load.problems[0].line, Some(5), "{:#?}", load.problems);
}

/// A bad runtime next to the good one: the bad one is reported on the line
/// marked `# <-`, the good one still loads.
fn assert_refused(bad: &str, id: &str, expected: &[&str]) {
    for text in [format!("{MYCLI}{bad}"), format!("{bad}{MYCLI}")] {
        let load = load(&text);
        assert_eq!(ids(&load), ["mycli"], "the good runtime still loads next to\n{bad}\n{:#?}", load.problems);
        let line = line_of(&text, "# <-");
        let problem = load
            .problems
            .iter()
            .find(|problem| problem.runtime.as_deref() == Some(id) && problem.line == Some(line))
            .unwrap_or_else(|| panic!("no problem for {id} on line {line} of\n{text}\n{:#?}", load.problems));
        for part in expected {
            assert!(problem.message.contains(part), "{:?} does not say {part:?}", problem.message);
        }
        assert!(problem.to_string().starts_with(&format!("config.toml:{line}: runtime {id:?}: ")), "{problem}");
    }
}

/// A runtime that would load, with `extra` lines after `executable`.
fn minimal(id_header: &str, extra: &str) -> String {
    format!(
        "\n{id_header}\ndisplay_name = \"Bad\"\nexecutable = [\"bad\"]\n{extra}\nlimitations = [\"NATIVE_RESUME_UNSUPPORTED\", \"HOST_LOSS_RESTARTS_FRESH\", \"COMPLETION_UNOBSERVED\", \"LOGIN_NOT_IN_TERMINAL\", \"PERMISSION_PROFILE_UNENFORCED\", \"RECEIPT_UNAVAILABLE\"]\n"
    )
}

#[test]
fn the_minimal_runtime_of_these_tests_loads() {
    let load = load(&minimal("[runtime.fine]", ""));
    assert!(load.problems.is_empty(), "{:#?}", load.problems);
    assert_eq!(ids(&load), ["fine"]);
}

#[test]
fn a_bad_id_is_refused() {
    assert_refused(&minimal("[runtime.My_CLI]  # <-", ""), "My_CLI", &["id"]);
    assert_refused(&minimal("[runtime.9lives]  # <-", ""), "9lives", &["id"]);
    let long = format!("[runtime.a{}]  # <-", "b".repeat(32));
    assert_refused(&minimal(&long, ""), &format!("a{}", "b".repeat(32)), &["id"]);
    assert_refused(&minimal("[runtime.\"my cli\"]  # <-", ""), "my cli", &["id"]);
}

#[test]
fn an_id_of_a_built_in_runtime_is_refused() {
    assert_refused(&minimal("[runtime.claude]  # <-", ""), "claude", &["built-in"]);
    assert_refused(&minimal("[runtime.shell]  # <-", ""), "shell", &["built-in"]);
}

#[test]
fn an_unknown_key_is_refused_and_a_close_one_suggested() {
    assert_refused(
        &minimal("[runtime.bad]", "base_arg = [\"-x\"]  # <-"),
        "bad",
        &["unknown key `base_arg`", "`base_args`"],
    );
    assert_refused(
        &minimal("[runtime.bad]", "[runtime.bad.resume]\nlatests = [\"-c\"]  # <-"),
        "bad",
        &["`resume.latests`"],
    );
    // A key under the runtime's table written after its resume table.
    assert_refused(&minimal("[runtime.bad]", "environment.NAME = \"1\"\ncolour = true  # <-"), "bad", &["`colour`"]);
}

#[test]
fn the_placeholder_outside_reference_args_is_refused() {
    assert_refused(
        &minimal("[runtime.bad]", "base_args = [\"--session\", \"{reference}\"]  # <-"),
        "bad",
        &["`base_args` item 2", "{reference}"],
    );
    assert_refused(
        &minimal("[runtime.bad]", "[runtime.bad.resume]\nlatest = [\"--continue={reference}\"]  # <-"),
        "bad",
        &["`resume.latest`", "{reference}"],
    );
}

#[test]
fn a_reference_form_carries_the_placeholder_exactly_once() {
    let resume = "[runtime.bad.resume]\nreference = [\"--resume\", \"{reference}\", \"{reference}\"]  # <-\nreference_pattern = \"[a-z]+\"";
    assert_refused(&minimal("[runtime.bad]", resume), "bad", &["exactly once", "2 times"]);
    let resume = "[runtime.bad.resume]\nreference = [\"--resume\"]  # <-\nreference_pattern = \"[a-z]+\"";
    assert_refused(&minimal("[runtime.bad]", resume), "bad", &["exactly once", "0 times"]);
}

#[test]
fn a_reference_without_a_pattern_is_refused() {
    let resume = "[runtime.bad.resume]\nreference = [\"--resume\", \"{reference}\"]  # <-";
    assert_refused(&minimal("[runtime.bad]", resume), "bad", &["reference_pattern"]);
}

#[test]
fn an_invalid_pattern_is_refused() {
    let resume =
        "[runtime.bad.resume]\nreference = [\"--resume\", \"{reference}\"]\nreference_pattern = \"[0-9\"  # <-";
    assert_refused(&minimal("[runtime.bad]", resume), "bad", &["not a valid pattern"]);
}

#[test]
fn a_declaration_that_differs_from_what_the_launcher_implies_is_refused() {
    // Declaring less than the launcher implies.
    let weaker = "\n[runtime.bad]\ndisplay_name = \"Bad\"\nexecutable = [\"bad\"]\nlimitations = [\"COMPLETION_UNOBSERVED\"]  # <-\n";
    assert_refused(
        weaker,
        "bad",
        &[
            "missing",
            "LOGIN_NOT_IN_TERMINAL",
            "NATIVE_RESUME_UNSUPPORTED",
            "HOST_LOSS_RESTARTS_FRESH",
            "PERMISSION_PROFILE_UNENFORCED",
        ],
    );
    // Declaring more.
    let stronger = "\n[runtime.bad]\ndisplay_name = \"Bad\"\nexecutable = [\"bad\"]\nlogin = \"in_terminal\"\nlimitations = [\"NATIVE_RESUME_UNSUPPORTED\", \"HOST_LOSS_RESTARTS_FRESH\", \"COMPLETION_UNOBSERVED\", \"LOGIN_NOT_IN_TERMINAL\", \"PERMISSION_PROFILE_UNENFORCED\", \"RECEIPT_UNAVAILABLE\"]  # <-\n";
    assert_refused(stronger, "bad", &["declared but not implied LOGIN_NOT_IN_TERMINAL"]);
    // A reference form implies its proof is pending.
    let resume = "[runtime.bad.resume]\nreference = [\"--resume\", \"{reference}\"]\nreference_pattern = \"[a-z]+\"";
    let text = format!(
        "\n[runtime.bad]\ndisplay_name = \"Bad\"\nexecutable = [\"bad\"]\nlimitations = [\"COMPLETION_UNOBSERVED\", \"LOGIN_NOT_IN_TERMINAL\", \"PROVIDER_SELECTION_UNSUPPORTED\", \"PERMISSION_PROFILE_UNENFORCED\", \"RECEIPT_UNAVAILABLE\"]  # <-\n{resume}\n"
    );
    assert_refused(&text, "bad", &["missing REFERENCE_PENDING_LIVE_PROOF"]);
    // No declaration at all: the header's line, naming what is implied.
    let none = "\n[runtime.bad]  # <-\ndisplay_name = \"Bad\"\nexecutable = [\"bad\"]\n";
    assert_refused(none, "bad", &["`limitations` is missing", "limitations = [\"COMPLETION_UNOBSERVED\", \"HOST_LOSS_RESTARTS_FRESH\", \"LOGIN_NOT_IN_TERMINAL\", \"NATIVE_RESUME_UNSUPPORTED\", \"PERMISSION_PROFILE_UNENFORCED\", \"RECEIPT_UNAVAILABLE\"]"]);
}

#[test]
fn an_unknown_limitation_code_is_refused() {
    let text = "\n[runtime.bad]\ndisplay_name = \"Bad\"\nexecutable = [\"bad\"]\nlimitations = [\"COMPLETION_UNOBSERVED\", \"TELEPATHY_UNSUPPORTED\"]  # <-\n";
    assert_refused(text, "bad", &["unknown limitation code \"TELEPATHY_UNSUPPORTED\""]);
}

#[test]
fn executables_and_arguments_are_checked() {
    assert_refused(
        &minimal("[runtime.bad]", "known_paths = []\nexecutable = 5  # <-").replace("executable = [\"bad\"]\n", ""),
        "bad",
        &["array of strings"],
    );
    assert_refused(
        &minimal("[runtime.bad]", "").replace("executable = [\"bad\"]", "executable = [\"/usr/bin/bad\"]  # <-"),
        "bad",
        &["plain executable name"],
    );
    assert_refused(
        &minimal("[runtime.bad]", "").replace("executable = [\"bad\"]", "executable = [\"bad cli\"]  # <-"),
        "bad",
        &["plain executable name"],
    );
    assert_refused(&minimal("[runtime.bad]", "base_args = [\"--a\\nb\"]  # <-"), "bad", &["control character"]);
    assert_refused(&minimal("[runtime.bad]", "base_args = [\"\"]  # <-"), "bad", &["is empty"]);
    assert_refused(&minimal("[runtime.bad]", "known_paths = [\"bin/bad\"]  # <-"), "bad", &["absolute"]);
    assert_refused(&minimal("[runtime.bad]", "supported = \"yes\"  # <-"), "bad", &["true or false"]);
    assert_refused(&minimal("[runtime.bad]", "version_floor = \"1.x\"  # <-"), "bad", &["dotted numbers"]);
    assert_refused(&minimal("[runtime.bad]", "login = \"browser\"  # <-"), "bad", &["\"in_terminal\""]);
    assert_refused(&minimal("[runtime.bad]", "login_args = [\"login\"]  # <-"), "bad", &["in_terminal"]);
    assert_refused(&minimal("[runtime.bad]", "model_required = true  # <-"), "bad", &["model_flag"]);
    assert_refused(&minimal("[runtime.bad]", "environment = { TERM = \"dumb\" }  # <-"), "bad", &["set by the host"]);
    assert_refused(&minimal("[runtime.bad]", "reads_environment = [\"NOT-A-NAME\"]  # <-"), "bad", &["variable name"]);
    assert_refused(&minimal("[runtime.bad]", "interrupt_keys = \"\"  # <-"), "bad", &["interrupt_keys"]);
    assert_refused(&minimal("[runtime.bad]", "interrupt_keeps_request = 1  # <-"), "bad", &["true or false"]);
    // Declared by the key, so implied: the list must then name it.
    let keeps = "\n[runtime.bad]\ndisplay_name = \"Bad\"\nexecutable = [\"bad\"]\ninterrupt_keeps_request = true\nlimitations = [\"NATIVE_RESUME_UNSUPPORTED\", \"HOST_LOSS_RESTARTS_FRESH\", \"COMPLETION_UNOBSERVED\", \"LOGIN_NOT_IN_TERMINAL\", \"PERMISSION_PROFILE_UNENFORCED\", \"RECEIPT_UNAVAILABLE\"]  # <-\n";
    assert_refused(keeps, "bad", &["INTERRUPT_KEEPS_REQUEST"]);
    assert_refused(
        &minimal("[runtime.bad]", "display_name = 1979-05-27  # <-").replacen("display_name = \"Bad\"\n", "", 1),
        "bad",
        &["a date"],
    );
    assert_refused(
        &minimal("[runtime.bad]", "")
            .replace("display_name = \"Bad\"\n", "")
            .replace("[runtime.bad]", "[runtime.bad]  # <-"),
        "bad",
        &["`display_name` is required"],
    );
}

#[test]
fn every_problem_of_a_runtime_is_reported_at_once() {
    let text = "[runtime.bad]\ndisplay_name = \"Bad\"\nexecutable = [\"a/b\"]\nbase_args = [\"\"]\ncolour = 1\n";
    let load = load(text);
    let lines: Vec<Option<usize>> = load.problems.iter().map(|problem| problem.line).collect();
    assert_eq!(lines, [Some(1), Some(3), Some(4), Some(5)], "{:#?}", load.problems);
    assert!(load.problems[0].message.contains("`limitations` is required"));
}

#[test]
fn a_hostile_reference_is_refused_by_the_anchored_pattern() {
    let text = format!(
        "{MYCLI}\n[runtime.loose]\ndisplay_name = \"Loose\"\nexecutable = [\"loose\"]\nlimitations = [\"COMPLETION_UNOBSERVED\", \"LOGIN_NOT_IN_TERMINAL\", \"PROVIDER_SELECTION_UNSUPPORTED\", \"REFERENCE_PENDING_LIVE_PROOF\", \"PERMISSION_PROFILE_UNENFORCED\", \"RECEIPT_UNAVAILABLE\"]\n[runtime.loose.resume]\nreference = [\"--session={{reference}}\"]\nreference_pattern = \"[a-z0-9]+\"\n"
    );
    let load = load(&text);
    assert!(load.problems.is_empty(), "{:#?}", load.problems);
    let long = "a".repeat(4096);
    let hostile = [
        "",
        "abc def",
        "abc; rm -rf /",
        "abc\n--continue",
        "abc --continue",
        "-abc",
        "--resume",
        "$(id)",
        "../etc/passwd",
        "ABC",
        "abc\0",
        long.as_str(),
    ];
    for id in ["loose", "mycli"] {
        let descriptor = runtime(&load, id);
        for reference in hostile {
            let result = start(descriptor, None, Some(ResumeRequest::Reference(reference.into())));
            assert!(
                matches!(result, Err(AdmissionError::InvalidArgument(_))),
                "{id} accepted {reference:?}: {result:?}"
            );
        }
        let result = start(descriptor, None, Some(ResumeRequest::Reference(format!("{UUID}; id"))));
        assert!(matches!(result, Err(AdmissionError::InvalidArgument(_))), "{id}: {result:?}");
    }
    let loose = runtime(&load, "loose");
    let plan = start(loose, None, Some(ResumeRequest::Reference("abc123".into()))).unwrap();
    assert_eq!(args(&plan), ["--session=abc123"]);
    let refused = start(loose, None, Some(ResumeRequest::Latest)).unwrap_err();
    assert!(
        matches!(refused, AdmissionError::Unsupported { limitation: limitation::PROVIDER_SELECTION_UNSUPPORTED, .. }),
        "{refused:?}"
    );
}

#[test]
fn other_layouts_of_the_same_runtime_load_and_locate() {
    let text = "[runtime]\ndot.display_name = \"Dot\"\ndot.executable = [\"dot\"]\ndot.limitations = [\"NATIVE_RESUME_UNSUPPORTED\", \"HOST_LOSS_RESTARTS_FRESH\", \"COMPLETION_UNOBSERVED\", \"LOGIN_NOT_IN_TERMINAL\", \"PERMISSION_PROFILE_UNENFORCED\", \"RECEIPT_UNAVAILABLE\"]\ninline = { display_name = \"Inline\", executable = [\"inline\"], limitations = [\"NATIVE_RESUME_UNSUPPORTED\", \"HOST_LOSS_RESTARTS_FRESH\", \"COMPLETION_UNOBSERVED\",\n  \"LOGIN_NOT_IN_TERMINAL\", \"PERMISSION_PROFILE_UNENFORCED\", \"RECEIPT_UNAVAILABLE\"], base_args = [\"{reference}\"] }\n";
    let load = load(text);
    assert_eq!(ids(&load), ["dot"]);
    assert_eq!(load.problems.len(), 1, "{:#?}", load.problems);
    assert_eq!(load.problems[0].line, Some(6), "the line of the inline key");
    assert_eq!(load.problems[0].runtime.as_deref(), Some("inline"));
}

#[test]
fn unknown_top_level_keys_are_refused() {
    let text = format!("{MYCLI}\n[runtimes.typo]\ndisplay_name = \"Typo\"\n");
    let load = load(&text);
    assert_eq!(ids(&load), ["mycli"]);
    assert_eq!(load.problems.len(), 1, "{:#?}", load.problems);
    let problem = &load.problems[0];
    assert_eq!(problem.line, Some(line_of(&text, "[runtimes.typo]")));
    assert_eq!(problem.runtime, None);
    assert!(problem.message.contains("did you mean `runtime`"), "{problem}");

    let load = self::load("runtime = 3\n");
    assert_eq!(load.problems.len(), 1);
    assert!(load.problems[0].message.contains("must be a table"), "{:?}", load.problems[0]);
}

#[test]
fn an_empty_file_declares_nothing() {
    let load = load("# nothing here yet\n");
    assert!(load.runtimes.is_empty() && load.problems.is_empty());
}

#[test]
fn a_missing_file_is_no_runtime_and_no_problem() {
    let path = std::env::temp_dir().join(format!("panehost-config-test-{}-missing/config.toml", std::process::id()));
    let load = load_file(&path, &["shell"]);
    assert!(load.runtimes.is_empty());
    assert!(load.problems.is_empty(), "{:#?}", load.problems);
}

#[test]
fn an_unreadable_path_is_a_problem() {
    let directory = std::env::temp_dir().join(format!("panehost-config-test-{}-dir", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let load = load_file(&directory, &["shell"]);
    std::fs::remove_dir(&directory).unwrap();
    assert!(load.runtimes.is_empty());
    assert_eq!(load.problems.len(), 1, "{:#?}", load.problems);
    assert_eq!(load.problems[0].line, None);
    assert!(load.problems[0].message.starts_with("cannot read "), "{}", load.problems[0]);
}

#[test]
fn a_file_on_disk_loads() {
    let directory = std::env::temp_dir().join(format!("panehost-config-test-{}-file", std::process::id()));
    std::fs::create_dir_all(&directory).unwrap();
    let path = directory.join("config.toml");
    std::fs::write(&path, MYCLI).unwrap();
    let load = load_file(&path, &["shell", "claude"]);
    std::fs::remove_dir_all(&directory).unwrap();
    assert!(load.problems.is_empty(), "{:#?}", load.problems);
    assert_eq!(ids(&load), ["mycli"]);
}

#[test]
fn the_default_path_follows_xdg_then_home() {
    let mut env = HostEnvironment::default();
    env.variables.insert("HOME".into(), "/home/ada".into());
    assert_eq!(default_config_path(&env), Path::new("/home/ada/.config/panehost/config.toml"));
    env.variables.insert("XDG_CONFIG_HOME".into(), "relative/dir".into());
    assert_eq!(
        default_config_path(&env),
        Path::new("/home/ada/.config/panehost/config.toml"),
        "a relative value is ignored"
    );
    env.variables.insert("XDG_CONFIG_HOME".into(), "/etc/xdg-ada".into());
    assert_eq!(default_config_path(&env), Path::new("/etc/xdg-ada/panehost/config.toml"));
}

#[test]
fn problems_display_with_file_line_and_runtime() {
    let problem = ConfigProblem { line: Some(12), runtime: Some("mycli".into()), message: "bad".into() };
    assert_eq!(problem.to_string(), "config.toml:12: runtime \"mycli\": bad");
    let problem = ConfigProblem { line: None, runtime: None, message: "cannot read".into() };
    assert_eq!(problem.to_string(), "config.toml: cannot read");
}

#[test]
fn declared_hooks_point_a_custom_runtime_at_the_host() {
    let text = "\n[runtime.hooked]\ndisplay_name = \"Hooked\"\nexecutable = [\"hooked\"]\n\
                completion_args = [\"--on-stop\", \"{notify} --event turn_completed\"]\n\
                completion_environment = { HOOKED_START = \"{notify_program}\" }\n\
                limitations = [\"NATIVE_RESUME_UNSUPPORTED\", \"HOST_LOSS_RESTARTS_FRESH\", \"LOGIN_NOT_IN_TERMINAL\", \"PERMISSION_PROFILE_UNENFORCED\", \"RECEIPT_UNAVAILABLE\"]\n";
    let load = load(text);
    assert!(load.problems.is_empty(), "{:#?}", load.problems);
    let hooked = runtime(&load, "hooked");
    assert_eq!(hooked.completion, CompletionSignal::Hook);

    // A host that offers its notify command gets the hooks, filled in.
    let mut host = environment();
    host.notify_command = Some(PathBuf::from("/opt/panehost"));
    let plan =
        plan_start(hooked, PathBuf::from("/opt/cli"), PathBuf::from("/"), &StartRequest::default(), &host).unwrap();
    assert_eq!(args(&plan), ["--on-stop", "'/opt/panehost' notify --event turn_completed"]);
    assert!(plan.env.contains(&("HOOKED_START".into(), "/opt/panehost".into())));
    assert_eq!(plan.completion, CompletionSignal::Hook);

    // One that does not: no hooks, and nothing observes the turns.
    let plan = start(hooked, None, None).unwrap();
    assert!(args(&plan).is_empty(), "{:?}", args(&plan));
    assert_eq!(plan.completion, CompletionSignal::Unobserved);

    // Hooks that never name the notify command cannot report anything.
    let deaf = minimal("[runtime.bad]", "completion_args = [\"--on-stop\", \"true\"]  # <-");
    assert_refused(&deaf, "bad", &["never name the host's notify command"]);
    // Declared hooks observe turns: COMPLETION_UNOBSERVED is not implied.
    let claims = "\n[runtime.bad]\ndisplay_name = \"Bad\"\nexecutable = [\"bad\"]\n\
                  completion_args = [\"{notify} --event turn_completed\"]\n\
                  limitations = [\"NATIVE_RESUME_UNSUPPORTED\", \"HOST_LOSS_RESTARTS_FRESH\", \"COMPLETION_UNOBSERVED\", \"LOGIN_NOT_IN_TERMINAL\", \"PERMISSION_PROFILE_UNENFORCED\", \"RECEIPT_UNAVAILABLE\"]  # <-\n";
    assert_refused(claims, "bad", &["COMPLETION_UNOBSERVED"]);
}

#[test]
fn refused_versions_load_as_ranges_with_reasons() {
    let text = minimal(
        "[runtime.aged]",
        "refused_versions = [{ from = \"2.0\", before = \"2.1.4\", reason = \"deletes its history\" }, { from = \"3.0.0\", reason = \"retired\" }]",
    );
    let loaded = load(&text);
    assert!(loaded.problems.is_empty(), "{:#?}", loaded.problems);
    let aged = runtime(&loaded, "aged");
    assert_eq!(aged.refused_versions.len(), 2);
    assert_eq!(aged.refusal(Some("aged 2.1.3")).map(|range| range.reason.as_str()), Some("deletes its history"));
    assert_eq!(aged.refusal(Some("aged 2.1.4")), None);
    assert_eq!(aged.refusal(Some("aged 4.0")).map(|range| range.reason.as_str()), Some("retired"));
    assert_eq!(aged.refusal(Some("aged 1.9.9")), None);
    // Without the key, nothing is refused.
    assert!(runtime(&load(&minimal("[runtime.fine]", "")), "fine").refused_versions.is_empty());
}

#[test]
fn a_bad_refused_range_is_refused_on_its_line() {
    for (entry, says) in [
        ("{ from = \"two\", reason = \"r\" }", "`from` must be dotted numbers"),
        ("{ reason = \"r\" }", "`from` must be dotted numbers"),
        ("{ from = \"2.0\", before = \"next\", reason = \"r\" }", "`before` must be dotted numbers"),
        ("{ from = \"2.0\", before = \"2.0.0\", reason = \"r\" }", "later version than `from`"),
        ("{ from = \"2.0\", before = \"1.9\", reason = \"r\" }", "later version than `from`"),
        ("{ from = \"2.0\" }", "`reason` must be one line"),
        ("{ from = \"2.0\", reason = \"two\\nlines\" }", "`reason` must be one line"),
        ("{ from = \"2.0\", reason = \"r\", until = \"3.0\" }", "unknown key `until`"),
        ("\"2.0\"", "must be a table"),
    ] {
        let bad = minimal("[runtime.aged]", &format!("refused_versions = [{entry}]  # <-"));
        assert_refused(&bad, "aged", &["refused_versions", says]);
    }
    assert_refused(
        &minimal("[runtime.aged]", "refused_versions = \"2.0\"  # <-"),
        "aged",
        &["must be an array of tables"],
    );
}
