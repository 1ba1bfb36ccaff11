//! Admission of start requests against the built-in descriptors.

use panehost_adapters::{AdmissionError, Catalog, HostEnvironment};
use panehost_ipc::{limitation, ResumeRequest, StartParams};

fn environment() -> HostEnvironment {
    let mut env = HostEnvironment::default();
    env.variables.insert("HOME".into(), "/".into());
    env.variables.insert("PATH".into(), "/usr/bin:/bin".into());
    env.variables.insert("SHELL".into(), "/bin/sh".into());
    env.variables.insert("SECRET_TOKEN".into(), "do-not-leak".into());
    env
}

fn start(runtime: &str) -> StartParams {
    StartParams { runtime: runtime.into(), ..StartParams::default() }
}

#[test]
fn shell_runs_the_users_shell_with_a_scrubbed_environment() {
    let plan = Catalog::built_in(environment()).admit(&start("shell")).unwrap();
    assert_eq!(plan.program, std::path::Path::new("/bin/sh"));
    assert!(plan.args.is_empty());
    assert!(plan.env.iter().all(|(name, _)| name != "SECRET_TOKEN"));
    assert!(plan.env.contains(&("TERM".into(), "xterm-256color".into())));
    assert!(plan.env.contains(&("HOME".into(), "/".into())));
}

#[test]
fn shell_takes_a_command() {
    let params = StartParams { command: vec!["sh".into(), "-c".into(), "echo hi".into()], ..start("shell") };
    let plan = Catalog::built_in(environment()).admit(&params).unwrap();
    assert!(plan.program.ends_with("sh"));
    assert_eq!(plan.args, ["-c", "echo hi"]);
}

#[test]
fn unknown_runtime_is_refused() {
    assert_eq!(
        Catalog::built_in(environment()).admit(&start("nope")),
        Err(AdmissionError::UnknownRuntime("nope".into()))
    );
}

#[test]
fn missing_executable_is_not_available() {
    let err = Catalog::built_in(environment()).admit(&start("fixture")).unwrap_err();
    assert!(matches!(err, AdmissionError::NotAvailable { .. }), "{err:?}");
    assert_eq!(err.to_error_body().code, "RUNTIME_NOT_AVAILABLE");
}

#[test]
fn shell_cannot_resume() {
    let params = StartParams { resume: Some(ResumeRequest::Latest), ..start("shell") };
    let err = Catalog::built_in(environment()).admit(&params).unwrap_err();
    let body = err.to_error_body();
    assert_eq!(body.code, "OPERATION_UNSUPPORTED");
    assert_eq!(body.limitation.as_deref(), Some(limitation::NATIVE_RESUME_UNSUPPORTED));
}

#[test]
fn relative_or_missing_working_directory_is_refused() {
    for cwd in ["relative/dir", "/no/such/dir/anywhere"] {
        let params = StartParams { cwd: Some(cwd.into()), ..start("shell") };
        assert!(matches!(Catalog::built_in(environment()).admit(&params), Err(AdmissionError::InvalidArgument(_))));
    }
}

#[test]
fn shell_enforces_no_permission_profile_with_or_without_a_command() {
    let catalog = Catalog::built_in(environment());
    let command = vec!["sh".into(), "-c".into(), "echo hi".into()];
    for params in [start("shell"), StartParams { command: command.clone(), ..start("shell") }] {
        let asked = StartParams { permission_profile: Some("read_only".into()), ..params.clone() };
        let body = catalog.admit(&asked).unwrap_err().to_error_body();
        assert_eq!(body.code, "OPERATION_UNSUPPORTED");
        assert_eq!(body.limitation.as_deref(), Some(limitation::PERMISSION_PROFILE_UNENFORCED));
        let accepted = catalog.admit(&StartParams { accept_weaker_boundary: true, ..asked }).unwrap();
        let plain = catalog.admit(&params).unwrap();
        assert_eq!(accepted.args, plain.args);
        assert_eq!(accepted.unenforced_profile, Some(panehost_adapters::PermissionProfile::ReadOnly));
        assert_eq!(accepted.permission_profile, None);
    }
}

#[test]
fn an_unknown_permission_profile_is_an_invalid_argument() {
    for name in ["", "readonly", "READ_ONLY", "yolo", "full_access "] {
        let params =
            StartParams { permission_profile: Some(name.into()), accept_weaker_boundary: true, ..start("shell") };
        let err = Catalog::built_in(environment()).admit(&params).unwrap_err();
        assert!(matches!(err, AdmissionError::InvalidArgument(_)), "{name:?}: {err:?}");
    }
}
