//! Pane records: what a restarted host needs to take a pane back, written
//! atomically (temp file, fsync, rename, directory fsync).
//!
//! A record holds the pane's identity (id, runtime, generation, pid), how it
//! was started (for a restore by native resume when its keeper is gone),
//! its keeper's socket, its notify token, the last screen, and the
//! **reserved offset**: an output offset no byte has reached yet. Offsets
//! are reserved ahead of the output (in steps of [`limits::RESERVE_STEP`]), so a
//! host that restarts after a crash can continue the offsets from the
//! reservation: no client can hold an offset beyond it, and every client is
//! told of the bytes in between as a gap.

use crate::limits;
/// The largest count a record may hold (a limit of the host's, named
/// here too for what checks records from outside, such as the fuzz target).
pub use crate::limits::MAX_RECORDED_COUNT;
use crate::store::json_files::{Durability, JsonFiles};
use panehost_ipc::{check_client_env, check_labels, ExitStatus, PaneId, Size, StartParams};
use serde::{Deserialize, Serialize};
use std::io;
use std::path::{Path, PathBuf};

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
    /// The turn that was open when the record was saved, if one was.
    #[serde(default)]
    pub open_turn: Option<RecordedTurn>,
    /// The pane's activity when the record was saved (`idle`, `busy`,
    /// `awaiting_input`, `awaiting_approval` or `unknown`): a pane taken
    /// back between turns, or waiting for its user, comes back as it was,
    /// not `unknown`.
    #[serde(default)]
    pub activity: Option<String>,
    /// A close began: it is saved before the close sends any signal, so a
    /// host killed in the middle of a close has the next host finish it
    /// rather than take the pane back as if nobody had asked.
    #[serde(default)]
    pub closing: bool,
    /// The host was typing a submission (its text written, its Enter not
    /// yet): a host killed then may have left the text, or a paste still
    /// open, on the program's command line.
    #[serde(default)]
    pub typing: bool,
}

/// A turn open when its pane's record was saved: a host restarted while it
/// runs opens it again, and the runtime's own signal ends it as usual.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordedTurn {
    /// Where it started.
    pub offset: u64,
    /// What the host submitted for it, to tell its end from other threads'.
    #[serde(default)]
    pub submitted: Option<String>,
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
    files: JsonFiles,
}

/// A record file that could not be read.
#[derive(Debug, Clone)]
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
        Ok(RecordStore { files: JsonFiles::open(state_dir.join("panes"))? })
    }

    /// Where the keepers' sockets live.
    pub fn keepers_dir(&self) -> PathBuf {
        self.files.dir().join("keepers")
    }

    fn path(&self, id: &PaneId) -> PathBuf {
        self.files.path(id.as_str())
    }

    /// Where the pane's output ring is kept (see `pane::ring_file`).
    pub fn ring_path(&self, id: &PaneId) -> PathBuf {
        self.files.dir().join(format!("{id}.ring"))
    }

    /// Where the pane's end marker is (see `pane::end_marker`).
    pub fn end_marker_path(&self, id: &PaneId) -> PathBuf {
        self.files.dir().join(format!("{id}.end"))
    }

    /// Writes a record atomically: a temporary file, fsync, rename, then
    /// fsync of the directory, so a crash leaves the old or the new record,
    /// never a torn one.
    ///
    /// # Errors
    /// Fails when the file cannot be written.
    pub fn save(&self, record: &PaneRecord) -> io::Result<()> {
        self.files.save(record.id.as_str(), record, Durability::Synced)
    }

    /// Writes a record as [`save`](Self::save) does, without waiting for
    /// the disk: a host that restarts reads it, a machine that loses power
    /// may not (a record it cannot read is moved aside, as any bad record).
    ///
    /// # Errors
    /// Fails when the file cannot be written.
    pub fn save_unsynced(&self, record: &PaneRecord) -> io::Result<()> {
        self.files.save(record.id.as_str(), record, Durability::Unsynced)
    }

    /// Forgets a pane's record.
    pub fn remove(&self, id: &PaneId) {
        let _ = std::fs::remove_file(self.path(id));
        let _ = std::fs::remove_file(self.end_marker_path(id));
        let _ = std::fs::remove_file(self.ring_path(id));
        let _ = std::fs::File::open(self.files.dir()).and_then(|dir| dir.sync_all());
    }

    /// Removes every ring file (`<id>.ring`) whose pane has no record in
    /// `kept`: a start the last host did not finish, or a record moved
    /// aside. Blocking.
    pub fn remove_stray_rings(&self, kept: &std::collections::HashSet<PaneId>) {
        let Ok(entries) = std::fs::read_dir(self.files.dir()) else { return };
        for path in entries.flatten().map(|entry| entry.path()) {
            if path.extension().and_then(|ext| ext.to_str()) != Some("ring") {
                continue;
            }
            let id = path.file_stem().and_then(|stem| stem.to_str()).map(PaneId::from);
            if id.is_none_or(|id| !kept.contains(&id)) {
                let _ = std::fs::remove_file(&path);
            }
        }
    }

    /// Every record, and every file that is not a valid record. A bad file
    /// is moved aside (`<name>.corrupt`) so it is reported once. A record
    /// whose sizes are out of range (written by an older host, or edited)
    /// is brought within range rather than lost: see [`PaneRecord::repair`].
    pub fn load_all(&self) -> (Vec<PaneRecord>, Vec<BadRecord>) {
        let mut records = Vec::new();
        let mut bad = Vec::new();
        for path in self.files.files() {
            let parsed = self.read_record(&path);
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

    /// Reads and checks one record file.
    fn read_record(&self, path: &Path) -> Result<PaneRecord, String> {
        let bytes = self.files.read_bounded(path, limits::MAX_OVERSIZED_RECORD_BYTES).map_err(|err| err.to_string())?;
        let (record, repairs) = PaneRecord::from_bytes(&bytes, &self.keepers_dir())?;
        if self.path(&record.id) != path {
            return Err(format!("it names pane {}", record.id));
        }
        for repair in repairs {
            tracing::warn!(pane = %record.id, "record repaired: {repair}");
        }
        Ok(record)
    }
}

/// Whether `id` is a pane id as the host makes them: `p` and eight
/// lowercase hex digits.
pub fn well_formed_pane_id(id: &str) -> bool {
    id.len() == 9
        && id.starts_with('p')
        && id[1..].bytes().all(|byte| byte.is_ascii_digit() || (b'a'..=b'f').contains(&byte))
}

impl PaneRecord {
    /// A record read from a file's bytes: parsed, checked (see
    /// [`check`](Self::check)) and repaired (see [`repair`](Self::repair));
    /// with the repairs made.
    ///
    /// # Errors
    /// A sentence saying what is wrong.
    /// A record over [`limits::MAX_RECORD_BYTES`] (an earlier host's, whose
    /// saved screens had no bound) is read without its saved screen.
    pub fn from_bytes(bytes: &[u8], keepers_dir: &Path) -> Result<(PaneRecord, Vec<String>), String> {
        let mut repairs = Vec::new();
        let mut record = if bytes.len() as u64 <= limits::MAX_RECORD_BYTES {
            serde_json::from_slice::<PaneRecord>(bytes).map_err(|err| err.to_string())?
        } else {
            let mut value = serde_json::from_slice::<serde_json::Value>(bytes).map_err(|err| err.to_string())?;
            if let Some(fields) = value.as_object_mut() {
                fields.remove("screen");
            }
            repairs.push(format!("its saved screen is left out: the record is {} bytes", bytes.len()));
            serde_json::from_value::<PaneRecord>(value).map_err(|err| err.to_string())?
        };
        record.check(keepers_dir)?;
        repairs.extend(record.repair());
        Ok((record, repairs))
    }

    /// Checks every field a restore acts on: the version, the id (`p` and
    /// eight hex digits), counts that must not overflow, the pid, the
    /// keeper's socket (a file directly in the keepers directory), the
    /// token, and the saved screen's offset.
    ///
    /// # Errors
    /// A sentence naming the first field that is wrong.
    pub fn check(&self, keepers_dir: &Path) -> Result<(), String> {
        if self.version != RECORD_VERSION {
            return Err(format!("record version {} is not {RECORD_VERSION}", self.version));
        }
        let id = self.id.as_str();
        if !well_formed_pane_id(id) {
            return Err(format!("pane id {id:?} is not p and eight hex digits"));
        }
        if self.runtime.is_empty()
            || self.runtime.len() > limits::MAX_RECORDED_RUNTIME_ID_LEN
            || self.runtime != self.start.runtime
        {
            return Err(format!("runtime {:?} is empty, too long, or not the one it was started with", self.runtime));
        }
        if self.generation == 0 || self.generation > limits::MAX_RECORDED_COUNT {
            return Err(format!("generation {} is out of range", self.generation));
        }
        if self.reserved_offset > limits::MAX_RECORDED_COUNT {
            return Err(format!("reserved offset {} is out of range", self.reserved_offset));
        }
        if let Some(screen) = &self.screen {
            if screen.offset > self.reserved_offset {
                return Err(format!(
                    "the saved screen's offset {} is beyond the reserved offset {}",
                    screen.offset, self.reserved_offset
                ));
            }
        }
        if self.pid == 0 || i32::try_from(self.pid).is_err() {
            return Err(format!("pid {} is not a process id", self.pid));
        }
        if self.keeper_socket.parent() != Some(keepers_dir) || self.keeper_socket.file_name().is_none() {
            return Err(format!(
                "keeper socket {} is not a file in {}",
                self.keeper_socket.display(),
                keepers_dir.display()
            ));
        }
        check_labels(&self.start.labels).map_err(|err| err.to_string())?;
        check_client_env(&self.start.env).map_err(|err| err.to_string())?;
        let token = &self.notify_token;
        if token.is_empty()
            || token.len() > limits::MAX_RECORDED_TOKEN_LEN
            || !token.bytes().all(|byte| byte.is_ascii_alphanumeric())
        {
            return Err("the notify token is empty, too long or not alphanumeric".into());
        }
        Ok(())
    }

    /// Brings sizes out of range (an older host allowed up to 65535x65535,
    /// whose model would not fit in memory) to the nearest size a pane may
    /// have; says what it changed.
    pub fn repair(&mut self) -> Vec<String> {
        let mut repairs = Vec::new();
        if !self.size.is_valid() {
            let clamped = self.size.clamped();
            repairs.push(format!("size {} brought to {clamped}", self.size));
            self.size = clamped;
        }
        if let Some(size) = self.start.size.filter(|size| !size.is_valid()) {
            let clamped = size.clamped();
            repairs.push(format!("start size {size} brought to {clamped}"));
            self.start.size = Some(clamped);
        }
        repairs
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use panehost_ipc::Size;

    /// A change that makes a record invalid.
    type Spoil = Box<dyn Fn(&mut PaneRecord)>;

    fn good(store: &RecordStore, id: &str) -> PaneRecord {
        PaneRecord {
            version: RECORD_VERSION,
            id: PaneId::from(id),
            runtime: "shell".into(),
            generation: 1,
            pid: 4242,
            keeper_socket: store.keepers_dir().join(format!("{id}.sock")),
            start: StartParams { runtime: "shell".into(), ..StartParams::default() },
            cwd: "/".into(),
            size: Size::DEFAULT,
            created_at_ms: 1,
            notify_token: "0123456789abcdef".into(),
            native_reference: None,
            reserved_offset: limits::RESERVE_STEP,
            screen: None,
            exit: None,
            open_turn: None,
            activity: None,
            closing: false,
            typing: false,
        }
    }

    /// Writes `record` under its own id's file name, as JSON.
    fn write(store: &RecordStore, record: &PaneRecord) {
        let name = format!("{}.json", record.id);
        std::fs::write(store.files.dir().join(name), serde_json::to_vec(record).unwrap()).unwrap();
    }

    #[test]
    fn each_kind_of_bad_record_is_moved_aside_with_its_reason_and_the_good_ones_load() {
        let state = tempfile::tempdir().unwrap();
        let store = RecordStore::open(state.path()).unwrap();
        let kept = good(&store, "p00000001");
        store.save(&kept).unwrap();

        let mut bad: Vec<(&str, Spoil)> = vec![
            ("record version 9", Box::new(|record| record.version = 9)),
            ("generation 0", Box::new(|record| record.generation = 0)),
            ("generation 18446744073709551615", Box::new(|record| record.generation = u64::MAX)),
            ("reserved offset 18446744073709551615", Box::new(|record| record.reserved_offset = u64::MAX)),
            ("pid 0", Box::new(|record| record.pid = 0)),
            ("pid 4294967295", Box::new(|record| record.pid = u32::MAX)),
            (
                "keeper socket /tmp/elsewhere.sock",
                Box::new(|record| record.keeper_socket = "/tmp/elsewhere.sock".into()),
            ),
            ("not a file in", Box::new(|record| record.keeper_socket = "/".into())),
            ("notify token", Box::new(|record| record.notify_token = String::new())),
            ("notify token", Box::new(|record| record.notify_token = "a b".into())),
            ("runtime", Box::new(|record| record.runtime = "codex".into())),
            (
                "beyond the reserved offset",
                Box::new(|record| {
                    record.screen = Some(RecordedScreen { offset: u64::MAX / 2, formatted: Default::default() })
                }),
            ),
        ];
        for (index, (_, spoil)) in bad.iter_mut().enumerate() {
            let mut record = good(&store, &format!("p1000000{index:x}"));
            spoil(&mut record);
            write(&store, &record);
        }
        // Files that are not records at all, or name another pane.
        std::fs::write(store.files.dir().join("p20000000.json"), b"{not json").unwrap();
        std::fs::write(store.files.dir().join("p20000001.json"), b"").unwrap();
        write(&store, &good(&store, "p20000002"));
        std::fs::rename(store.files.dir().join("p20000002.json"), store.files.dir().join("p20000003.json")).unwrap();
        let mut bad_id = good(&store, "x");
        bad_id.id = PaneId::from("../../x");
        std::fs::write(store.files.dir().join("x.json"), serde_json::to_vec(&bad_id).unwrap()).unwrap();
        write(&store, &good(&store, "pzzzzzzzz"));
        std::fs::File::create(store.files.dir().join("p20000004.json"))
            .unwrap()
            .set_len(limits::MAX_OVERSIZED_RECORD_BYTES + 1)
            .unwrap();
        std::os::unix::fs::symlink("/etc/passwd", store.files.dir().join("p20000005.json")).unwrap();

        let (records, refused) = store.load_all();
        assert_eq!(records, vec![kept]);
        assert_eq!(refused.len(), bad.len() + 7, "{refused:#?}");
        for (index, (reason, _)) in bad.iter().enumerate() {
            let path = store.files.dir().join(format!("p1000000{index:x}.json"));
            let found = refused.iter().find(|refused| refused.path == path).expect("reported");
            assert!(found.reason.contains(reason), "{reason:?} not in {:?}", found.reason);
            assert!(!path.exists() && path.with_extension("json.corrupt").exists(), "moved aside");
        }
        for (name, reason) in [
            ("p20000000", "key must be a string"),
            ("p20000001", "EOF"),
            ("p20000003", "names pane p20000002"),
            ("x", "pane id \"../../x\" is not p and eight hex digits"),
            ("pzzzzzzzz", "is not p and eight hex digits"),
            ("p20000004", "over the limit"),
            ("p20000005", "not a regular file"),
        ] {
            let path = store.files.dir().join(format!("{name}.json"));
            let found = refused.iter().find(|refused| refused.path == path).expect(name);
            assert!(found.reason.contains(reason), "{name}: {reason:?} not in {:?}", found.reason);
        }
        // Reported once: the next load finds only the good record.
        let (records, refused) = store.load_all();
        assert_eq!((records.len(), refused.len()), (1, 0));
    }

    #[test]
    fn sizes_out_of_range_are_brought_within_range_not_lost() {
        let state = tempfile::tempdir().unwrap();
        let store = RecordStore::open(state.path()).unwrap();
        let mut record = good(&store, "p0000000a");
        record.size = Size { cols: 65535, rows: 65535 };
        record.start.size = Some(Size { cols: 1, rows: 5 });
        write(&store, &record);
        let (records, refused) = store.load_all();
        assert!(refused.is_empty(), "{refused:?}");
        assert_eq!(records[0].size, Size { cols: 1000, rows: 250 });
        assert_eq!(records[0].start.size, Some(Size { cols: 2, rows: 5 }));
    }

    #[test]
    fn a_record_too_big_for_its_screen_is_read_without_it() {
        // An earlier host saved screens without a bound.
        let state = tempfile::tempdir().unwrap();
        let store = RecordStore::open(state.path()).unwrap();
        let mut record = good(&store, "p0000000c");
        let screen = vec![b'x'; limits::MAX_RECORD_BYTES as usize];
        record.screen = Some(RecordedScreen { offset: 0, formatted: panehost_ipc::ByteBuf(screen) });
        write(&store, &record);
        let (records, refused) = store.load_all();
        assert!(refused.is_empty(), "{refused:?}");
        record.screen = None;
        assert_eq!(records, vec![record]);
    }

    #[test]
    fn records_are_private_to_the_user() {
        use std::os::unix::fs::PermissionsExt;
        let state = tempfile::tempdir().unwrap();
        let store = RecordStore::open(state.path()).unwrap();
        store.save(&good(&store, "p0000000b")).unwrap();
        let mode = std::fs::metadata(store.files.dir().join("p0000000b.json")).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
}
