//! The `panehost` binary answers for itself. (Also makes cargo build the
//! binary that the end-to-end suites in tests/ drive.)

use std::process::Command;

fn panehost() -> Command {
    Command::new(env!("CARGO_BIN_EXE_panehost"))
}

#[test]
fn help_lists_every_subcommand() {
    let output = panehost().arg("--help").output().unwrap();
    assert!(output.status.success());
    let help = String::from_utf8(output.stdout).unwrap();
    for subcommand in [
        "host",
        "start",
        "ls",
        "send",
        "interrupt",
        "inspect",
        "events",
        "attach",
        "resize",
        "close",
        "runtimes",
        "control",
    ] {
        assert!(help.contains(subcommand), "--help does not mention {subcommand}:\n{help}");
    }
}

#[test]
fn a_host_refuses_an_unsafe_socket_directory() {
    let dir = std::env::temp_dir().join(format!("panehost-open-dir-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o777)).unwrap();
    let output = panehost()
        .arg("--socket")
        .arg(dir.join("host.sock"))
        .arg("--state-dir")
        .arg(dir.join("state"))
        .arg("host")
        .output()
        .unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("must be 0700"), "{stderr}");
}
