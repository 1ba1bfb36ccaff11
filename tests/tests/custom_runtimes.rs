//! Runtimes an operator declares in the configuration file: loaded by the
//! host, admitted and launched like built-ins; a bad one is reported with
//! its line and does not take the others down.

mod support;

use panehost_ipc::{Encoding, Request, Response, ResumeRequest, StartParams};
use std::os::unix::fs::PermissionsExt;
use support::*;

const CONFIG: &str = r#"
[runtime.echoer]
display_name = "Echoer"
executable = ["echoer"]
base_args = ["--quiet"]
login = "not_required"
limitations = ["COMPLETION_UNOBSERVED", "PROVIDER_SELECTION_ONLY", "PERMISSION_PROFILE_UNENFORCED", "RECEIPT_UNAVAILABLE"]

[runtime.echoer.resume]
latest = ["--again"]

[runtime.broken]
display_name = "Broken"
executable = ["broken"]
limitations = []
"#;

#[test]
fn custom_runtimes_load_launch_and_report_their_problems() {
    let bin = tempfile::tempdir().unwrap();
    let program = bin.path().join("echoer");
    std::fs::write(&program, "#!/bin/sh\necho \"echoer argv: $*\"\nread line\n").unwrap();
    std::fs::set_permissions(&program, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = bin.path().join("config.toml");
    std::fs::write(&config, CONFIG).unwrap();
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let host = TestHost::start_with_env(&[("PATH", &path), ("PANEHOST_CONFIG", config.to_str().unwrap())]);
    let mut conn = host.connect(Encoding::Json);

    let Response::Runtimes { runtimes } = conn.ok(Request::Runtimes {}) else { panic!() };
    let echoer = runtimes.iter().find(|r| r.id == "echoer").expect("the custom runtime is listed");
    assert!(echoer.available && echoer.evidence == "operator", "{echoer:?}");
    // No `receipt_args`: it can never be proven ready.
    assert_eq!(echoer.readiness_gate.as_deref(), Some("receipt"), "{echoer:?}");
    assert!(runtimes.iter().all(|r| r.id != "broken"), "a runtime with a problem is left out");

    let params =
        StartParams { runtime: "echoer".into(), resume: Some(ResumeRequest::Latest), ..StartParams::default() };
    let pane = conn.start(params).id;
    let sub = conn.subscribe(&pane, Some(0)).subscription;
    conn.follow_until_text(sub, &mut Transcript::from(0), "echoer argv: --quiet --again");
    conn.ok(Request::Close { pane });
    let params = StartParams {
        runtime: "echoer".into(),
        resume: Some(ResumeRequest::Reference("x".into())),
        ..StartParams::default()
    };
    let refused = conn.call(Request::Start(params)).unwrap_err();
    assert_eq!(refused.limitation.as_deref(), Some("PROVIDER_SELECTION_ONLY"));

    let log = host.stop();
    let problem = log.lines().find(|line| line.contains("runtime \"broken\"")).expect("the problem is logged");
    assert!(problem.contains("config.toml:15"), "the line of its `limitations`: {problem}");
}
