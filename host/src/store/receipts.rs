//! Completion receipts on disk: one file per runtime under
//! `<state dir>/receipts/`, written atomically, so a receipt outlives the
//! host that took it. A file that cannot be read (or is not a regular file
//! of at most [`limits::MAX_RECEIPT_BYTES`]) is reported and treated as no
//! receipt.

use crate::limits;
use crate::store::json_files::{Durability, JsonFiles};
use panehost_ipc::Receipt;
use std::io;
use std::path::{Path, PathBuf};

/// The receipts directory. The `_async` methods do the file work on a
/// blocking thread, so that a request never holds an async worker while
/// the disk answers.
#[derive(Debug, Clone)]
pub struct ReceiptStore {
    files: JsonFiles,
}

impl ReceiptStore {
    /// The store under `state_dir/receipts`, created 0700 if missing.
    ///
    /// # Errors
    /// Fails when the directory cannot be created.
    pub fn open(state_dir: &Path) -> io::Result<ReceiptStore> {
        Ok(ReceiptStore { files: JsonFiles::open(state_dir.join("receipts"))? })
    }

    /// [`ReceiptStore::save`], on a blocking thread.
    ///
    /// # Errors
    /// Fails when the file cannot be written.
    pub async fn save_async(&self, receipt: Receipt) -> io::Result<()> {
        let store = self.clone();
        tokio::task::spawn_blocking(move || store.save(&receipt)).await.map_err(io::Error::other)?
    }

    /// [`ReceiptStore::load`] for each of `runtimes`, in order, on one
    /// blocking thread.
    pub async fn load_async(&self, runtimes: Vec<String>) -> Vec<Option<Receipt>> {
        let store = self.clone();
        let count = runtimes.len();
        tokio::task::spawn_blocking(move || runtimes.iter().map(|runtime| store.load(runtime)).collect())
            .await
            .unwrap_or_else(|_| vec![None; count])
    }

    /// Where probes make their scratch working directories.
    pub fn scratch_parent(&self) -> PathBuf {
        self.files.dir().join("scratch")
    }

    /// Replaces the runtime's receipt atomically.
    ///
    /// # Errors
    /// Fails when the file cannot be written.
    pub fn save(&self, receipt: &Receipt) -> io::Result<()> {
        self.files.save(&receipt.runtime, receipt, Durability::Synced)
    }

    /// The runtime's last receipt, if one was stored and can be read.
    pub fn load(&self, runtime: &str) -> Option<Receipt> {
        let path = self.files.path(runtime);
        let bytes = match self.files.read_bounded(&path, limits::MAX_RECEIPT_BYTES) {
            Ok(bytes) => bytes,
            Err(err) if err.kind() == io::ErrorKind::NotFound => return None,
            Err(err) => {
                tracing::warn!(path = %path.display(), %err, "cannot read a receipt; treating it as none");
                return None;
            }
        };
        match serde_json::from_slice::<Receipt>(&bytes) {
            Ok(receipt) if receipt.runtime == runtime => Some(receipt),
            Ok(receipt) => {
                tracing::warn!(path = %path.display(), names = %receipt.runtime, "a receipt names another runtime; ignored");
                None
            }
            Err(err) => {
                tracing::warn!(path = %path.display(), %err, "a corrupt receipt; treating it as none");
                None
            }
        }
    }
}
