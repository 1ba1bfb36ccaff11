//! The pane registry: every live pane by id, and why the last panes that
//! left it are gone.
//!
//! The registry is only ever locked to look up, insert or remove a handle;
//! no spawn, signal or client I/O happens under it.

use crate::limits::ENDED_PANES_REMEMBERED;
use crate::pane::Pane;
use dashmap::DashMap;
use panehost_ipc::{ErrorBody, ErrorCode, PaneId};
use std::collections::VecDeque;
use std::hash::{BuildHasher, Hasher};
use std::sync::{Arc, Mutex};

/// Every pane this host owns.
#[derive(Debug, Default)]
pub struct Registry {
    panes: DashMap<PaneId, Arc<Pane>>,
    /// The panes that left most recently, oldest first, with why: a client
    /// that asks for one is told what became of it.
    ended: Mutex<VecDeque<(PaneId, String)>>,
}

impl Registry {
    /// An empty registry.
    pub fn new() -> Self {
        Registry::default()
    }

    /// A fresh id no pane has: `p` and eight hex digits.
    pub fn new_id(&self) -> PaneId {
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

    /// Adds a pane.
    pub fn insert(&self, pane: Arc<Pane>) {
        self.panes.insert(pane.info().id.clone(), pane);
    }

    /// The pane with this id.
    pub fn get(&self, id: &PaneId) -> Option<Arc<Pane>> {
        self.panes.get(id).map(|entry| Arc::clone(entry.value()))
    }

    /// Forgets a pane.
    pub fn remove(&self, id: &PaneId) -> Option<Arc<Pane>> {
        self.panes.remove(id).map(|(_, pane)| pane)
    }

    /// Forgets a pane, remembering why (`was closed`, `ended: ...`) for
    /// the next [`ENDED_PANES_REMEMBERED`] panes that leave.
    pub fn forget(&self, id: &PaneId, why: impl Into<String>) {
        self.panes.remove(id);
        let mut ended = self.ended.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if ended.len() >= ENDED_PANES_REMEMBERED {
            ended.pop_front();
        }
        ended.push_back((id.clone(), why.into()));
    }

    /// The pane with this id, or `UNKNOWN_PANE` saying what became of it
    /// when the host remembers.
    ///
    /// # Errors
    /// `UNKNOWN_PANE` when no pane has the id.
    pub fn find(&self, id: &PaneId) -> Result<Arc<Pane>, ErrorBody> {
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
    pub fn len(&self) -> usize {
        self.panes.len()
    }

    /// True when there is no pane.
    pub fn is_empty(&self) -> bool {
        self.panes.is_empty()
    }

    /// Every pane, oldest first.
    pub fn all(&self) -> Vec<Arc<Pane>> {
        let mut panes: Vec<Arc<Pane>> = self.panes.iter().map(|entry| Arc::clone(entry.value())).collect();
        panes.sort_by(|a, b| (a.info().created_at_ms, &a.info().id).cmp(&(b.info().created_at_ms, &b.info().id)));
        panes
    }
}
