//! Taking back a pane whose record cannot be read.
//!
//! A record torn by a full disk, or edited by hand, is moved aside at a
//! restart. Its pane's process may still run in its keeper: without this,
//! the next step of the restore (undoing starts no record names) would end
//! it. What a record holds is found again where the running pane keeps it:
//! the pid and the terminal size from the keeper and its PTY, the pane's
//! id and hook token from the process's environment (which must name the
//! same pane), its working directory from `/proc`. What only the record
//! knew is read from the damaged file where it is still plain (the runtime,
//! when it names one the host knows, and the generation); else the runtime
//! is `unknown` (no turn signals, so `COMPLETION_UNOBSERVED`) and the
//! generation 1. The screen is rebuilt from the output the ring holds.

use crate::limits::MAX_RECORDED_COUNT;
use crate::pane::keeper;
use crate::store::damaged_record::DamagedRecord;
use crate::store::records::{well_formed_pane_id, BadRecord, PaneRecord, RECORD_VERSION};
use panehost_ipc::{PaneId, Size, StartParams};
use std::io::Read;
use std::path::{Path, PathBuf};

/// The runtime a salvaged pane gets when its record does not say.
pub(crate) const UNKNOWN_RUNTIME: &str = "unknown";
/// How much of a damaged record is searched for its fields (they come
/// first; the saved screen, which may be large, comes after them).
const RECORD_HEAD_BYTES: u64 = 64 * 1024;
/// How much of a process's environment is read, at most.
const ENVIRON_BYTES: u64 = 1024 * 1024;

/// A record for the pane `bad` was about, when its keeper still holds it
/// and its process says it is that pane; `known_runtime` tells the
/// runtimes the host knows. Blocking (it connects to the keeper).
pub(crate) fn salvage(
    bad: &BadRecord,
    keepers_dir: &Path,
    known_runtime: impl Fn(&str) -> bool,
) -> Result<PaneRecord, String> {
    let id = pane_id_of(&bad.path).ok_or("its file name is not a pane's")?;
    let keeper_socket = keepers_dir.join(format!("{id}.sock"));
    if !keeper_socket.exists() {
        return Err("no keeper socket for it".into());
    }
    // The keeper tells the pid and hands over the PTY, which tells the
    // size; the connection is closed again for the adoption to make.
    let handover = keeper::connect(&keeper_socket).map_err(|err| format!("its keeper does not answer: {err}"))?;
    if handover.exited.is_some() {
        return Err("its process has exited".into());
    }
    let pid = handover.pid;
    let size = rustix::termios::tcgetwinsize(&handover.master)
        .ok()
        .map(|winsize| Size { cols: winsize.ws_col, rows: winsize.ws_row })
        .filter(|size| size.is_valid())
        .unwrap_or(Size::DEFAULT);
    drop(handover);
    let environ = read_bounded(Path::new(&format!("/proc/{pid}/environ")), ENVIRON_BYTES)
        .map_err(|err| format!("its process's environment cannot be read: {err}"))?;
    if environ_value(&environ, "PANEHOST_PANE").as_deref() != Some(id.as_str()) {
        return Err(format!("process {pid} does not say it is pane {id}"));
    }
    let notify_token = environ_value(&environ, "PANEHOST_NOTIFY_TOKEN").ok_or("its process has no hook token")?;
    let head = read_bounded(&moved_aside(&bad.path), RECORD_HEAD_BYTES).unwrap_or_default();
    let left = DamagedRecord::read(&String::from_utf8_lossy(&head));
    let runtime = left.runtime.filter(|runtime| known_runtime(runtime)).unwrap_or_else(|| UNKNOWN_RUNTIME.to_owned());
    let generation = left.generation.unwrap_or(1);
    let cwd = std::fs::read_link(format!("/proc/{pid}/cwd")).map(|cwd| cwd.display().to_string()).unwrap_or_default();
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    Ok(PaneRecord {
        version: RECORD_VERSION,
        id,
        runtime: runtime.clone(),
        generation,
        pid,
        keeper_socket,
        start: StartParams { runtime, ..StartParams::default() },
        cwd,
        size,
        created_at_ms: now.as_millis() as u64,
        notify_token,
        native_reference: None,
        // Unknown: the ring's own end stands.
        reserved_offset: MAX_RECORDED_COUNT,
        screen: None,
        exit: None,
        open_turn: None,
        activity: None,
        closing: false,
        typing: false,
    })
}

/// The pane a record's file is named for.
fn pane_id_of(path: &Path) -> Option<PaneId> {
    let name = path.file_name()?.to_str()?;
    let id = name.strip_suffix(".json.corrupt").or_else(|| name.strip_suffix(".json"))?;
    well_formed_pane_id(id).then(|| PaneId::from(id))
}

/// Where the restore moved a damaged record (the path itself if it was
/// not moved).
fn moved_aside(path: &Path) -> PathBuf {
    let aside = path.with_extension("json.corrupt");
    if aside.exists() {
        aside
    } else {
        path.to_path_buf()
    }
}

/// At most `limit` bytes from the start of a file.
fn read_bounded(path: &Path, limit: u64) -> std::io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?.take(limit).read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The value of `name` in a process environment (`NAME=value`, each
/// ended by a NUL).
fn environ_value(environ: &[u8], name: &str) -> Option<String> {
    environ.split(|byte| *byte == 0).find_map(|entry| {
        let value = entry.strip_prefix(name.as_bytes())?.strip_prefix(b"=")?;
        String::from_utf8(value.to_vec()).ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_environment_names_its_pane() {
        let environ = b"HOME=/h\0PANEHOST_PANE=p0000000a\0PANEHOST_NOTIFY_TOKEN=abc\0";
        assert_eq!(environ_value(environ, "PANEHOST_PANE").as_deref(), Some("p0000000a"));
        assert_eq!(environ_value(environ, "PANEHOST_NOTIFY_TOKEN").as_deref(), Some("abc"));
        assert_eq!(environ_value(environ, "PANEHOST"), None);
        assert_eq!(environ_value(b"", "HOME"), None);
    }

    #[test]
    fn only_a_panes_file_names_a_pane() {
        assert_eq!(pane_id_of(Path::new("/s/p0000000a.json")), Some(PaneId::from("p0000000a")));
        assert_eq!(pane_id_of(Path::new("/s/p0000000a.json.corrupt")), Some(PaneId::from("p0000000a")));
        assert_eq!(pane_id_of(Path::new("/s/x.json")), None);
        assert_eq!(pane_id_of(Path::new("/s/p0000000a.ring")), None);
    }
}
