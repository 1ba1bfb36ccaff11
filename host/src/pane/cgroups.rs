//! The panes' own control groups (cgroup v2): where the host may make one
//! for each pane, the pane's process is started in it, and nothing the
//! pane starts can leave it; the sweep then ends the pane with
//! `cgroup.kill` (`sweep.rs`).
//!
//! The host may make them when it can create a directory in its own group's
//! directory: as root, or in a subtree delegated to the user (a systemd
//! user unit with `Delegate=yes`). They are made there, in
//! `panehost/<state>/` (`<state>` names the host's state directory, which
//! one host at a time holds), one per pane and generation (`<pane
//! id>.<generation>`), found again by that name when a restarted host takes
//! the pane back, and removed once empty: a closed pane's, a pane's older
//! generations', and, when a host starts, every empty one a host of the
//! same state directory left (a killed host closes nothing). A kernel
//! without `cgroup.kill` (before 5.14) gets none.

use crate::control_group;
use panehost_ipc::PaneId;
use std::path::{Path, PathBuf};

/// The directory the hosts' groups are made in.
const PANES_DIR: &str = "panehost";

/// Where the host makes the panes' groups.
#[derive(Debug, Clone)]
pub struct PaneCgroups {
    /// `<the host's own group>/panehost/<state>`.
    parent: PathBuf,
}

impl PaneCgroups {
    /// The place for the panes' groups of the host whose state directory
    /// is `state_dir`, if the host may make groups (the directories exist
    /// or can be made in its own group's directory); `None` otherwise, and
    /// the sweep tells the panes' processes apart by their process tree.
    /// Removes the empty groups a host of the same state directory left.
    /// Call it holding the state directory's lock.
    pub fn find(state_dir: &Path) -> Option<PaneCgroups> {
        let parent = control_group::own_dir()?.join(PANES_DIR).join(state_key(state_dir));
        if let Err(error) = std::fs::create_dir_all(&parent) {
            tracing::info!(%error, dir = %parent.display(), "no control group of their own for panes");
            return None;
        }
        let cgroups = PaneCgroups { parent };
        // A group that holds a process (a pane its keeper still runs)
        // cannot be removed, and stays.
        cgroups.remove_empty();
        Some(cgroups)
    }

    /// Makes the group for a pane's generation, if it can be ended with
    /// `cgroup.kill`; `None` (and the pane is started without one) when it
    /// cannot be made or ended so.
    pub(crate) fn make(&self, pane: &PaneId, generation: u64) -> Option<PathBuf> {
        let dir = self.dir(pane, generation);
        // Left by a host that was killed, or by the pane's earlier
        // generations: removed where empty (a group that holds a process
        // cannot be removed).
        for older in 1..=generation {
            let _ = std::fs::remove_dir(self.dir(pane, older));
        }
        if let Err(error) = std::fs::create_dir(&dir) {
            tracing::warn!(%error, dir = %dir.display(), "cannot make the pane's control group");
            return None;
        }
        if !control_group::can_kill_all(&dir) {
            tracing::info!(dir = %dir.display(), "no cgroup.kill (Linux before 5.14): no control group for panes");
            let _ = std::fs::remove_dir(&dir);
            return None;
        }
        Some(dir)
    }

    /// The group a host made for a pane's generation, if it is there: how
    /// a pane taken back from its keeper finds its group again.
    pub(crate) fn existing(&self, pane: &PaneId, generation: u64) -> Option<PathBuf> {
        let dir = self.dir(pane, generation);
        control_group::can_kill_all(&dir).then_some(dir)
    }

    /// Removes the empty groups, and then the host's directory of them if
    /// it is left empty (a host that exits with its panes closed).
    pub(crate) fn remove_all(&self) {
        self.remove_empty();
        let _ = std::fs::remove_dir(&self.parent);
    }

    /// Removes every group that holds no process.
    fn remove_empty(&self) {
        for group in std::fs::read_dir(&self.parent).into_iter().flatten().flatten() {
            let _ = std::fs::remove_dir(group.path());
        }
    }

    fn dir(&self, pane: &PaneId, generation: u64) -> PathBuf {
        self.parent.join(format!("{pane}.{generation}"))
    }
}

/// A name for a state directory: 16 hex digits of the FNV-1a hash of its
/// path (stable across builds, unlike std's hasher).
fn state_key(state_dir: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let hash =
        state_dir.as_os_str().as_bytes().iter().fold(0xcbf2_9ce4_8422_2325_u64, |hash, &byte| {
            (hash ^ u64::from(byte)).wrapping_mul(0x0000_0100_0000_01b3)
        });
    format!("{hash:016x}")
}

/// Removes a pane's group once it is empty (a group that still holds a
/// process cannot be removed, and is left).
pub(crate) fn remove(dir: &Path) {
    if let Err(error) = std::fs::remove_dir(dir) {
        tracing::warn!(%error, dir = %dir.display(), "the pane's control group is left");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_state_directory_has_a_name_of_its_own_that_stays() {
        assert_eq!(state_key(Path::new("")), "cbf29ce484222325");
        assert_eq!(state_key(Path::new("a")), "af63dc4c8601ec8c");
        assert_ne!(state_key(Path::new("/s/one")), state_key(Path::new("/s/two")));
    }

    #[test]
    fn each_pane_generation_has_its_own_group() {
        let cgroups = PaneCgroups { parent: PathBuf::from("/sys/fs/cgroup/x/panehost") };
        let pane = PaneId::from("p1a2b3c4d");
        assert_eq!(cgroups.dir(&pane, 3), Path::new("/sys/fs/cgroup/x/panehost/p1a2b3c4d.3"));
        assert_eq!(cgroups.existing(&pane, 3), None, "no such group");
    }
}
