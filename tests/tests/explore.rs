//! Timings under faults: a short run of `panehost-explore` (random
//! schedules of several clients on shared and separate connections, with
//! no delay at all between some requests, SIGKILL of the host and of a
//! keeper at set times), from a fixed seed. Every check it makes must
//! hold. The longer run is one command, in docs/RELIABILITY.md:
//! `target/debug/panehost-explore --seconds 600 --keep-going`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long the whole run may take: three schedules (about 20 s here),
/// their checks and the hosts' shutdowns.
const RUN_LIMIT: Duration = Duration::from_secs(240);

#[test]
fn short_random_schedules_with_kills_pass_every_check() {
    let explore = env!("CARGO_BIN_EXE_panehost-explore");
    // Three schedules (the second and third with kills), whatever the
    // machine's speed.
    let args =
        ["--schedules", "3", "--seconds", "90", "--seed", "102", "--clients", "3", "--panes", "3", "--ops", "12"];
    // Files, not pipes: a run that writes much would block on a full pipe.
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let mut command = Command::new(explore);
    command.args(args);
    // The host under test: the one next to the explorer unless named.
    if let Some(panehost) = std::env::var_os("PANEHOST_BIN") {
        command.arg("--panehost").arg(panehost);
    }
    let mut child = command
        .stdout(Stdio::from(std::fs::File::create(&out).unwrap()))
        .stderr(Stdio::from(std::fs::File::create(&err).unwrap()))
        .spawn()
        .expect("panehost-explore starts");
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("the explorer can be waited for") {
            break status;
        }
        if began.elapsed() > RUN_LIMIT {
            // SIGINT: the explorer ends every process it started, then exits.
            let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
            let _ = child.wait();
            panic!("the explorer ran past {} s", RUN_LIMIT.as_secs());
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let stdout = std::fs::read_to_string(&out).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(status.success(), "the explorer failed ({status}):\n{stdout}\n--- stderr ---\n{stderr}");
    assert!(stdout.contains("explore PASSED"), "{stdout}");
    let summary = stdout.lines().find(|line| line.starts_with("explore PASSED")).unwrap_or_default();
    assert!(!summary.contains(" 0 host kills"), "a host was killed and started again: {summary}");
}
