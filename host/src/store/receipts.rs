//! Completion receipts on disk: one file per runtime under
//! `<state dir>/receipts/`, written atomically, so a receipt outlives the
//! host that took it. A file that cannot be read is reported and treated
//! as no receipt.

use crate::store::atomic_file::write_atomically;
use crate::store::private_dir::create_private_subdir;
use panehost_ipc::Receipt;
use std::io;
use std::path::{Path, PathBuf};

/// The receipts directory. The `_async` methods do the file work on a
/// blocking thread, so that a request never holds an async worker while
/// the disk answers.
#[derive(Debug, Clone)]
pub struct ReceiptStore {
    dir: PathBuf,
}

impl ReceiptStore {
    /// The store under `state_dir/receipts`, created 0700 if missing.
    ///
    /// # Errors
    /// Fails when the directory cannot be created.
    pub fn open(state_dir: &Path) -> io::Result<ReceiptStore> {
        let dir = state_dir.join("receipts");
        create_private_subdir(&dir)?;
        Ok(ReceiptStore { dir })
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
        self.dir.join("scratch")
    }

    fn path(&self, runtime: &str) -> PathBuf {
        self.dir.join(format!("{runtime}.json"))
    }

    /// Replaces the runtime's receipt atomically.
    ///
    /// # Errors
    /// Fails when the file cannot be written.
    pub fn save(&self, receipt: &Receipt) -> io::Result<()> {
        let bytes = serde_json::to_vec_pretty(receipt).map_err(io::Error::other)?;
        write_atomically(&self.dir, &format!("{}.json", receipt.runtime), &bytes)
    }

    /// The runtime's last receipt, if one was stored and can be read.
    pub fn load(&self, runtime: &str) -> Option<Receipt> {
        let path = self.path(runtime);
        let bytes = match std::fs::read(&path) {
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
