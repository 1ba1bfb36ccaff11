//! What the kernel says of a process in `/proc/<pid>/stat`: whether it has
//! ended (a zombie), its parent, its process group, its session and its
//! controlling terminal.
//!
//! Read from the file rather than through `getsid(2)` and `TIOCGSID`: a
//! process whose session leader lives outside the host's pid namespace (a
//! host in a container, a CI runner's job) has session id 0 there, which the
//! system-call wrappers take for a pid and cannot hold. Here 0 is a value
//! like any other: "a process this namespace cannot name".

/// The fields of `/proc/<pid>/stat` the host reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct ProcessStat {
    /// It has exited and waits to be reaped (state `Z`).
    pub zombie: bool,
    /// The parent's pid; 0 for a parent outside this pid namespace.
    pub parent: u32,
    /// The process group id; 0 for a group outside this pid namespace.
    pub group: u32,
    /// The session id (the pid of its leader); 0 for a leader outside
    /// this pid namespace.
    pub session: u32,
    /// The controlling terminal's device number, in the kernel's encoding
    /// (see [`ProcessStat::controlling_terminal`]); 0 for none.
    pub terminal_device: u32,
}

impl ProcessStat {
    /// Reads process `pid`'s fields; `None` when it is gone (or the file
    /// does not parse).
    pub(crate) fn read(pid: u32) -> Option<ProcessStat> {
        Self::parse(&std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?)
    }

    /// Reads the host's own fields.
    pub(crate) fn own() -> Option<ProcessStat> {
        Self::parse(&std::fs::read_to_string("/proc/self/stat").ok()?)
    }

    /// Parses the text of a stat file: `pid (comm) state ppid pgrp
    /// session tty_nr ...`.
    pub(crate) fn parse(stat: &str) -> Option<ProcessStat> {
        // The command name is in parentheses and may hold spaces and ')';
        // the last ") " ends it.
        let (_, rest) = stat.rsplit_once(") ")?;
        let mut fields = rest.split_whitespace();
        let zombie = fields.next()? == "Z";
        let parent = fields.next()?.parse().ok()?;
        let group = fields.next()?.parse().ok()?;
        let session = fields.next()?.parse().ok()?;
        // Printed signed; a minor number past 2047 sets the top bit.
        let terminal_device = fields.next()?.parse::<i32>().ok()? as u32;
        Some(ProcessStat { zombie, parent, group, session, terminal_device })
    }

    /// The controlling terminal as (major, minor) device numbers, if any.
    /// The kernel packs them as minor bits 0-7 and 20-31, major bits 8-19.
    pub(crate) fn controlling_terminal(&self) -> Option<(u32, u32)> {
        let device = self.terminal_device;
        if device == 0 {
            return None;
        }
        let major = (device >> 8) & 0xfff;
        let minor = (device & 0xff) | ((device >> 12) & 0xfff00);
        Some((major, minor))
    }
}

/// True when `pid` is `ancestor` or descends from it, following parents
/// up to 64 generations (a process cannot choose its parent). A parent
/// outside this pid namespace ends the walk.
pub(crate) fn descends_from(pid: u32, ancestor: u32) -> bool {
    let mut current = pid;
    for _ in 0..64 {
        if current == ancestor {
            return true;
        }
        let Some(stat) = ProcessStat::read(current) else { return false };
        if stat.parent <= 1 {
            return false;
        }
        current = stat.parent;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::{descends_from, ProcessStat};

    #[test]
    fn a_name_with_parentheses_and_spaces_parses() {
        let stat = "4242 (a) b (c) ) S 17 4242 4242 34817 4242 4194560 0 0";
        let read = ProcessStat::parse(stat).expect("parses");
        assert_eq!(read, ProcessStat { zombie: false, parent: 17, group: 4242, session: 4242, terminal_device: 34817 });
        // 34817 is /dev/pts/1: major 136, minor 1.
        assert_eq!(read.controlling_terminal(), Some((136, 1)));
    }

    #[test]
    fn a_session_and_parent_outside_the_namespace_are_zero_not_an_error() {
        let stat = "12 (cargo-nextest) Z 0 12 0 0 -1 4194560";
        let read = ProcessStat::parse(stat).expect("parses");
        assert_eq!(read, ProcessStat { zombie: true, parent: 0, group: 12, session: 0, terminal_device: 0 });
        assert_eq!(read.controlling_terminal(), None);
    }

    #[test]
    fn a_large_minor_number_is_unpacked() {
        // pts 300: minor 300 = 0x12c, so 0x2c in bits 0-7 and 0x1 in 20-31.
        let device = 0x2c | (136 << 8) | (0x1 << 20);
        let read = ProcessStat { zombie: false, parent: 1, group: 1, session: 1, terminal_device: device };
        assert_eq!(read.controlling_terminal(), Some((136, 300)));
    }

    #[test]
    fn malformed_text_is_none() {
        for stat in ["", "12 (x)", "12 (x) S", "12 (x) S 1 2 3", "12 (x) S one 2 3 4", "12 x S 1 2 3 4"] {
            assert_eq!(ProcessStat::parse(stat), None, "{stat:?}");
        }
    }

    #[test]
    fn this_process_reads_as_the_kernel_says() {
        let own = ProcessStat::own().expect("/proc/self/stat");
        assert_eq!(own.parent, std::os::unix::process::parent_id());
        let by_pid = ProcessStat::read(std::process::id()).expect("/proc/<pid>/stat");
        assert_eq!(by_pid, own);
        assert!(descends_from(std::process::id(), std::os::unix::process::parent_id()));
        assert!(!descends_from(std::os::unix::process::parent_id(), std::process::id()));
    }
}
