//! The contract suite: for every descriptor, what its launcher actually
//! produces agrees with what it declares.

use panehost_adapters::contract::{declared_limitations, implied_limitations, LaunchFacts};
use panehost_adapters::descriptor::{Descriptor, PermissionProfile, ReceiptSupport, ResumeMode, REFERENCE_PLACEHOLDER};
use panehost_adapters::launcher::{self, plan_start, StartRequest};
use panehost_adapters::{runtimes, AdmissionError, HostEnvironment};
use panehost_ipc::{limitation, ResumeRequest};
use std::collections::BTreeSet;
use std::path::PathBuf;

fn environment() -> HostEnvironment {
    let mut env = HostEnvironment::default();
    for (name, value) in [
        ("HOME", "/home/ada"),
        ("PATH", "/usr/bin:/bin"),
        ("SHELL", "/bin/sh"),
        ("LANG", "C.UTF-8"),
        ("HOST_ONLY_SECRET", "must-not-leak"),
        ("AWS_SECRET_ACCESS_KEY", "must-not-leak"),
        ("ANTHROPIC_API_KEY", "sk-test"),
        ("OPENAI_API_KEY", "sk-test"),
    ] {
        env.variables.insert(name.into(), value.into());
    }
    env
}

fn start(
    descriptor: &Descriptor,
    resume: Option<ResumeRequest>,
) -> Result<panehost_adapters::LaunchPlan, AdmissionError> {
    let request = StartRequest { model: None, resume, ..StartRequest::default() };
    plan_start(descriptor, PathBuf::from("/opt/cli"), PathBuf::from("/"), &request, &environment())
}

fn start_with_profile(
    descriptor: &Descriptor,
    resume: Option<ResumeRequest>,
    profile: PermissionProfile,
    accept_weaker_boundary: bool,
) -> Result<panehost_adapters::LaunchPlan, AdmissionError> {
    let request = StartRequest { model: None, resume, permission_profile: Some(profile), accept_weaker_boundary };
    plan_start(descriptor, PathBuf::from("/opt/cli"), PathBuf::from("/"), &request, &environment())
}

/// True when `needle` occurs in `args` as consecutive arguments.
fn contains_run(args: &[String], needle: &[&str]) -> bool {
    needle.is_empty()
        || args.windows(needle.len()).any(|window| window.iter().zip(needle).all(|(arg, want)| arg == want))
}

/// A reference each built-in pattern should accept.
fn sample_reference(descriptor: &Descriptor) -> String {
    let pattern = descriptor.reference_pattern.as_ref().expect("a reference form needs a pattern").source().to_owned();
    let uuid = "0f3c2a1e-9b7d-4c5e-8a6f-1d2e3f4a5b6c";
    match pattern.as_str() {
        p if p == panehost_adapters::reference_pattern::UUID => uuid.into(),
        "fx-[0-9a-f]{16}" => "fx-0123456789abcdef".into(),
        "ses_[0-9A-Za-z]{8,64}" => "ses_3kd93kdl30dk3l2".into(),
        p if p.starts_with("T-") => format!("T-{uuid}"),
        "[0-9A-Za-z][0-9A-Za-z_]{0,63}" => "20261130_3".into(),
        "[0-9]{8}_[0-9]{6}_[0-9a-f]{6}" => "20261201_185953_1444df".into(),
        "[0-9a-f]{32}" => "09e658159f522f12c9ee4bc49461a9d4".into(),
        other => panic!("no sample reference for pattern {other:?} of {}: add one here", descriptor.id),
    }
}

#[test]
fn declared_limitations_equal_what_the_launcher_implies() {
    let mut mismatches = Vec::new();
    for descriptor in runtimes::built_in() {
        let facts = LaunchFacts::gather(&descriptor, &environment());
        let implied = implied_limitations(&facts);
        let declared = declared_limitations(&descriptor);
        if implied != declared {
            mismatches.push(format!("{}: declared {declared:?}, the launcher implies {implied:?}", descriptor.id));
        }
        for code in &declared {
            assert!(limitation::ALL.contains(&code.as_str()), "{}: unknown limitation {code}", descriptor.id);
        }
    }
    assert!(mismatches.is_empty(), "{}", mismatches.join("\n"));
}

#[test]
fn a_descriptor_whose_declaration_does_not_match_fails_the_check() {
    let mut descriptor = runtimes::built_in().into_iter().find(|d| d.id == "gemini").unwrap();
    descriptor.limitations.retain(|code| code != limitation::PROVIDER_SELECTION_ONLY);
    let facts = LaunchFacts::gather(&descriptor, &environment());
    assert_ne!(implied_limitations(&facts), declared_limitations(&descriptor));
}

#[test]
fn an_exact_resume_not_proven_live_implies_its_limitation() {
    let mut descriptor = runtimes::built_in().into_iter().find(|d| d.id == "claude").unwrap();
    let proven = implied_limitations(&LaunchFacts::gather(&descriptor, &environment()));
    assert!(!proven.contains(limitation::REFERENCE_PENDING_LIVE_PROOF));
    descriptor.references_proven_live = false;
    let unproven = implied_limitations(&LaunchFacts::gather(&descriptor, &environment()));
    assert!(unproven.contains(limitation::REFERENCE_PENDING_LIVE_PROOF));
    // A runtime that resumes no reference has nothing to prove.
    let mut shell = runtimes::built_in().into_iter().find(|d| d.id == "shell").unwrap();
    shell.references_proven_live = false;
    let implied = implied_limitations(&LaunchFacts::gather(&shell, &environment()));
    assert!(!implied.contains(limitation::REFERENCE_PENDING_LIVE_PROOF));
}

#[test]
fn only_the_fixture_agent_is_for_tests() {
    let for_tests: Vec<String> = runtimes::built_in().into_iter().filter(|d| d.for_tests).map(|d| d.id).collect();
    assert_eq!(for_tests, ["fixture"]);
}

#[test]
fn runtime_ids_are_unique() {
    let mut seen = BTreeSet::new();
    for descriptor in runtimes::built_in() {
        assert!(seen.insert(descriptor.id.clone()), "duplicate id {}", descriptor.id);
    }
    assert_eq!(seen.len(), 22, "shell, twenty agent CLIs and the fixture");
}

#[test]
fn reference_forms_have_anchored_patterns_and_only_they_carry_the_placeholder() {
    for descriptor in runtimes::built_in() {
        for form in &descriptor.resume_forms {
            let carries = form.args.iter().any(|arg| arg.contains(REFERENCE_PLACEHOLDER));
            assert_eq!(carries, form.mode == ResumeMode::Reference, "{} {:?}", descriptor.id, form.mode);
        }
        if descriptor.resume_form(ResumeMode::Reference).is_some() {
            assert!(descriptor.reference_pattern.is_some(), "{} resumes references without a pattern", descriptor.id);
        }
    }
}

#[test]
fn hostile_references_never_reach_argv() {
    let long = "a".repeat(4096);
    let hostile = [
        "",
        " ",
        "abc def",
        "-x",
        "--",
        "--resume",
        "--dangerously-skip-permissions",
        "; rm -rf /",
        "$(id)",
        "`id`",
        "a|b",
        "a&&b",
        "../../etc/passwd",
        "id\n--continue",
        "id\r",
        "id\0",
        "\u{202e}fx",
        long.as_str(),
    ];
    for descriptor in runtimes::built_in() {
        if descriptor.resume_form(ResumeMode::Reference).is_none() {
            continue;
        }
        let valid = sample_reference(&descriptor);
        let mut cases: Vec<String> = hostile.iter().map(|s| (*s).to_owned()).collect();
        cases.push(format!("{valid} --continue"));
        cases.push(format!("{valid}\n"));
        cases.push(format!("-{valid}"));
        cases.push(format!("{valid};"));
        for reference in cases {
            let result = start(&descriptor, Some(ResumeRequest::Reference(reference.clone())));
            assert!(
                matches!(result, Err(AdmissionError::InvalidArgument(_))),
                "{} accepted hostile reference {reference:?}: {result:?}",
                descriptor.id
            );
        }
    }
}

#[test]
fn a_valid_reference_reaches_argv_as_one_argument() {
    for descriptor in runtimes::built_in() {
        if descriptor.resume_form(ResumeMode::Reference).is_none() {
            continue;
        }
        let reference = sample_reference(&descriptor);
        let plan = start(&descriptor, Some(ResumeRequest::Reference(reference.clone())))
            .unwrap_or_else(|err| panic!("{} refused {reference:?}: {err}", descriptor.id));
        let carrying: Vec<&String> = plan.args.iter().filter(|arg| arg.contains(&reference)).collect();
        assert_eq!(carrying.len(), 1, "{}: {:?}", descriptor.id, plan.args);
        assert!(
            carrying[0] == &reference || carrying[0].ends_with(&format!("={reference}")),
            "{}: {:?}",
            descriptor.id,
            plan.args
        );
    }
}

#[test]
fn the_environment_is_the_allow_list_plus_what_the_descriptor_names() {
    let allowed_from_host = panehost_adapters::environment::INHERITED_VARIABLES;
    for descriptor in runtimes::built_in() {
        let plan = start(&descriptor, None).unwrap_or_else(|err| panic!("{}: {err}", descriptor.id));
        for (name, value) in &plan.env {
            let named = allowed_from_host.contains(&name.as_str())
                || descriptor.reads_environment.contains(name)
                || descriptor.environment.iter().any(|(declared, _)| declared == name)
                || descriptor.self_update_off.environment.iter().any(|(declared, _)| declared == name)
                || descriptor
                    .permission_profiles
                    .iter()
                    .any(|(_, form)| form.environment.iter().any(|(declared, _)| declared == name))
                || name == "TERM"
                || name == "COLORTERM";
            assert!(named, "{} leaks {name}={value}", descriptor.id);
            assert_ne!(value, "must-not-leak", "{} leaks {name}", descriptor.id);
        }
        for (name, value) in descriptor.self_update_off.environment.iter() {
            assert!(plan.env.contains(&(name.clone(), value.clone())), "{} misses {name}", descriptor.id);
        }
        for arg in &descriptor.self_update_off.args {
            assert!(plan.args.contains(arg), "{} misses {arg}", descriptor.id);
        }
    }
}

#[test]
fn codex_resume_leads_its_argv_and_claude_resume_follows() {
    let all = runtimes::built_in();
    let codex = all.iter().find(|d| d.id == "codex").unwrap();
    let plan = start(codex, Some(ResumeRequest::Latest)).unwrap();
    assert_eq!(plan.args[..2], ["resume", "--last"]);
    assert!(plan.args.contains(&"--no-daemon".to_owned()));
    let claude = all.iter().find(|d| d.id == "claude").unwrap();
    let plan = start(claude, Some(ResumeRequest::Latest)).unwrap();
    assert_eq!(plan.args.last().unwrap(), "--continue");
}

/// Every profile a built-in runtime enforces, with what its argv must
/// contain. Adding a mapping to a descriptor means adding it here.
const PROFILE_ARGV: &[(&str, PermissionProfile, &[&str])] = &[
    ("claude", PermissionProfile::ReadOnly, &["--permission-mode", "plan", "--disallowedTools=Bash,Edit,Write"]),
    ("claude", PermissionProfile::WorkspaceWrite, &["--permission-mode", "acceptEdits"]),
    ("claude", PermissionProfile::FullAccess, &["--permission-mode", "bypassPermissions"]),
    ("codex", PermissionProfile::ReadOnly, &["-s", "read-only", "-a", "never"]),
    ("codex", PermissionProfile::WorkspaceWrite, &["-s", "workspace-write", "-a", "on-request"]),
    ("codex", PermissionProfile::FullAccess, &["-s", "danger-full-access", "-a", "never"]),
    ("gemini", PermissionProfile::ReadOnly, &["--approval-mode", "plan"]),
    ("gemini", PermissionProfile::WorkspaceWrite, &["--approval-mode", "auto_edit"]),
    ("gemini", PermissionProfile::FullAccess, &["--approval-mode", "yolo"]),
    ("opencode", PermissionProfile::FullAccess, &["--auto"]),
    ("copilot", PermissionProfile::ReadOnly, &["--deny-tool=write", "--deny-tool=shell"]),
    ("copilot", PermissionProfile::WorkspaceWrite, &["--allow-tool=write", "--disallow-temp-dir"]),
    ("copilot", PermissionProfile::FullAccess, &["--allow-all"]),
    ("qwen", PermissionProfile::ReadOnly, &["--approval-mode", "plan"]),
    ("qwen", PermissionProfile::WorkspaceWrite, &["--approval-mode", "default"]),
    ("qwen", PermissionProfile::FullAccess, &["--approval-mode", "yolo"]),
];

#[test]
fn each_profile_reaches_the_launchers_argv_as_mapped() {
    let all = runtimes::built_in();
    for (id, profile, expected) in PROFILE_ARGV {
        let descriptor = all.iter().find(|d| d.id == *id).unwrap();
        let plan = start_with_profile(descriptor, None, *profile, false)
            .unwrap_or_else(|err| panic!("{id} refused {}: {err}", profile.as_str()));
        assert!(contains_run(&plan.args, expected), "{id} {}: {:?} lacks {expected:?}", profile.as_str(), plan.args);
        assert_eq!(plan.permission_profile, Some(*profile), "{id}");
        assert_eq!(plan.unenforced_profile, None, "{id}");
    }
    // Exactly these: a runtime enforces no profile the table does not list.
    let mapped: BTreeSet<(String, PermissionProfile)> =
        PROFILE_ARGV.iter().map(|(id, profile, _)| ((*id).to_owned(), *profile)).collect();
    let declared: BTreeSet<(String, PermissionProfile)> =
        all.iter().flat_map(|d| d.enforced_profiles().into_iter().map(|profile| (d.id.clone(), profile))).collect();
    assert_eq!(mapped, declared);
}

/// `args` with the run `form` taken out, once.
fn without_run(args: &[String], form: &[&str]) -> Vec<String> {
    let mut rest = args.to_vec();
    if let Some(position) = args.windows(form.len().max(1)).position(|w| w.iter().zip(form).all(|(a, b)| a == b)) {
        if !form.is_empty() {
            rest.drain(position..position + form.len());
        }
    }
    rest
}

#[test]
fn a_start_without_a_profile_gets_the_host_default_where_it_is_enforced() {
    let mut defaulted = 0;
    for descriptor in runtimes::built_in() {
        let plain = start(&descriptor, None).unwrap_or_else(|err| panic!("{}: {err}", descriptor.id));
        assert_eq!(plain.unenforced_profile, None, "{}", descriptor.id);
        match descriptor.profile_form(PermissionProfile::HOST_DEFAULT) {
            Some(_) => {
                // Exactly the launch that names the default.
                let named = start_with_profile(&descriptor, None, PermissionProfile::HOST_DEFAULT, false).unwrap();
                assert_eq!(plain.args, named.args, "{}", descriptor.id);
                assert_eq!(plain.env, named.env, "{}", descriptor.id);
                assert_eq!(plain.permission_profile, Some(PermissionProfile::WorkspaceWrite), "{}", descriptor.id);
                defaulted += 1;
            }
            None => {
                assert_eq!(plain.permission_profile, None, "{}", descriptor.id);
                // And none of another profile's arguments.
                for (profile, form) in &descriptor.permission_profiles {
                    let form_args: Vec<&str> = form.args.iter().map(String::as_str).collect();
                    assert!(!contains_run(&plain.args, &form_args), "{} {}", descriptor.id, profile.as_str());
                }
            }
        }
    }
    // claude, codex, gemini, qwen, copilot.
    assert_eq!(defaulted, 5);
    assert_eq!(PermissionProfile::HOST_DEFAULT.as_str(), "workspace_write");
}

#[test]
fn every_enforced_profile_adds_its_form_and_nothing_else_changes() {
    for descriptor in runtimes::built_in() {
        let plain = start(&descriptor, None).unwrap_or_else(|err| panic!("{}: {err}", descriptor.id));
        // The argv with no profile at all: the plain start's, without the
        // default's arguments.
        let default_args: Vec<&str> = descriptor
            .default_profile()
            .and_then(|profile| descriptor.profile_form(profile))
            .map(|form| form.args.iter().map(String::as_str).collect())
            .unwrap_or_default();
        let bare = without_run(&plain.args, &default_args);
        for (profile, form) in &descriptor.permission_profiles {
            let plan = start_with_profile(&descriptor, None, *profile, false).unwrap();
            let form_args: Vec<&str> = form.args.iter().map(String::as_str).collect();
            assert!(contains_run(&plan.args, &form_args), "{} {}: {:?}", descriptor.id, profile.as_str(), plan.args);
            // The argv with the form's arguments taken out is the bare
            // one: nothing else moved.
            let rest = without_run(&plan.args, &form_args);
            assert_eq!(rest, bare, "{} {}", descriptor.id, profile.as_str());
            for (name, value) in &form.environment {
                assert!(plan.env.contains(&(name.clone(), value.clone())), "{} misses {name}", descriptor.id);
            }
        }
        // Distinct profiles give distinct launches.
        let argvs: BTreeSet<Vec<String>> = descriptor
            .enforced_profiles()
            .into_iter()
            .map(|profile| start_with_profile(&descriptor, None, profile, false).unwrap().args)
            .collect();
        assert_eq!(argvs.len(), descriptor.permission_profiles.len(), "{}", descriptor.id);
    }
}

#[test]
fn a_profile_the_runtime_cannot_enforce_is_refused_unless_a_weaker_boundary_is_accepted() {
    let mut refusals = 0;
    for descriptor in runtimes::built_in() {
        let plain = start(&descriptor, None).unwrap();
        for profile in PermissionProfile::ALL {
            if descriptor.profile_form(profile).is_some() {
                continue;
            }
            let refused = start_with_profile(&descriptor, None, profile, false).unwrap_err();
            assert!(
                matches!(&refused, AdmissionError::Unsupported { limitation, .. } if *limitation == limitation::PERMISSION_PROFILE_UNENFORCED),
                "{} {}: {refused:?}",
                descriptor.id,
                profile.as_str()
            );
            let body = refused.to_error_body();
            assert_eq!(
                (body.code.as_str(), body.limitation.as_deref()),
                ("OPERATION_UNSUPPORTED", Some(limitation::PERMISSION_PROFILE_UNENFORCED))
            );
            assert!(
                descriptor.limitations.iter().any(|code| code == limitation::PERMISSION_PROFILE_UNENFORCED),
                "{}",
                descriptor.id
            );

            let accepted = start_with_profile(&descriptor, None, profile, true).unwrap();
            // It starts as a start without a profile does.
            assert_eq!(accepted.args, plain.args, "{}: an unenforced profile adds nothing", descriptor.id);
            assert_eq!(
                (accepted.permission_profile, accepted.unenforced_profile),
                (plain.permission_profile, Some(profile)),
                "{}",
                descriptor.id
            );
            refusals += 1;
        }
    }
    assert!(refusals > 0);
    let all = runtimes::built_in();
    for id in ["grok", "shell", "fixture"] {
        let descriptor = all.iter().find(|d| d.id == id).unwrap();
        assert!(descriptor.permission_profiles.is_empty(), "{id} enforces no profile");
    }
    let opencode = all.iter().find(|d| d.id == "opencode").unwrap();
    assert_eq!(opencode.enforced_profiles(), [PermissionProfile::FullAccess]);
}

#[test]
fn the_contract_sees_an_undeclared_profile_gap() {
    let mut descriptor = runtimes::built_in().into_iter().find(|d| d.id == "codex").unwrap();
    descriptor.permission_profiles.retain(|(profile, _)| *profile != PermissionProfile::FullAccess);
    let facts = LaunchFacts::gather(&descriptor, &environment());
    let implied = implied_limitations(&facts);
    assert!(implied.contains(limitation::PERMISSION_PROFILE_UNENFORCED));
    assert_ne!(implied, declared_limitations(&descriptor));
    assert_eq!(facts.enforced_profiles(), [PermissionProfile::ReadOnly, PermissionProfile::WorkspaceWrite]);
}

#[test]
fn a_profile_holds_after_a_resume_subcommand() {
    let codex = runtimes::built_in().into_iter().find(|d| d.id == "codex").unwrap();
    let plan = start_with_profile(&codex, Some(ResumeRequest::Latest), PermissionProfile::ReadOnly, false).unwrap();
    assert_eq!(plan.args[..2], ["resume", "--last"]);
    assert!(contains_run(&plan.args[2..], &["-s", "read-only", "-a", "never"]), "{:?}", plan.args);
    let claude = runtimes::built_in().into_iter().find(|d| d.id == "claude").unwrap();
    let plan =
        start_with_profile(&claude, Some(ResumeRequest::Latest), PermissionProfile::WorkspaceWrite, false).unwrap();
    assert!(contains_run(&plan.args, &["--permission-mode", "acceptEdits"]), "{:?}", plan.args);
    assert_eq!(plan.args.last().unwrap(), "--continue");
}

#[test]
fn profile_names_are_the_wire_names() {
    let names: Vec<&str> = PermissionProfile::ALL.iter().map(|profile| profile.as_str()).collect();
    assert_eq!(names, ["read_only", "workspace_write", "full_access"]);
    for profile in PermissionProfile::ALL {
        assert_eq!(PermissionProfile::parse(profile.as_str()), Some(profile));
    }
    assert_eq!(PermissionProfile::parse("READ_ONLY"), None);
    assert_eq!(PermissionProfile::parse("read-only"), None);
}

#[test]
fn a_receipt_runs_once_with_the_prompt_as_one_argument_inside_the_read_only_boundary() {
    let environment = HostEnvironment::default();
    let prompt = "Reply with {\"panehost_receipt\":\"00\"}; no tools";
    for descriptor in runtimes::built_in() {
        let ReceiptSupport::OneShot(form) = &descriptor.receipt else { continue };
        let plan_with = |accept_weaker_boundary| {
            launcher::plan_receipt(
                &descriptor,
                PathBuf::from("/nonexistent/program"),
                PathBuf::from("/"),
                prompt,
                None,
                accept_weaker_boundary,
                &environment,
            )
        };
        let enforces_read_only =
            descriptor.profile_form(PermissionProfile::ReadOnly).is_some() || form.read_only_args.is_some();
        let (plan, enforced) = match plan_with(false) {
            Ok(planned) => planned,
            Err(refusal) => {
                // Only a runtime that cannot hold the boundary may refuse.
                assert!(!enforces_read_only, "{}: {refusal:?}", descriptor.id);
                plan_with(true).unwrap()
            }
        };
        assert_eq!(enforced, enforces_read_only, "{}", descriptor.id);
        assert_eq!(plan.args.iter().filter(|arg| *arg == prompt).count(), 1, "{}: {:?}", descriptor.id, plan.args);
        assert!(!plan.args.iter().any(|arg| arg.starts_with('{') && arg.ends_with('}')), "{}", descriptor.id);
        let boundary = form
            .read_only_args
            .clone()
            .or_else(|| descriptor.profile_form(PermissionProfile::ReadOnly).map(|profile| profile.args.clone()))
            .unwrap_or_default();
        let joined = plan.args.join("\u{0}");
        assert!(joined.contains(&boundary.join("\u{0}")), "{}: {:?} lacks {boundary:?}", descriptor.id, plan.args);
        // A receipt is no agent turn of a pane: no hook is injected.
        assert!(!plan.args.iter().any(|arg| arg.contains("notify")), "{}: {:?}", descriptor.id, plan.args);
    }
}

#[test]
fn sign_in_variables_are_ones_the_runtime_reads() {
    for descriptor in runtimes::built_in() {
        let Some(traces) = &descriptor.sign_in else { continue };
        for name in traces.credential_variables.iter().chain(&traces.config_dir_variable) {
            assert!(
                descriptor.reads_environment.contains(name),
                "{}: {name} shows a sign-in but never reaches the child",
                descriptor.id
            );
        }
    }
}

/// Every runtime that claims hooks or a notify program gets them in its
/// plan: arguments or a variable naming the host's notify command or a file
/// in the host's hook directory, and files only there. A sign-in gets none,
/// and without a hook directory the runtimes that need files launch
/// unobserved rather than half-injected.
#[test]
fn hooks_reach_the_plan_and_their_files_stay_in_the_hosts_directory() {
    use panehost_adapters::launcher::plan_login;
    use panehost_adapters::CompletionSignal;
    let notify = "/opt/panehost/bin/panehost";
    let hook_dir = PathBuf::from("/state/panehost/hooks");
    let mut host = environment();
    host.notify_command = Some(PathBuf::from(notify));
    host.hook_dir = Some(hook_dir.clone());
    let no_dir = HostEnvironment { hook_dir: None, ..host.clone() };
    for descriptor in runtimes::built_in() {
        let claims = matches!(descriptor.completion, CompletionSignal::Hook | CompletionSignal::NotifyProgram);
        let program = PathBuf::from("/opt/cli");
        let plan = plan_start(&descriptor, program.clone(), PathBuf::from("/"), &StartRequest::default(), &host)
            .unwrap_or_else(|err| panic!("{}: {err}", descriptor.id));
        assert_eq!(plan.completion, descriptor.completion, "{}", descriptor.id);
        assert_eq!(plan.hook_injection.is_some(), claims, "{}", descriptor.id);
        for file in &plan.files {
            assert!(file.path.starts_with(&hook_dir), "{} writes {}", descriptor.id, file.path.display());
        }
        if claims {
            let dir = hook_dir.display().to_string();
            let named = plan
                .args
                .iter()
                .chain(plan.env.iter().map(|(_, value)| value))
                .any(|text| text.contains(notify) || text.contains(&dir));
            assert!(named, "{}: nothing in the plan reaches the host", descriptor.id);
        } else {
            assert!(plan.files.is_empty(), "{}", descriptor.id);
        }
        if let Ok(login) = plan_login(&descriptor, program.clone(), PathBuf::from("/"), &host) {
            assert!(
                login.hook_injection.is_none() && login.files.is_empty(),
                "{}: a sign-in is no turn",
                descriptor.id
            );
        }
        let without = plan_start(&descriptor, program, PathBuf::from("/"), &StartRequest::default(), &no_dir).unwrap();
        if without.hook_injection.is_none() && claims {
            assert_eq!(without.completion, CompletionSignal::Unobserved, "{}", descriptor.id);
            assert!(without.files.is_empty(), "{}", descriptor.id);
        }
    }
}
