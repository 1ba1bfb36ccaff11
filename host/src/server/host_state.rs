//! What every connection of a host shares.

use crate::config::CountLimits;
use crate::config::MAX_PANES_ENV;
use crate::pane::{Keepers, Pane, PaneLimits, PaneServices};
use crate::registry::{Departure, Registry};
use crate::runtime_gate::RuntimeGate;
use crate::server::answer_budget::AnswerBudget;
use crate::store::receipts::ReceiptStore;
use crate::store::records::RecordStore;
use panehost_adapters::Catalog;
use panehost_ipc::{ErrorBody, ErrorCode};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use tokio::sync::watch;

/// The host's shared state.
#[derive(Debug)]
pub(crate) struct HostState {
    /// Every pane.
    pub registry: Registry,
    /// The runtimes it can start.
    pub catalog: Arc<Catalog>,
    /// What it knows of each runtime's executable.
    pub runtime_gate: RuntimeGate,
    /// Buffer sizes of new panes.
    pub pane_limits: PaneLimits,
    /// How many panes and subscriptions it holds at most.
    pub count_limits: CountLimits,
    /// The memory large answers may hold, host-wide.
    pub answer_budget: AnswerBudget,
    /// Panes being started (counted against the pane limit until they are
    /// in the registry or have failed).
    pub starting: AtomicUsize,
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

/// A pane start counted against the pane limit until it is dropped.
#[derive(Debug)]
pub(crate) struct StartSlot<'a>(&'a AtomicUsize);

impl Drop for StartSlot<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl HostState {
    /// What a pane needs of the host.
    pub(crate) fn pane_services(&self) -> PaneServices<'_> {
        PaneServices { keepers: &self.keepers, records: &self.records, limits: self.pane_limits }
    }

    /// Counts one more pane being started, unless the host already holds
    /// (or is starting) as many panes as it may.
    ///
    /// # Errors
    /// `LIMIT_REACHED`, naming the limit and the variable that sets it.
    pub(crate) fn start_slot(&self) -> Result<StartSlot<'_>, ErrorBody> {
        let starting = self.starting.fetch_add(1, Ordering::SeqCst);
        let slot = StartSlot(&self.starting);
        let held = self.registry.len() + starting;
        if held >= self.count_limits.max_panes {
            return Err(ErrorBody::new(
                ErrorCode::LimitReached,
                format!(
                    "this host holds {held} panes, its limit ({} by default, {MAX_PANES_ENV} sets it); close one first",
                    crate::limits::MAX_PANES
                ),
            ));
        }
        Ok(slot)
    }

    /// Closes `pane` for good (see [`Pane::close`]; its record says so
    /// first), has it leave the registry as closed, and lets its keeper
    /// and record go. Gives how its process ended and what the sweep of
    /// its other processes did.
    pub(crate) async fn close_pane(&self, pane: &Pane) -> (panehost_ipc::ExitStatus, panehost_ipc::PaneSweep) {
        pane.record_closing().await;
        let closed = pane.close().await;
        self.registry.forget(&pane.info().id, Departure::Closed);
        pane.release().await;
        closed
    }

    /// Waits until the panes of the last host are restored (at once, when
    /// they are).
    pub(crate) async fn wait_restored(&self) {
        let mut restored = self.restored.subscribe();
        let _ = restored.wait_for(|done| *done).await;
    }
}
