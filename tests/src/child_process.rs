//! Ending a child process the tests or tools started, by its own pid.

use std::process::Child;
use std::time::{Duration, Instant};

/// SIGTERM to `child` (a host closes its panes on it), then SIGKILL by pid
/// if it has not exited within `wait`; reaped either way.
pub fn terminate(mut child: Child, wait: Duration) {
    if let Some(pid) = rustix::process::Pid::from_raw(child.id() as i32) {
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
    }
    let deadline = Instant::now() + wait;
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}
