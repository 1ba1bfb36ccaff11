//! The built-in descriptors, one file per runtime.
//!
//! Each file states where its facts come from: `Evidence::CapturedHelp`
//! names the record in `adapters/evidence/` that the flags were checked
//! against (a test keeps the two in step); `Evidence::Documentation` marks a
//! runtime that does not install here, declared from its public docs.

mod amp;
mod antigravity;
mod autohand;
mod claude;
mod codex;
mod copilot;
mod cursor;
mod deepseek;
mod droid;
mod fixture;
mod gemini;
mod goose;
mod grok;
mod hermes;
mod kimi;
mod muse;
mod omp;
mod opencode;
mod pi;
mod qoder;
mod qwen;
mod shell;

use crate::descriptor::{
    CommandPolicy, CompletionSignal, ContextOwner, Descriptor, Evidence, Executable, LoginForm, ModelForm,
    PermissionProfile, ProfileForm, ReceiptForm, ReceiptSupport, ReferenceCapture, ResumeForm, ResumeMode,
    SelfUpdateOff, SignInTraces, VersionProbe,
};
use panehost_ipc::limitation;

/// Every built-in descriptor: `shell`, the advertised agent CLIs, and the
/// fixture agent the tests drive.
pub fn built_in() -> Vec<Descriptor> {
    vec![
        shell::descriptor(),
        claude::descriptor(),
        codex::descriptor(),
        gemini::descriptor(),
        antigravity::descriptor(),
        opencode::descriptor(),
        copilot::descriptor(),
        qwen::descriptor(),
        kimi::descriptor(),
        grok::descriptor(),
        deepseek::descriptor(),
        cursor::descriptor(),
        hermes::descriptor(),
        omp::descriptor(),
        pi::descriptor(),
        qoder::descriptor(),
        muse::descriptor(),
        droid::descriptor(),
        autohand::descriptor(),
        amp::descriptor(),
        goose::descriptor(),
        fixture::descriptor(),
    ]
}

/// Owned strings from literals.
pub(crate) fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|item| (*item).to_owned()).collect()
}

/// A resume form whose arguments follow the start arguments.
pub(crate) fn resume(mode: ResumeMode, args: &[&str]) -> ResumeForm {
    ResumeForm { mode, args: strings(args), leads: false }
}

/// A resume form that is a subcommand: its arguments lead the argv.
pub(crate) fn resume_subcommand(mode: ResumeMode, args: &[&str]) -> ResumeForm {
    ResumeForm { mode, args: strings(args), leads: true }
}

/// A permission profile enforced by adding these arguments to a launch.
pub(crate) fn profile(profile: PermissionProfile, args: &[&str]) -> (PermissionProfile, ProfileForm) {
    (profile, ProfileForm { args: strings(args), environment: Vec::new() })
}

/// Sign-in traces: credential files in the configuration directory
/// (`config_dir` under the home directory, or where `config_dir_variable`
/// points), and variables holding a key.
pub(crate) fn sign_in(
    config_dir_variable: Option<&str>,
    config_dir: &str,
    credential_files: &[&str],
    credential_variables: &[&str],
) -> Option<SignInTraces> {
    Some(SignInTraces {
        config_dir_variable: config_dir_variable.map(str::to_owned),
        config_dir: config_dir.to_owned(),
        credential_files: strings(credential_files),
        credential_variables: strings(credential_variables),
    })
}

/// A one-shot mode for the completion receipt, taking the interactive
/// read-only profile's arguments where `{read_only}` stands.
pub(crate) fn receipt(args: &[&str]) -> ReceiptSupport {
    ReceiptSupport::OneShot(ReceiptForm { args: strings(args), read_only_args: None })
}

/// Name and value pairs from literals.
pub(crate) fn variables(items: &[(&str, &str)]) -> Vec<(String, String)> {
    items.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect()
}

/// The defaults of an agent CLI that installs as `names`: found on PATH or
/// in the usual per-user install directories, version from `--version`,
/// supported, argv built by the host, Ctrl-C to interrupt, completion not
/// observed, sign-in outside the terminal, no resume, no permission profile
/// enforced. Each runtime's file overrides what differs.
pub(crate) fn agent_cli(id: &str, display_name: &str, names: &[&str], evidence: Evidence) -> Descriptor {
    let known_paths = names
        .iter()
        .flat_map(|name| {
            [format!("~/.local/bin/{name}"), format!("~/.npm-global/bin/{name}"), format!("/usr/local/bin/{name}")]
        })
        .collect();
    Descriptor {
        id: id.to_owned(),
        display_name: display_name.to_owned(),
        executable: Executable::Named { names: strings(names), known_paths },
        version: VersionProbe { args: strings(&["--version"]), floor: None },
        supported: true,
        command_policy: CommandPolicy::HostBuildsArgv,
        base_args: Vec::new(),
        model: ModelForm::NotTaken,
        resume_forms: Vec::new(),
        reference_pattern: None,
        references_proven_live: false,
        interrupt_keys: b"\x03".to_vec(),
        interrupt_presses: 1,
        interrupt_keeps_request: false,
        completion: CompletionSignal::Unobserved,
        hook_injection: None,
        declared_hooks: None,
        drops_early_input: false,
        // Every agent CLI here draws a full-screen prompt and reads raw keys.
        reads_raw_input: true,
        ready_marker: None,
        login: LoginForm::OutsideTerminal,
        sign_in: None,
        receipt: ReceiptSupport::Unavailable,
        reads_environment: Vec::new(),
        environment: Vec::new(),
        self_update_off: SelfUpdateOff::default(),
        permission_profiles: Vec::new(),
        limitations: Vec::new(),
        evidence,
        npm_package: None,
        pypi_distribution: None,
        refused_versions: Vec::new(),
        reference_capture: ReferenceCapture::None,
        context_owner: ContextOwner::Cli,
        for_tests: false,
    }
}

/// The limitations every runtime without a hook into turn completion
/// declares today.
pub(crate) const UNOBSERVED: &str = limitation::COMPLETION_UNOBSERVED;

/// A runtime that does not install here and whose flags nothing checks: it
/// starts with no arguments, and declares no resume, no in-terminal sign-in
/// and no permission profile until there is evidence of them.
pub(crate) fn documented_only(id: &str, display_name: &str, executable: &str) -> Descriptor {
    Descriptor {
        limitations: strings(&[
            limitation::NATIVE_RESUME_UNSUPPORTED,
            limitation::HOST_LOSS_RESTARTS_FRESH,
            limitation::RECEIPT_UNAVAILABLE,
            UNOBSERVED,
            limitation::LOGIN_NOT_IN_TERMINAL,
            limitation::PERMISSION_PROFILE_UNENFORCED,
        ]),
        ..agent_cli(id, display_name, &[executable], Evidence::Documentation)
    }
}
