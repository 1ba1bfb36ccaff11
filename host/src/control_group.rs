//! Control groups (cgroup v2), as far as the host and its keepers use
//! them: the directory of the group a process is in, moving the calling
//! process into a group, a group's members, and ending them all
//! (`cgroup.kill`). Where no cgroup v2 hierarchy is mounted, a process is
//! in no group this module can name.

use std::io;
use std::path::{Path, PathBuf};

/// The directory of the cgroup v2 group that process `pid` is in; `None`
/// when there is no such process or no cgroup v2 hierarchy.
pub(crate) fn dir_of(pid: u32) -> Option<PathBuf> {
    let groups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    in_mount(&mount_point()?, unified_path(&groups)?)
}

/// The directory of the calling process's own cgroup v2 group.
pub(crate) fn own_dir() -> Option<PathBuf> {
    let groups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    in_mount(&mount_point()?, unified_path(&groups)?)
}

/// Moves the calling process (all of it, when it has one thread) into the
/// group at `dir`.
pub(crate) fn move_self(dir: &Path) -> io::Result<()> {
    std::fs::write(dir.join("cgroup.procs"), b"0")
}

/// The pids of the processes in the group at `dir` (not those of the
/// groups below it; the host makes none there).
pub(crate) fn members(dir: &Path) -> io::Result<Vec<u32>> {
    let procs = std::fs::read_to_string(dir.join("cgroup.procs"))?;
    Ok(procs.lines().filter_map(|line| line.trim().parse().ok()).collect())
}

/// Sends SIGKILL to every process in the group at `dir` and below, at
/// once, so that none can start another meanwhile (Linux 5.14).
pub(crate) fn kill_all(dir: &Path) -> io::Result<()> {
    std::fs::write(dir.join("cgroup.kill"), b"1")
}

/// Whether the group at `dir` can be ended with [`kill_all`] (Linux 5.14
/// or later, and a group other than the root).
pub(crate) fn can_kill_all(dir: &Path) -> bool {
    dir.join("cgroup.kill").is_file()
}

/// The path of the cgroup v2 group in the text of `/proc/<pid>/cgroup`:
/// the line `0::PATH`.
fn unified_path(groups: &str) -> Option<&str> {
    groups.lines().find_map(|line| line.strip_prefix("0::")).filter(|path| path.starts_with('/'))
}

/// `path` (a group's path, absolute within the hierarchy) under the
/// hierarchy's mount point; `None` for a path that would leave it.
fn in_mount(mount: &Path, path: &str) -> Option<PathBuf> {
    let relative = path.trim_start_matches('/');
    if relative.split('/').any(|part| part == "..") {
        return None;
    }
    Some(if relative.is_empty() { mount.to_owned() } else { mount.join(relative) })
}

/// Where the cgroup v2 hierarchy is mounted (`/sys/fs/cgroup`, or
/// `/sys/fs/cgroup/unified` beside v1 hierarchies), from the caller's
/// `/proc/self/mountinfo`.
fn mount_point() -> Option<PathBuf> {
    mount_point_in(&std::fs::read_to_string("/proc/self/mountinfo").ok()?)
}

/// The mount point of the first `cgroup2` file system in a mountinfo text:
/// `ID PARENT MAJ:MIN ROOT MOUNT OPTIONS [OPTIONAL...] - TYPE SOURCE ...`.
fn mount_point_in(mountinfo: &str) -> Option<PathBuf> {
    mountinfo.lines().find_map(|line| {
        let (before, after) = line.split_once(" - ")?;
        if after.split_whitespace().next()? != "cgroup2" {
            return None;
        }
        // Its root must be the hierarchy's root, or paths would not join.
        let mut fields = before.split_whitespace();
        let root = fields.nth(3)?;
        let mount = fields.next()?;
        (root == "/").then(|| PathBuf::from(unescape(mount)))
    })
}

/// Mountinfo writes space, tab, newline and backslash as octal escapes.
fn unescape(field: &str) -> String {
    field.replace("\\040", " ").replace("\\011", "\t").replace("\\012", "\n").replace("\\134", "\\")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_unified_line_names_the_group() {
        let hybrid = "9:name=systemd:/\n4:memory:/a/b\n0::/user.slice/app.service\n";
        assert_eq!(unified_path(hybrid), Some("/user.slice/app.service"));
        assert_eq!(unified_path("4:memory:/a/b\n"), None, "v1 only");
        assert_eq!(unified_path("0::/\n"), Some("/"));
    }

    #[test]
    fn the_cgroup2_mount_is_found_beside_v1_hierarchies() {
        let mountinfo = "\
30 25 0:26 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
31 30 0:27 / /sys/fs/cgroup/unified rw,nosuid,relatime shared:10 - cgroup2 cgroup2 rw
32 30 0:28 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory
";
        assert_eq!(mount_point_in(mountinfo), Some(PathBuf::from("/sys/fs/cgroup/unified")));
        let bind = "31 30 0:27 /some/group /mnt/cg rw - cgroup2 cgroup2 rw\n";
        assert_eq!(mount_point_in(bind), None, "a mount of a subtree does not take the hierarchy's paths");
        assert_eq!(mount_point_in("30 25 0:26 / /sys/fs/cgroup ro - tmpfs tmpfs ro\n"), None);
    }

    #[test]
    fn a_group_path_stays_inside_the_mount() {
        let mount = Path::new("/sys/fs/cgroup");
        assert_eq!(in_mount(mount, "/"), Some(PathBuf::from("/sys/fs/cgroup")));
        assert_eq!(in_mount(mount, "/a/b"), Some(PathBuf::from("/sys/fs/cgroup/a/b")));
        assert_eq!(in_mount(mount, "/a/../../etc"), None);
    }
}
