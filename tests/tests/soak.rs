//! The pane's concurrency under load: a short run of `panehost-soak`
//! (output from every pane, turns, resizes, closes and starts, followers
//! and hostile traffic, all at once, with a SIGKILL of the host half-way).
//! Its watchdog fails the run when any operation stalls; every other check
//! it makes must pass too. The long run is one command, in
//! docs/RELIABILITY.md:
//! `target/release/panehost-soak --seconds 120`.

use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// How long the whole run may take: its load, the restart, the checks and
/// the host's shutdown (about 20 s here).
const RUN_LIMIT: Duration = Duration::from_secs(240);

#[test]
fn a_short_soak_with_a_crash_passes_every_check_and_nothing_stalls() {
    let soak = env!("CARGO_BIN_EXE_panehost-soak");
    let args = [
        "--seconds",
        "12",
        "--panes",
        "12",
        "--clients",
        "3",
        "--followers",
        "3",
        "--storms",
        "1",
        "--stalled",
        "1",
        "--seed",
        "20261202",
    ];
    // Files, not pipes: a run that writes much would block on a full pipe.
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
    let mut child = Command::new(soak)
        .args(args)
        .stdout(Stdio::from(std::fs::File::create(&out).unwrap()))
        .stderr(Stdio::from(std::fs::File::create(&err).unwrap()))
        .spawn()
        .expect("panehost-soak starts");
    let began = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("the soak can be waited for") {
            break status;
        }
        if began.elapsed() > RUN_LIMIT {
            // SIGINT: the soak ends every process it started, then exits.
            let _ = Command::new("kill").args(["-INT", &child.id().to_string()]).status();
            let _ = child.wait();
            panic!("the soak ran past {} s", RUN_LIMIT.as_secs());
        }
        std::thread::sleep(Duration::from_millis(200));
    };
    let stdout = std::fs::read_to_string(&out).unwrap_or_default();
    let stderr = std::fs::read_to_string(&err).unwrap_or_default();
    assert!(status.success(), "the soak failed ({status}):\n{stdout}\n--- stderr ---\n{stderr}");
    assert!(stdout.contains("soak PASSED"), "{stdout}");
    assert!(stdout.contains("no operation stalled"), "the watchdog's check is in the report:\n{stdout}");
    assert!(stdout.contains("panes listed after restart"), "the host was killed and started again:\n{stdout}");
}
