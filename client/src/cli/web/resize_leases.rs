//! A viewer's resize does not outlive the viewer: the size a pane had
//! before the page's viewers resized it, given back when the last of them
//! has left.
//!
//! The rule: every WebSocket open on a pane holds it. The first time one
//! of them resizes the pane (while none of the others has since they came),
//! the gateway notes the pane's size as the host has it just then. When
//! the last WebSocket on the pane has closed, and none has opened on it
//! again within [`RESTORE_GRACE`] (a reload comes back well within it),
//! the gateway resizes the pane to the noted size. Sizes set meanwhile by
//! other clients (`panehost attach`, `resize`) are not noted: the pane
//! returns to the size it had before the web's viewers came. A pane that
//! has exited or been closed meanwhile is left alone.

use super::server::{AppState, HostLink};
use panehost_ipc::{PaneId, Size};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use tokio::sync::OnceCell;

/// How long after the last viewer left the pane's size is given back: a
/// viewer that comes back sooner (a reload, a dropped network) finds the
/// pane as it left it.
pub(super) const RESTORE_GRACE: Duration = Duration::from_secs(5);

/// The viewers of every pane with one, and the sizes noted before they
/// resized them.
#[derive(Debug, Default)]
pub(super) struct ResizeLeases {
    panes: Mutex<HashMap<PaneId, Viewed>>,
}

#[derive(Debug)]
struct Viewed {
    /// The size before the first viewer resized it: unset until one did;
    /// `None` when it could not be read (nothing is restored then).
    before: Arc<OnceCell<Option<Size>>>,
    /// WebSockets open on the pane.
    viewers: usize,
    /// Held while the size is given back: a viewer that resizes meanwhile
    /// waits for it, so that its own resize comes after and is not undone.
    order: Arc<tokio::sync::Mutex<()>>,
}

/// One WebSocket's hold on its pane; [`leave`] gives it back.
#[derive(Debug)]
pub(super) struct Viewer {
    pane: PaneId,
}

impl ResizeLeases {
    fn lock(&self) -> MutexGuard<'_, HashMap<PaneId, Viewed>> {
        // Nothing panics while holding the lock; a poisoned map is still consistent.
        self.panes.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// A WebSocket opened on `pane`.
    pub(super) fn join(&self, pane: &PaneId) -> Viewer {
        let mut panes = self.lock();
        let viewed = panes.entry(pane.clone()).or_insert_with(|| Viewed {
            before: Arc::new(OnceCell::new()),
            viewers: 0,
            order: Arc::default(),
        });
        viewed.viewers += 1;
        Viewer { pane: pane.clone() }
    }

    /// Before `viewer` resizes its pane: notes the pane's size when no
    /// viewer has resized it yet, and waits for a size being given back,
    /// so that the resize comes after both.
    pub(super) async fn before_resize(&self, host: &HostLink, viewer: &Viewer) {
        let pane = &viewer.pane;
        let Some((before, order)) =
            self.lock().get(pane).map(|viewed| (Arc::clone(&viewed.before), Arc::clone(&viewed.order)))
        else {
            return;
        };
        // Without the map's lock held.
        let _ordered = order.lock().await;
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
    }

    /// `viewer` left; when it was the last, the size to give back (if one
    /// was noted) and the lock to hold meanwhile. A pane no viewer resized
    /// is forgotten at once.
    fn release(&self, viewer: &Viewer) -> Option<(Size, Arc<tokio::sync::Mutex<()>>)> {
        let mut panes = self.lock();
        let viewed = panes.get_mut(&viewer.pane)?;
        viewed.viewers = viewed.viewers.saturating_sub(1);
        if viewed.viewers > 0 {
            return None;
        }
        match viewed.before.get().copied().flatten() {
            Some(size) => Some((size, Arc::clone(&viewed.order))),
            None => {
                panes.remove(&viewer.pane);
                None
            }
        }
    }

    /// True when no viewer holds `pane`; forgets the pane when `forget`.
    fn unheld(&self, pane: &PaneId, forget: bool) -> bool {
        let mut panes = self.lock();
        let unheld = panes.get(pane).is_none_or(|viewed| viewed.viewers == 0);
        if unheld && forget {
            panes.remove(pane);
        }
        unheld
    }
}

/// `viewer` left; when it was the last, gives the pane its noted size back
/// after [`RESTORE_GRACE`] (in a task of its own: the viewer is gone),
/// unless a viewer came meanwhile.
pub(super) fn leave(state: Arc<AppState>, viewer: Viewer) {
    let Some((size, order)) = state.resize_leases.release(&viewer) else { return };
    let pane = viewer.pane;
    tokio::spawn(async move {
        tokio::time::sleep(RESTORE_GRACE).await;
        let _ordered = order.lock().await;
        if !state.resize_leases.unheld(&pane, false) {
            // A viewer came back: it holds the pane, and the size noted.
            tracing::debug!(%pane, "a viewer came back within the grace: the size stays");
            return;
        }
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
        // A viewer that came during the resize keeps the entry, and the size noted.
        state.resize_leases.unheld(&pane, true);
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noted(leases: &ResizeLeases, viewer: &Viewer, size: Option<Size>) {
        let _ = leases.lock().get(&viewer.pane).unwrap().before.set(size);
    }

    #[test]
    fn the_last_viewer_to_leave_gets_the_first_size_back() {
        let leases = ResizeLeases::default();
        let small = Size { cols: 80, rows: 24 };
        let first = leases.join(&PaneId::from("p1"));
        noted(&leases, &first, Some(small));
        // A second viewer keeps the size the first one noted.
        let second = leases.join(&PaneId::from("p1"));
        noted(&leases, &second, Some(Size { cols: 200, rows: 50 }));
        assert!(leases.release(&first).is_none(), "another viewer still holds the pane");
        assert_eq!(leases.release(&second).map(|(size, _)| size), Some(small));
        // Until the restore is done the entry stays: a viewer coming now
        // keeps the first size, and the restore sees the pane is held.
        let back = leases.join(&PaneId::from("p1"));
        assert!(!leases.unheld(&PaneId::from("p1"), true));
        assert_eq!(leases.release(&back).map(|(size, _)| size), Some(small));
        assert!(leases.unheld(&PaneId::from("p1"), true));
        assert!(leases.lock().is_empty());
        // A new viewer afterwards notes afresh.
        let again = leases.join(&PaneId::from("p1"));
        noted(&leases, &again, Some(Size { cols: 100, rows: 30 }));
        assert_eq!(leases.release(&again).map(|(size, _)| size), Some(Size { cols: 100, rows: 30 }));
    }

    #[test]
    fn a_pane_nobody_resized_or_whose_size_was_unknown_is_left_alone() {
        let leases = ResizeLeases::default();
        let looked = leases.join(&PaneId::from("p1"));
        assert!(leases.release(&looked).is_none());
        let unknown = leases.join(&PaneId::from("p2"));
        noted(&leases, &unknown, None);
        assert!(leases.release(&unknown).is_none());
        assert!(leases.lock().is_empty(), "both forgotten at once");
    }
}
