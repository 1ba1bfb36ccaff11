//! Whether a process sleeps waiting for input, as the kernel says in
//! `/proc/<pid>/stat` (its state) and `/proc/<pid>/wchan` (where it
//! sleeps).
//!
//! A shell's line editor acts on a Ctrl-C's signal at once only while it
//! is blocked in its wait for input: a signal that arrives a moment
//! earlier (the prompt drawn, the wait not begun) is acted on when the next
//! input comes, and takes that input's first byte with it. Whether the
//! wait has begun is asked of the kernel.

/// Kernel functions a process sleeps in while it waits for input on a
/// terminal: `poll(2)`, `select(2)` and their `p` forms, a blocking
/// `read(2)` of a terminal, `epoll_wait(2)`.
const INPUT_WAITS: &[&str] =
    &["poll_schedule_timeout", "do_select", "core_sys_select", "do_sys_poll", "wait_woken", "n_tty_read", "ep_poll"];

/// `Some(true)` when process `pid` sleeps in a wait for input,
/// `Some(false)` when it runs or sleeps in anything else, `None` when the
/// kernel does not say (the process is gone, or where it sleeps is hidden).
pub(crate) fn waits_for_input(pid: u32) -> Option<bool> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let wchan = std::fs::read_to_string(format!("/proc/{pid}/wchan")).ok()?;
    classify(&stat, &wchan)
}

/// What a stat file's text and a wchan file's text say (see
/// [`waits_for_input`]).
fn classify(stat: &str, wchan: &str) -> Option<bool> {
    // `pid (comm) state ...`: the command name may hold ") ".
    let (_, rest) = stat.rsplit_once(") ")?;
    let state = rest.split_whitespace().next()?;
    if state != "S" {
        return Some(false);
    }
    let wchan = wchan.trim();
    if wchan.is_empty() || wchan == "0" {
        return None;
    }
    Some(INPUT_WAITS.iter().any(|wait| wchan.starts_with(wait)))
}

#[cfg(test)]
mod tests {
    use super::{classify, waits_for_input};

    #[test]
    fn a_sleep_in_a_poll_is_a_wait_for_input_and_anything_else_is_not() {
        let stat = |state: &str| format!("20500 (ba) sh) {state} 20459 20500 20500 34819 20500 4194304 554");
        assert_eq!(classify(&stat("S"), "poll_schedule_timeout.constprop.0\n"), Some(true));
        assert_eq!(classify(&stat("S"), "wait_woken"), Some(true));
        assert_eq!(classify(&stat("S"), "do_wait"), Some(false), "waiting for a child");
        assert_eq!(classify(&stat("R"), "0"), Some(false), "running");
        assert_eq!(classify(&stat("S"), "0"), None, "hidden");
        assert_eq!(classify("garbage", "wait_woken"), None);
    }

    #[test]
    fn a_process_blocked_reading_its_terminal_is_seen_waiting() {
        use portable_pty::{native_pty_system, CommandBuilder, PtySize};
        let pair = native_pty_system().openpty(PtySize::default()).unwrap();
        let mut child = pair.slave.spawn_command(CommandBuilder::new("cat")).unwrap();
        let pid = child.process_id().unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let seen = loop {
            match waits_for_input(pid) {
                Some(true) => break Some(true),
                other if std::time::Instant::now() >= deadline => break other,
                _ => std::thread::sleep(std::time::Duration::from_millis(5)),
            }
        };
        let _ = child.kill();
        let _ = child.wait();
        // A kernel that hides where processes sleep says nothing.
        assert_ne!(seen, Some(false), "cat blocked reading its terminal");
    }
}
