//! A viewer's resize does not outlive the viewer: the size a pane had
//! before the page's viewers resized it, given back when the last of them
//! leaves.
//!
//! The rule: the first WebSocket that resizes a pane (while no other one
//! holds a lease on it) notes the pane's size as the host has it then, and
//! takes a lease; every further WebSocket that resizes the same pane takes
//! one too, and keeps the size first noted. When the last lease is given
//! back (its WebSocket closed, for whatever reason), the gateway resizes
//! the pane to the noted size. Sizes set meanwhile by other clients
//! (`panehost attach`, `resize`) are not noted: the pane returns to the
//! size it had before the web's viewers came. A pane that has exited or
//! been closed meanwhile is left alone.

use super::server::{AppState, HostLink};
use panehost_ipc::{PaneId, Size};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::OnceCell;

/// The leases on every pane a viewer resized.
#[derive(Debug, Default)]
pub(super) struct ResizeLeases {
    panes: Mutex<HashMap<PaneId, Leased>>,
}

#[derive(Debug)]
struct Leased {
    /// The size before the first viewer resized it (`None`: it could not be
    /// read, and nothing is restored).
    before: Arc<OnceCell<Option<Size>>>,
    /// Viewers holding a lease.
    holders: usize,
}

/// One viewer's lease on one pane; [`ResizeLeases::release`] gives it back.
#[derive(Debug)]
pub(super) struct ResizeLease {
    pane: PaneId,
    before: Arc<OnceCell<Option<Size>>>,
}

impl ResizeLeases {
    fn lock(&self) -> MutexGuard<'_, HashMap<PaneId, Leased>> {
        // Nothing panics while holding the lock; a poisoned map is still consistent.
        self.panes.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Takes a lease on `pane` for a viewer about to resize it for the first
    /// time, noting its size first when no viewer holds one. Returns once
    /// the size before is noted (or could not be read), so that the
    /// viewer's resize comes after it.
    pub(super) async fn take(&self, host: &HostLink, pane: &PaneId) -> ResizeLease {
        let before = {
            let mut panes = self.lock();
            let leased =
                panes.entry(pane.clone()).or_insert_with(|| Leased { before: Arc::new(OnceCell::new()), holders: 0 });
            leased.holders += 1;
            Arc::clone(&leased.before)
        };
        // Read without the lock held: the first viewer reads, any other
        // waits for that reading.
        before
            .get_or_init(|| async {
                let listed = host.with_client(|client| async move { client.list().await }).await;
                match listed {
                    Ok(panes) => panes.into_iter().find(|summary| &summary.id == pane).map(|summary| summary.size),
                    Err(error) => {
                        tracing::info!(%pane, %error, "cannot read the pane's size before a viewer resizes it");
                        None
                    }
                }
            })
            .await;
        ResizeLease { pane: pane.clone(), before }
    }

    /// Gives `lease` back; when it was the last on its pane, returns the
    /// size to restore the pane to.
    pub(super) fn release(&self, lease: ResizeLease) -> Option<Size> {
        let mut panes = self.lock();
        let leased = panes.get_mut(&lease.pane)?;
        leased.holders -= 1;
        if leased.holders > 0 {
            return None;
        }
        panes.remove(&lease.pane);
        lease.before.get().copied().flatten()
    }
}

/// Gives `lease` back and, when it was the last, restores the pane's
/// size (in a task of its own: the viewer is gone).
pub(super) fn release_and_restore(state: Arc<AppState>, lease: ResizeLease) {
    let pane = lease.pane.clone();
    let Some(size) = state.resize_leases.release(lease) else { return };
    tokio::spawn(async move {
        let restored = state
            .host
            .with_client(|client| {
                let pane = pane.clone();
                async move { client.resize(&pane, size).await }
            })
            .await;
        match restored {
            Ok(_) => tracing::debug!(%pane, cols = size.cols, rows = size.rows, "the last viewer left: size restored"),
            // Exited or closed meanwhile: nothing to give back.
            Err(error) => tracing::debug!(%pane, %error, "cannot restore the size the pane had before its viewers"),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lease(leases: &ResizeLeases, pane: &str, before: Option<Size>) -> ResizeLease {
        let mut panes = leases.lock();
        let leased = panes
            .entry(PaneId::from(pane))
            .or_insert_with(|| Leased { before: Arc::new(OnceCell::new_with(Some(before))), holders: 0 });
        leased.holders += 1;
        ResizeLease { pane: PaneId::from(pane), before: Arc::clone(&leased.before) }
    }

    #[test]
    fn the_last_viewer_to_leave_gets_the_first_size_back() {
        let leases = ResizeLeases::default();
        let small = Size { cols: 80, rows: 24 };
        let first = lease(&leases, "p1", Some(small));
        // A second viewer keeps the size the first one noted.
        let second = lease(&leases, "p1", Some(Size { cols: 200, rows: 50 }));
        let other = lease(&leases, "p2", None);
        assert_eq!(leases.release(first), None, "another viewer still holds the pane");
        assert_eq!(leases.release(second), Some(small));
        assert_eq!(leases.release(other), None, "a size that could not be read is not restored");
        assert!(leases.lock().is_empty());
        // A new viewer afterwards notes afresh.
        let again = lease(&leases, "p1", Some(Size { cols: 100, rows: 30 }));
        assert_eq!(leases.release(again), Some(Size { cols: 100, rows: 30 }));
    }
}
