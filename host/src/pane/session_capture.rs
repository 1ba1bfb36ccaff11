//! Capturing a pane's session reference from its CLI's session store, for
//! runtimes that report it neither in their output nor in a hook payload.
//!
//! The recorder asks before each save of the pane's record; the store is
//! listed on a blocking thread. Until a reference is found it is listed at
//! every save; after that at most every [`limits::SESSION_STORE_RESCAN`] (a CLI may
//! start a new session inside the same pane, so the capture goes on).

use crate::limits;
use panehost_adapters::reference_pattern::ReferencePattern;
use panehost_adapters::session_store::{FoundSession, SessionStore};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::{Instant, SystemTime};

/// Where to look, since when, and when a session was last found.
#[derive(Debug)]
pub(crate) struct SessionCapture {
    store: SessionStore,
    location: PathBuf,
    since: SystemTime,
    /// What a session reference of this runtime looks like.
    pattern: ReferencePattern,
    last_found: Mutex<Option<Instant>>,
}

impl SessionCapture {
    /// A capture for a process started `since`, whose environment locates
    /// the store at `location`, taking entries whose reference `pattern`
    /// accepts.
    pub(crate) fn new(
        store: SessionStore,
        location: PathBuf,
        since: SystemTime,
        pattern: ReferencePattern,
    ) -> SessionCapture {
        SessionCapture { store, location, since, pattern, last_found: Mutex::new(None) }
    }

    /// The newest session written since the process started; `None` when
    /// there is none, or when one was found less than [`limits::SESSION_STORE_RESCAN`]
    /// ago.
    pub(crate) async fn scan(&self) -> Option<FoundSession> {
        let found_recently =
            |last: &Option<Instant>| last.is_some_and(|at| at.elapsed() < limits::SESSION_STORE_RESCAN);
        if found_recently(&self.last_found.lock().unwrap_or_else(|poisoned| poisoned.into_inner())) {
            return None;
        }
        let (store, location, since, pattern) =
            (self.store.clone(), self.location.clone(), self.since, self.pattern.clone());
        let found = tokio::task::spawn_blocking(move || {
            store.newest_since(&location, since, &|reference| pattern.accepts(reference))
        })
        .await
        .ok()
        .flatten();
        if found.is_some() {
            *self.last_found.lock().unwrap_or_else(|poisoned| poisoned.into_inner()) = Some(Instant::now());
        }
        found
    }
}
