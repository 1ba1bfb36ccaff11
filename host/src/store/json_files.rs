//! A directory of JSON files, one per key (`<key>.json`), private to the
//! user: written whole (a crash leaves the old file or the new), read back
//! only when it is a regular file within a size limit. Pane records and
//! completion receipts are kept this way.

use super::atomic_file::{write_atomically, write_replacing};
use super::private_dir::create_private_subdir;
use serde::Serialize;
use std::io;
use std::path::{Path, PathBuf};

/// Whether a write waits for the disk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Durability {
    /// Synced before the write returns: it survives a power loss.
    Synced,
    /// Left to the page cache: it survives a crash of the host only.
    Unsynced,
}

/// One directory of JSON files.
#[derive(Debug, Clone)]
pub struct JsonFiles {
    dir: PathBuf,
}

impl JsonFiles {
    /// The files in `dir`, created 0700 if missing.
    ///
    /// # Errors
    /// Fails when the directory cannot be created.
    pub fn open(dir: PathBuf) -> io::Result<JsonFiles> {
        create_private_subdir(&dir)?;
        Ok(JsonFiles { dir })
    }

    /// The directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The file of `key`.
    pub fn path(&self, key: &str) -> PathBuf {
        self.dir.join(format!("{key}.json"))
    }

    /// Writes `value` as the file of `key`, replacing the old one whole.
    ///
    /// # Errors
    /// Fails when the value cannot be encoded or the file written.
    pub fn save(&self, key: &str, value: &impl Serialize, durability: Durability) -> io::Result<()> {
        let bytes = serde_json::to_vec_pretty(value).map_err(io::Error::other)?;
        let name = format!("{key}.json");
        match durability {
            Durability::Synced => write_atomically(&self.dir, &name, &bytes),
            Durability::Unsynced => write_replacing(&self.dir, &name, &bytes),
        }
    }

    /// The bytes of the file at `path` (one of this directory's), when it
    /// is a regular file of at most `max_bytes`: a link, a directory or a
    /// file that grew past the limit is refused before anything is read.
    ///
    /// # Errors
    /// The I/O error (`NotFound` for a missing file), or `InvalidData`
    /// saying what is wrong with the file.
    pub fn read_bounded(&self, path: &Path, max_bytes: u64) -> io::Result<Vec<u8>> {
        let metadata = std::fs::symlink_metadata(path)?;
        if !metadata.file_type().is_file() {
            return Err(io::Error::new(io::ErrorKind::InvalidData, "it is not a regular file"));
        }
        if metadata.len() > max_bytes {
            let message = format!("it is {} bytes, over the limit of {max_bytes}", metadata.len());
            return Err(io::Error::new(io::ErrorKind::InvalidData, message));
        }
        let mut bytes = Vec::with_capacity(metadata.len() as usize);
        io::Read::read_to_end(&mut io::Read::take(std::fs::File::open(path)?, max_bytes), &mut bytes)?;
        Ok(bytes)
    }

    /// Every `*.json` file of the directory.
    pub fn files(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(&self.dir) else { return Vec::new() };
        entries
            .flatten()
            .map(|entry| entry.path())
            .filter(|path| path.extension().and_then(|ext| ext.to_str()) == Some("json"))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::{Durability, JsonFiles};
    use std::io;

    #[test]
    fn values_round_trip_and_reads_are_bounded_to_regular_files() {
        let state = tempfile::tempdir().unwrap();
        let files = JsonFiles::open(state.path().join("things")).unwrap();
        files.save("a", &serde_json::json!({"n": 1}), Durability::Synced).unwrap();
        files.save("b", &serde_json::json!([1, 2, 3]), Durability::Unsynced).unwrap();
        let read = files.read_bounded(&files.path("a"), 1024).unwrap();
        assert_eq!(serde_json::from_slice::<serde_json::Value>(&read).unwrap(), serde_json::json!({"n": 1}));
        let mut listed = files.files();
        listed.sort();
        assert_eq!(listed, [files.path("a"), files.path("b")]);

        // The largest size passes, one byte more is refused unread.
        let size = std::fs::metadata(files.path("a")).unwrap().len();
        assert!(files.read_bounded(&files.path("a"), size).is_ok());
        let over = files.read_bounded(&files.path("a"), size - 1).unwrap_err();
        assert_eq!(over.kind(), io::ErrorKind::InvalidData);
        // Missing, a link, a directory.
        assert_eq!(files.read_bounded(&files.path("none"), 1024).unwrap_err().kind(), io::ErrorKind::NotFound);
        std::os::unix::fs::symlink(files.path("a"), files.path("link")).unwrap();
        assert!(files.read_bounded(&files.path("link"), 1024).unwrap_err().to_string().contains("regular"));
        std::fs::create_dir(files.path("dir")).unwrap();
        assert!(files.read_bounded(&files.path("dir"), 1024).unwrap_err().to_string().contains("regular"));
    }
}
