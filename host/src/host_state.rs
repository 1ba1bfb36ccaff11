//! What every connection of a host shares.

use crate::pane::{Keepers, PaneLimits};
use crate::receipt_store::ReceiptStore;
use crate::records::RecordStore;
use crate::registry::Registry;
use crate::runtime_gate::RuntimeGate;
use panehost_adapters::Catalog;
use std::sync::Arc;
use tokio::sync::watch;

/// The host's shared state.
#[derive(Debug)]
pub struct HostState {
    /// Every pane.
    pub registry: Registry,
    /// The runtimes it can start.
    pub catalog: Arc<Catalog>,
    /// What it knows of each runtime's executable.
    pub runtime_gate: RuntimeGate,
    /// Buffer sizes of new panes.
    pub pane_limits: PaneLimits,
    /// The keeper processes new panes are started in.
    pub keepers: Arc<Keepers>,
    /// Where pane records are kept.
    pub records: RecordStore,
    /// Where completion receipts are kept.
    pub receipts: ReceiptStore,
    /// Whether the panes of the last host are all restored: requests wait
    /// for it, so no client sees a pane missing that is on its way back.
    pub restored: watch::Sender<bool>,
}

impl HostState {
    /// Waits until the panes of the last host are restored (at once, when
    /// they are).
    pub async fn wait_restored(&self) {
        let mut restored = self.restored.subscribe();
        let _ = restored.wait_for(|done| *done).await;
    }
}
