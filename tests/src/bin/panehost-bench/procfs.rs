//! What the kernel says about a process: resident memory and open files.

use std::path::Path;

/// Resident memory (`VmRSS`) of a process, in KiB; `None` once it is gone.
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|line| line.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// How many file descriptors a process holds open; `None` once it is gone.
pub fn fd_count(pid: u32) -> Option<usize> {
    Some(std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count())
}

/// True while a process with this pid exists (and is not a zombie).
pub fn is_alive(pid: u32) -> bool {
    let stat = Path::new("/proc").join(pid.to_string()).join("stat");
    match std::fs::read_to_string(stat) {
        // The state is the first field after the parenthesised command name.
        Ok(text) => text.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')).unwrap_or(false),
        Err(_) => false,
    }
}

/// A process's open file descriptors by kind (`/dev/ptmx`, `pidfd`,
/// `socket`, ...), most common first, as `kind xN` joined by commas.
pub fn fd_kinds(pid: u32) -> String {
    let mut kinds = std::collections::BTreeMap::<String, usize>::new();
    if let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/fd")) {
        for entry in entries.flatten() {
            // An fd closed since the directory was read has no target.
            let Ok(target) = std::fs::read_link(entry.path()).map(|t| t.display().to_string()) else { continue };
            let kind = match target.split_once(':') {
                Some((kind, rest)) if !kind.starts_with('/') => {
                    if kind == "anon_inode" {
                        rest.trim_matches(|c| c == '[' || c == ']').to_owned()
                    } else {
                        kind.to_owned()
                    }
                }
                _ if target.starts_with("/dev/pts/") => "/dev/pts/N".to_owned(),
                _ => target,
            };
            *kinds.entry(kind).or_default() += 1;
        }
    }
    let mut kinds: Vec<_> = kinds.into_iter().collect();
    kinds.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
    kinds.iter().take(5).map(|(kind, n)| format!("{kind} x{n}")).collect::<Vec<_>>().join(", ")
}

/// Proportional set size (`Pss` in `/proc/PID/smaps_rollup`) of a process,
/// in KiB: its private memory plus its share of pages it shares with other
/// processes (a binary's text, for one). `None` once it is gone.
pub fn pss_kib(pid: u32) -> Option<u64> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let line = rollup.lines().find(|line| line.starts_with("Pss:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Processes running `program` (the file name of their argv[0]) whose
/// command line mentions `needle`.
pub fn processes(program: &str, needle: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { return false };
            let mut args = cmdline.split(|&b| b == 0).map(String::from_utf8_lossy);
            let runs_program =
                args.next().is_some_and(|argv0| Path::new(argv0.as_ref()).file_name().is_some_and(|f| f == program));
            runs_program && args.any(|arg| arg.contains(needle))
        })
        .collect()
}
