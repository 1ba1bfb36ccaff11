//! Tests that must have their process to themselves: where the harness
//! runs tests as threads of one process (`cargo test`), a test that reaps
//! every ended child, or turns on process-wide settings such as jitter,
//! would reach into the other tests.

/// Set in the process [`alone`] starts.
const ALONE: &str = "PANEHOST_TEST_ALONE";

/// True in a process of the test's own, where its body runs; otherwise
/// runs `test` (its full name) in one, checks that it passed, and returns
/// false (the caller returns).
pub(crate) fn alone(test: &str) -> bool {
    if std::env::var_os(ALONE).is_some() {
        return true;
    }
    let status = std::process::Command::new(std::env::current_exe().expect("the test binary"))
        .args([test, "--exact", "--test-threads=1", "--nocapture"])
        .env(ALONE, "1")
        .status()
        .expect("the test binary runs");
    assert!(status.success(), "{test} in a process of its own: {status}");
    false
}
