//! Processes, from /proc: is a pid alive, who is in a process group, which
//! processes carry the scratch HOME (everything the run started, however
//! far it wandered from its group), and ending them one pid at a time.

use std::path::Path;

/// A process: its pid and name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    pub pid: u32,
    pub name: String,
}

impl std::fmt::Display for Proc {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({})", self.name, self.pid)
    }
}

fn pids() -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries.filter_map(|e| e.ok()?.file_name().to_str()?.parse().ok()).collect()
}

fn name(pid: u32) -> String {
    std::fs::read_to_string(format!("/proc/{pid}/comm")).map(|s| s.trim().to_owned()).unwrap_or_default()
}

/// `(state, pgrp)` from /proc/PID/stat, when the process exists.
fn stat(pid: u32) -> Option<(char, u32)> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &text[text.rfind(')')? + 1..];
    let mut fields = after.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

/// Whether `pid` is a live process (not a zombie).
pub fn alive(pid: u32) -> bool {
    matches!(stat(pid), Some((state, _)) if state != 'Z' && state != 'X')
}

/// The live processes of process group `pgid`.
pub fn group(pgid: u32) -> Vec<Proc> {
    pids()
        .into_iter()
        .filter(|pid| matches!(stat(*pid), Some((state, pgrp)) if pgrp == pgid && state != 'Z'))
        .map(|pid| Proc { pid, name: name(pid) })
        .collect()
}

/// The live processes whose command line contains `needle`.
pub fn with_cmdline(needle: &str) -> Vec<Proc> {
    pids()
        .into_iter()
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|cmdline| String::from_utf8_lossy(&cmdline).contains(needle))
        })
        .filter(|pid| alive(*pid))
        .map(|pid| Proc { pid, name: name(pid) })
        .collect()
}

/// The live processes whose environment holds `HOME=<home>`, except this
/// one and those in `except`.
pub fn with_home(home: &Path, except: &[u32]) -> Vec<Proc> {
    let wanted = format!("HOME={}", home.display()).into_bytes();
    let own = std::process::id();
    pids()
        .into_iter()
        .filter(|pid| *pid != own && !except.contains(pid))
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .is_ok_and(|env| env.split(|b| *b == 0).any(|v| v == wanted.as_slice()))
        })
        .filter(|pid| alive(*pid))
        .map(|pid| Proc { pid, name: name(pid) })
        .collect()
}

/// Ends each process by its pid: SIGTERM, then SIGKILL for those still
/// alive a second later.
pub async fn end(procs: &[Proc]) {
    use rustix::process::{kill_process, Pid, Signal};
    for proc in procs {
        if let Some(pid) = Pid::from_raw(proc.pid as i32) {
            let _ = kill_process(pid, Signal::TERM);
        }
    }
    tokio::time::sleep(std::time::Duration::from_secs(1)).await;
    for proc in procs {
        if alive(proc.pid) {
            if let Some(pid) = Pid::from_raw(proc.pid as i32) {
                let _ = kill_process(pid, Signal::KILL);
            }
        }
    }
}

/// `procs` as `name (pid), …`.
pub fn list(procs: &[Proc]) -> String {
    procs.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ")
}
