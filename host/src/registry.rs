//! The pane registry: every live pane by id, and why the last panes that
//! left it are gone. It tells the host-wide feed (`watch`) of panes
//! arriving and leaving, and connects each pane to the feed.
//!
//! The registry is only ever locked to look up, insert or remove a handle;
//! no spawn, signal or client I/O happens under it. A start reserves its
//! pane's id first ([`Registry::reserve_id`]): two starts never hold the
//! same id, so never the same socket or files.

use crate::limits::{ENDED_PANES_REMEMBERED, NEWS_BACKLOG};
use crate::pane::Pane;
use dashmap::DashMap;
use panehost_ipc::{ErrorBody, ErrorCode, Event, PaneId};
use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex};
use tokio::sync::broadcast;

/// Every pane this host owns.
#[derive(Debug)]
pub(crate) struct Registry {
    panes: DashMap<PaneId, Arc<Pane>>,
    /// The ids of panes being started, held until they join or fail.
    reserved: DashMap<PaneId, ()>,
    /// The panes that left most recently, oldest first, with why: a client
    /// that asks for one is told what became of it.
    ended: Mutex<VecDeque<(PaneId, String)>>,
    /// The host-wide feed of pane news.
    news: broadcast::Sender<Event>,
}

/// A pane id held for a pane being started (see
/// [`Registry::reserve_id`]); let go when dropped.
#[derive(Debug)]
pub(crate) struct IdReservation<'a> {
    registry: &'a Registry,
    id: PaneId,
}

impl IdReservation<'_> {
    /// The reserved id.
    pub(crate) fn id(&self) -> &PaneId {
        &self.id
    }
}

impl Drop for IdReservation<'_> {
    fn drop(&mut self) {
        self.registry.reserved.remove(&self.id);
    }
}

/// A random pane id: `p` and eight hex digits.
fn random_id() -> PaneId {
    let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
    hasher
        .write_u128(std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos());
    PaneId(format!("p{:08x}", hasher.finish() as u32))
}

/// Why a pane left the host.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Departure {
    /// A client closed it.
    Closed,
    /// A restarted host could not take it back; why.
    EndedAtRestart(String),
}

impl Departure {
    /// The reason a `pane_ended` event gives.
    fn reason(&self) -> String {
        match self {
            Departure::Closed => "closed".to_owned(),
            Departure::EndedAtRestart(why) => format!("ended when the host restarted: {why}"),
        }
    }

    /// What `UNKNOWN_PANE` says after the pane's id.
    fn sentence(&self) -> String {
        match self {
            Departure::Closed => "was closed".to_owned(),
            Departure::EndedAtRestart(_) => self.reason(),
        }
    }
}

impl Default for Registry {
    fn default() -> Self {
        Registry::new()
    }
}

impl Registry {
    /// An empty registry.
    pub(crate) fn new() -> Self {
        Registry {
            panes: DashMap::new(),
            reserved: DashMap::new(),
            ended: Mutex::new(VecDeque::new()),
            news: broadcast::channel(NEWS_BACKLOG).0,
        }
    }

    /// A receiver of the host-wide feed, from now on.
    pub(crate) fn follow_news(&self) -> broadcast::Receiver<Event> {
        self.news.subscribe()
    }

    /// Reserves a fresh id, `p` and eight random hex digits, that no pane
    /// has and no other start holds: the pane's socket and files are named
    /// after it. Held until the pane joins ([`Registry::join`]) or the
    /// reservation is dropped (the start failed).
    pub(crate) fn reserve_id(&self) -> IdReservation<'_> {
        self.reserve_id_from(random_id)
    }

    /// [`Registry::reserve_id`] with ids drawn from `draw` until one is
    /// free: checked against the panes and taken in one step, under the
    /// lock of the reservation's own entry.
    fn reserve_id_from(&self, mut draw: impl FnMut() -> PaneId) -> IdReservation<'_> {
        loop {
            let id = draw();
            // A pane joins before its reservation is let go: holding the
            // entry, an id found free here is free.
            if let dashmap::Entry::Vacant(entry) = self.reserved.entry(id.clone()) {
                if !self.panes.contains_key(&id) {
                    entry.insert(());
                    return IdReservation { registry: self, id };
                }
            }
        }
    }

    /// Adds the pane started under `reservation` (see [`Registry::insert`]),
    /// then lets the reservation go.
    pub(crate) fn join(&self, reservation: IdReservation<'_>, pane: Arc<Pane>) {
        debug_assert_eq!(reservation.id, pane.info().id);
        self.insert(pane);
        drop(reservation);
    }

    /// Adds a pane, and tells the feed (after the pane can be found, so a
    /// watcher told of it can act on it).
    pub(crate) fn insert(&self, pane: Arc<Pane>) {
        self.panes.insert(pane.info().id.clone(), Arc::clone(&pane));
        pane.connect_news(self.news.clone());
    }

    /// The pane with this id.
    pub(crate) fn get(&self, id: &PaneId) -> Option<Arc<Pane>> {
        self.panes.get(id).map(|entry| Arc::clone(entry.value()))
    }

    /// Forgets a pane, remembering why for the next
    /// [`ENDED_PANES_REMEMBERED`] panes that leave, and tells the feed.
    pub(crate) fn forget(&self, id: &PaneId, departure: Departure) {
        let left = self.panes.remove(id);
        let mut ended = self.ended.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if ended.len() >= ENDED_PANES_REMEMBERED {
            ended.pop_front();
        }
        ended.push_back((id.clone(), departure.sentence()));
        drop(ended);
        match left {
            // Through the pane's outlet: after all it told.
            Some((_, pane)) => pane.disconnect_news(departure.reason()),
            // A pane that never joined (a restore that failed).
            None => {
                let _ = self.news.send(Event::PaneEnded { pane: id.clone(), reason: departure.reason() });
            }
        }
    }

    /// The pane with this id, or `UNKNOWN_PANE` saying what became of it
    /// when the host remembers.
    ///
    /// # Errors
    /// `UNKNOWN_PANE` when no pane has the id.
    pub(crate) fn find(&self, id: &PaneId) -> Result<Arc<Pane>, ErrorBody> {
        if let Some(pane) = self.get(id) {
            return Ok(pane);
        }
        let ended = self.ended.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let message = match ended.iter().rev().find(|(ended, _)| ended == id) {
            Some((_, why)) => format!("pane {id} {why}"),
            None => format!("no pane {id}"),
        };
        Err(ErrorBody::new(ErrorCode::UnknownPane, message))
    }

    /// How many panes there are.
    pub(crate) fn len(&self) -> usize {
        self.panes.len()
    }

    /// Every pane as `list` describes it, oldest first.
    pub(crate) fn summaries(&self) -> Vec<panehost_ipc::PaneSummary> {
        self.all().iter().map(|pane| pane.summary()).collect()
    }

    /// Every pane, oldest first.
    pub(crate) fn all(&self) -> Vec<Arc<Pane>> {
        let mut panes: Vec<Arc<Pane>> = self.panes.iter().map(|entry| Arc::clone(entry.value())).collect();
        panes.sort_by(|a, b| (a.info().created_at_ms, &a.info().id).cmp(&(b.info().created_at_ms, &b.info().id)));
        panes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Ids drawn in this order, then the last one for ever.
    fn ids(drawn: &[&str]) -> impl FnMut() -> PaneId {
        let mut drawn: Vec<PaneId> = drawn.iter().rev().map(|id| PaneId((*id).to_owned())).collect();
        move || if drawn.len() > 1 { drawn.pop().unwrap() } else { drawn[0].clone() }
    }

    #[test]
    fn two_starts_that_draw_the_same_id_hold_different_ids() {
        let registry = Registry::new();
        let first = registry.reserve_id_from(ids(&["p00000001"]));
        // The second start draws the first's id before any pane has
        // joined: it must not get it (its socket would be the first's).
        let second = registry.reserve_id_from(ids(&["p00000001", "p00000002"]));
        assert_eq!(first.id().0, "p00000001");
        assert_eq!(second.id().0, "p00000002");
    }

    #[test]
    fn a_failed_start_lets_its_id_go() {
        let registry = Registry::new();
        drop(registry.reserve_id_from(ids(&["p00000001"])));
        assert_eq!(registry.reserve_id_from(ids(&["p00000001"])).id().0, "p00000001");
    }

    #[test]
    fn reservations_drawn_at_once_on_many_threads_are_all_different() {
        let registry = Registry::new();
        let held = std::sync::Mutex::new(Vec::new());
        std::thread::scope(|scope| {
            for _ in 0..8 {
                scope.spawn(|| {
                    // Every thread draws from the same few ids.
                    let mut n = 0u32;
                    let reservation = registry.reserve_id_from(|| {
                        n += 1;
                        PaneId(format!("p{:08x}", n))
                    });
                    held.lock().unwrap().push(reservation);
                });
            }
        });
        let mut ids: Vec<String> = held.lock().unwrap().iter().map(|r| r.id().0.clone()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), 8, "{ids:?}");
    }
}
