//! Whether a process sleeps waiting for input, as the kernel says in
//! `/proc/<pid>/stat` (its state) and `/proc/<pid>/wchan` (where it
//! sleeps).
//!
//! A shell's line editor acts on a Ctrl-C's signal at once only while it
//! is blocked in its wait for input: a signal that arrives a moment
//! earlier (the prompt drawn, the wait not begun) is acted on when the next
//! input comes, and takes that input's first byte with it. Whether the
//! wait has begun is asked of the kernel.
//!
//! One place is shared: a terminal's read and its write both sleep in
//! `wait_woken`, and a shell blocked writing (its terminal's buffer full,
//! the host slow to read) is not at its prompt. Where the kernel lets the
//! host read `/proc/<pid>/syscall` (a ptrace check), a sleep in a write is
//! told apart; where not, `wait_woken` is taken as a read.

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
    let mut waits = classify(&stat, &wchan);
    if waits == Some(true) && wchan.trim() == SHARED_WAIT {
        let syscall = std::fs::read_to_string(format!("/proc/{pid}/syscall")).unwrap_or_default();
        if in_a_write(&syscall) {
            waits = Some(false);
        }
    }
    if waits == Some(true) {
        tracing::debug!(pid, wchan = wchan.trim(), "the kernel says the process waits for input");
    }
    waits
}

/// Where both a terminal's read and its write sleep.
const SHARED_WAIT: &str = "wait_woken";

/// Whether a syscall file's text (`NR args... sp pc`, or `running`, or
/// nothing when it could not be read) says the process is in a write.
fn in_a_write(syscall: &str) -> bool {
    let Some(Ok(number)) = syscall.split_whitespace().next().map(str::parse::<libc::c_long>) else { return false };
    [libc::SYS_write, libc::SYS_writev, libc::SYS_pwrite64, libc::SYS_pwritev].contains(&number)
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
    use super::{classify, in_a_write, waits_for_input};

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
    fn a_write_is_told_from_a_read_by_its_system_call() {
        let write = format!("{} 0x1 0x55d0 0x2000 0x0 0x0 0x0 0x7ffc 0x7f12", libc::SYS_write);
        let read = format!("{} 0x0 0x55d0 0x1 0x0 0x0 0x0 0x7ffc 0x7f12", libc::SYS_read);
        assert!(in_a_write(&write));
        assert!(!in_a_write(&read));
        for unknown in ["", "running", "-1 0x7ffc 0x7f12", "garbage 1 2"] {
            assert!(!in_a_write(unknown), "{unknown:?}");
        }
    }

    /// What the kernel says of process `pid` once it says it waits for
    /// input, or at the end of 10 s.
    fn settled(pid: u32) -> Option<bool> {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        loop {
            match waits_for_input(pid) {
                Some(true) => return Some(true),
                other if std::time::Instant::now() >= deadline => return other,
                _ => std::thread::sleep(std::time::Duration::from_millis(5)),
            }
        }
    }

    /// A program that writes to its terminal, which nobody reads, fills
    /// it and sleeps in its write: where the kernel says which system
    /// call it is in, that is not a wait for input.
    #[test]
    fn a_process_blocked_writing_its_terminal_is_not_seen_waiting_for_input() {
        use portable_pty::{native_pty_system, CommandBuilder, PtySize};
        let pair = native_pty_system().openpty(PtySize::default()).unwrap();
        let mut child = pair.slave.spawn_command(CommandBuilder::new("yes")).unwrap();
        let pid = child.process_id().unwrap();
        // Blocked once the terminal's buffer is full: it sleeps, in a write.
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
        let syscall = loop {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let syscall = std::fs::read_to_string(format!("/proc/{pid}/syscall")).ok();
            let sleeping = stat.rsplit_once(") ").is_some_and(|(_, rest)| rest.starts_with("S "));
            if (sleeping && syscall.as_deref().is_some_and(in_a_write)) || std::time::Instant::now() >= deadline {
                break syscall;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        let seen = (0..20).map(|_| waits_for_input(pid)).collect::<Vec<_>>();
        let _ = child.kill();
        let _ = child.wait();
        // A kernel that keeps the syscall file from the host says nothing.
        if syscall.is_some() {
            assert!(!seen.contains(&Some(true)), "yes blocked writing its terminal: {seen:?}");
        }
    }

    #[test]
    fn a_process_blocked_reading_its_terminal_is_seen_waiting() {
        use portable_pty::{native_pty_system, CommandBuilder, PtySize};
        let pair = native_pty_system().openpty(PtySize::default()).unwrap();
        let mut child = pair.slave.spawn_command(CommandBuilder::new("cat")).unwrap();
        let pid = child.process_id().unwrap();
        let seen = settled(pid);
        let _ = child.kill();
        let _ = child.wait();
        // A kernel that hides where processes sleep says nothing.
        assert_ne!(seen, Some(false), "cat blocked reading its terminal");
    }
}
