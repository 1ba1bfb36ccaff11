//! The pane registry: every live pane by id, and why the last panes that
//! left it are gone. It tells the host-wide feed (`watch`) of panes
//! arriving and leaving, and connects each pane to the feed.
//!
//! The registry is only ever locked to look up, insert or remove a handle;
//! no spawn, signal or client I/O happens under it.

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
    /// The panes that left most recently, oldest first, with why: a client
    /// that asks for one is told what became of it.
    ended: Mutex<VecDeque<(PaneId, String)>>,
    /// The host-wide feed of pane news.
    news: broadcast::Sender<Event>,
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
        Registry { panes: DashMap::new(), ended: Mutex::new(VecDeque::new()), news: broadcast::channel(NEWS_BACKLOG).0 }
    }

    /// A receiver of the host-wide feed, from now on.
    pub(crate) fn follow_news(&self) -> broadcast::Receiver<Event> {
        self.news.subscribe()
    }

    /// A fresh id no pane has: `p` and eight hex digits.
    pub(crate) fn new_id(&self) -> PaneId {
        loop {
            let mut hasher = std::collections::hash_map::RandomState::new().build_hasher();
            hasher.write_u128(
                std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default().as_nanos(),
            );
            let id = PaneId(format!("p{:08x}", hasher.finish() as u32));
            if !self.panes.contains_key(&id) {
                return id;
            }
        }
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
