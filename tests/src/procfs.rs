//! What the kernel says about processes: state, parent, children, open
//! files and memory, read from `/proc` (for the benchmark and the soak
//! program).

use std::collections::BTreeMap;
use std::path::Path;

/// One process as `/proc/<pid>/stat` describes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProcStat {
    /// The process id.
    pub pid: u32,
    /// The state letter: `R`, `S`, `D`, `Z` (zombie), `T`, ...
    pub state: char,
    /// The parent's pid.
    pub ppid: u32,
}

impl ProcStat {
    /// True for a process that has exited and not been reaped.
    pub fn is_zombie(&self) -> bool {
        self.state == 'Z'
    }
}

/// The state and parent of `pid`; `None` once it is gone.
pub fn stat(pid: u32) -> Option<ProcStat> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may hold spaces or ')'.
    let (_, rest) = text.rsplit_once(") ")?;
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let ppid = fields.next()?.parse().ok()?;
    Some(ProcStat { pid, state, ppid })
}

/// A process in a few words: pid, name, state, parent, command line.
pub fn describe(pid: u32) -> String {
    let name = std::fs::read_to_string(format!("/proc/{pid}/comm")).unwrap_or_default();
    let cmdline = std::fs::read(format!("/proc/{pid}/cmdline"))
        .map(|bytes| String::from_utf8_lossy(&bytes).replace('\0', " ").trim_end().to_owned())
        .unwrap_or_default();
    match stat(pid) {
        Some(stat) => format!("{pid} {} (state {}, parent {}): {cmdline}", name.trim(), stat.state, stat.ppid),
        None => format!("{pid} (gone)"),
    }
}

/// The value of one variable in a process's environment.
pub fn environment_variable(pid: u32, name: &str) -> Option<String> {
    let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
    let prefix = format!("{name}=");
    environ
        .split(|&b| b == 0)
        .find_map(|var| var.strip_prefix(prefix.as_bytes()).map(|value| String::from_utf8_lossy(value).into_owned()))
}

/// Every process's stat, read in one pass over `/proc`.
pub fn all() -> Vec<ProcStat> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries.flatten().filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok()).filter_map(stat).collect()
}

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

/// How many of a process's file descriptors are open on `path`.
pub fn open_files_named(pid: u32, path: &str) -> usize {
    let Ok(entries) = std::fs::read_dir(format!("/proc/{pid}/fd")) else { return 0 };
    entries
        .flatten()
        .filter(|entry| std::fs::read_link(entry.path()).is_ok_and(|target| target.as_os_str() == path))
        .count()
}

/// A process's open file descriptors by kind (`socket`, `pidfd`,
/// `/dev/ptmx`, ...), most common first, as `kind xN` joined by commas.
pub fn fd_kinds(pid: u32) -> String {
    let mut kinds = BTreeMap::<String, usize>::new();
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
    kinds.iter().take(6).map(|(kind, n)| format!("{kind} x{n}")).collect::<Vec<_>>().join(", ")
}

/// Processes whose name (`/proc/<pid>/comm`, or the file name of argv[0])
/// is `program` and whose command line mentions `needle`.
pub fn processes(program: &str, needle: &str) -> Vec<u32> {
    let Ok(entries) = std::fs::read_dir("/proc") else { return Vec::new() };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else { return false };
            let mut args = cmdline.split(|&b| b == 0).map(String::from_utf8_lossy);
            let argv0_matches = args
                .next()
                .is_some_and(|argv0| Path::new(argv0.as_ref()).file_name().is_some_and(|name| name == program));
            let comm_matches = std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .map(|comm| comm.trim_end() == program)
                .unwrap_or(false);
            (argv0_matches || comm_matches) && args.any(|arg| arg.contains(needle))
        })
        .collect()
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

/// Proportional set size (`Pss` in `/proc/PID/smaps_rollup`) of a process,
/// in KiB: its private memory plus its share of pages it shares with other
/// processes (a binary's text, for one). `None` once it is gone.
pub fn pss_kib(pid: u32) -> Option<u64> {
    let rollup = std::fs::read_to_string(format!("/proc/{pid}/smaps_rollup")).ok()?;
    let line = rollup.lines().find(|line| line.starts_with("Pss:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}
