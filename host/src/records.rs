//! Pane records: what a restarted host needs to take a pane back, written
//! atomically (temp file, fsync, rename, directory fsync).
//!
//! A record holds the pane's identity (id, runtime, generation, pid), how it
//! was started (for a restore by native resume when its keeper is gone),
//! its keeper's socket, its notify token, the last screen, and the
//! **reserved offset**: an output offset no byte has reached yet. Offsets
//! are reserved ahead of the output (in steps of [`RESERVE_STEP`]), so a
//! host that restarts after a crash can continue the offsets from the
//! reservation: no client can hold an offset beyond it, and every client is
//! told of the bytes in between as a gap.

use crate::atomic_file::write_atomically;
use panehost_ipc::{ExitStatus, PaneId, Size, StartParams};
use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};

/// How far ahead of the output offsets are reserved.
pub const RESERVE_STEP: u64 = 1024 * 1024;

/// The record format's version.
pub const RECORD_VERSION: u32 = 1;

/// Everything a restarted host needs to take a pane back.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PaneRecord {
    /// The record format's version.
    pub version: u32,
    /// The pane's id.
    pub id: PaneId,
    /// Its runtime.
    pub runtime: String,
    /// Its generation.
    pub generation: u64,
    /// The child's pid.
    pub pid: u32,
    /// Where its keeper listens.
    pub keeper_socket: PathBuf,
    /// How it was started (for a restore by native resume).
    pub start: StartParams,
    /// Its working directory.
    pub cwd: String,
    /// Its terminal size.
    pub size: Size,
    /// When it was created, ms since the epoch.
    pub created_at_ms: u64,
    /// The token its hooks use.
    pub notify_token: String,
    /// The runtime's session reference, once captured.
    #[serde(default)]
    pub native_reference: Option<String>,
    /// An output offset not reached yet (see the module documentation).
    pub reserved_offset: u64,
    /// The last screen saved.
    #[serde(default)]
    pub screen: Option<RecordedScreen>,
    /// How the process ended, once it has.
    #[serde(default)]
    pub exit: Option<ExitStatus>,
}

/// A saved screen.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedScreen {
    /// The output offset it describes.
    pub offset: u64,
    /// Bytes that redraw it (see `ScreenSnapshot::formatted`).
    pub formatted: panehost_ipc::ByteBuf,
}

/// The directory of pane records.
#[derive(Debug, Clone)]
pub struct RecordStore {
    dir: PathBuf,
}

/// A record file that could not be read.
#[derive(Debug)]
pub struct BadRecord {
    /// The file.
    pub path: PathBuf,
    /// Why.
    pub reason: String,
}

impl RecordStore {
    /// The records under `state_dir/panes`, created 0700 if missing.
    ///
    /// # Errors
    /// Fails when the directory cannot be created.
    pub fn open(state_dir: &Path) -> io::Result<RecordStore> {
        let dir = state_dir.join("panes");
        std::fs::create_dir_all(&dir)?;
        std::fs::set_permissions(&dir, std::os::unix::fs::PermissionsExt::from_mode(0o700))?;
        Ok(RecordStore { dir })
    }

    /// Where the keepers' sockets live.
    pub fn keepers_dir(&self) -> PathBuf {
        self.dir.join("keepers")
    }

    fn path(&self, id: &PaneId) -> PathBuf {
        self.dir.join(format!("{id}.json"))
    }

    /// Writes a record atomically: a temporary file, fsync, rename, then
    /// fsync of the directory, so a crash leaves the old or the new record,
    /// never a torn one.
    ///
    /// # Errors
    /// Fails when the file cannot be written.
    pub fn save(&self, record: &PaneRecord) -> io::Result<()> {
        let bytes = serde_json::to_vec_pretty(record).map_err(io::Error::other)?;
        write_atomically(&self.dir, &format!("{}.json", record.id), &bytes)
    }

    /// Forgets a pane's record.
    pub fn remove(&self, id: &PaneId) {
        let _ = std::fs::remove_file(self.path(id));
        let _ = std::fs::File::open(&self.dir).and_then(|dir| dir.sync_all());
    }

    /// Every record, and every file that is not a valid record. A bad file
    /// is moved aside (`<name>.corrupt`) so it is reported once.
    pub fn load_all(&self) -> (Vec<PaneRecord>, Vec<BadRecord>) {
        let mut records = Vec::new();
        let mut bad = Vec::new();
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return (records, bad) };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().and_then(|ext| ext.to_str()) != Some("json") {
                continue;
            }
            let parsed = std::fs::read(&path)
                .map_err(|err| err.to_string())
                .and_then(|bytes| serde_json::from_slice::<PaneRecord>(&bytes).map_err(|err| err.to_string()))
                .and_then(|record| {
                    if record.version != RECORD_VERSION {
                        Err(format!("record version {} is not {RECORD_VERSION}", record.version))
                    } else if self.path(&record.id) != path {
                        Err(format!("it names pane {}", record.id))
                    } else {
                        Ok(record)
                    }
                });
            match parsed {
                Ok(record) => records.push(record),
                Err(reason) => {
                    let _ = std::fs::rename(&path, path.with_extension("json.corrupt"));
                    bad.push(BadRecord { path, reason });
                }
            }
        }
        records.sort_by_key(|record| (record.created_at_ms, record.id.clone()));
        (records, bad)
    }
}
