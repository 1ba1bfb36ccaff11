//! The pane's record writer: one task at a time writes the pane's record
//! to the disk, and removes it for good on release.
//!
//! Whoever wants the record on the disk asks, and waits until an ask at
//! least as new has been carried out; nobody holds a lock while a record
//! is written. The first ask while no writer runs starts one (a task of
//! its own, so no caller's cancellation can leave it half done); it writes
//! until no ask is left, then ends: an idle pane has no writer. The writer
//! takes the record when it writes it, so what lands is never older than
//! what was asked for, and asks made while it wrote are answered by one
//! write. After the release nothing is written: later asks are answered at
//! once.

use super::{lock, Pane};
use crate::store::records::{PaneRecord, RecordStore};
use panehost_ipc::PaneId;
use std::io;
use std::sync::{Arc, Mutex, Weak};
use tokio::sync::watch;

/// What [`RecordWriter::done`] holds once the record is removed for good.
const RELEASED: u64 = u64::MAX;

/// The asks, and whether a writer runs.
#[derive(Debug, Default)]
struct Asks {
    /// The pane, once it exists (see [`RecordWriter::start`]).
    pane: Option<Weak<Pane>>,
    /// How many asks there have been; each is numbered by it.
    asked: u64,
    /// The newest ask carried out.
    carried_out: u64,
    /// Whether an ask not carried out yet wants the record on the disk.
    durable: bool,
    /// Whether the release was asked for.
    release: bool,
    /// Whether a writer runs.
    writing: bool,
}

/// A pane's record writer (see the module's documentation).
#[derive(Debug)]
pub(super) struct RecordWriter {
    asks: Mutex<Asks>,
    /// The newest ask carried out, for those who wait; [`RELEASED`] once
    /// the record is removed.
    done: watch::Sender<u64>,
    store: RecordStore,
    id: PaneId,
}

impl RecordWriter {
    /// A writer of `pane`'s record into `store`. Asks made before
    /// [`start`](Self::start) wait for it.
    pub(super) fn new(store: RecordStore, id: PaneId) -> RecordWriter {
        RecordWriter { asks: Mutex::new(Asks::default()), done: watch::Sender::new(0), store, id }
    }

    /// The pane exists: asks are carried out from now on (those made
    /// before too).
    pub(super) fn start(&self, pane: Weak<Pane>) {
        let mut asks = lock(&self.asks);
        asks.pane = Some(pane);
        self.start_writer(&mut asks);
    }

    /// Has the record written as it is now (or later); `durable`: returns
    /// once it is on the disk. Nothing is written after the release.
    pub(super) async fn write(&self, durable: bool) {
        self.ask(durable, false).await;
    }

    /// Has the record removed for good; returns once it is.
    pub(super) async fn release(&self) {
        self.ask(false, true).await;
    }

    async fn ask(&self, durable: bool, release: bool) {
        let mut done = self.done.subscribe();
        let number = {
            let mut asks = lock(&self.asks);
            if *done.borrow() == RELEASED {
                return;
            }
            asks.asked += 1;
            asks.durable |= durable;
            asks.release |= release;
            self.start_writer(&mut asks);
            asks.asked
        };
        // An error: the writer is gone with the pane.
        let _ = done.wait_for(|done| *done >= number).await;
    }

    /// Starts a writer, under the asks' lock, when asks wait and none runs.
    fn start_writer(&self, asks: &mut Asks) {
        if asks.writing || asks.asked == asks.carried_out {
            return;
        }
        let Some(pane) = asks.pane.as_ref().and_then(Weak::upgrade) else { return };
        asks.writing = true;
        tokio::spawn(write_while_asked(pane));
    }
}

/// The writer: carries out the asks until none is left, or the release.
async fn write_while_asked(pane: Arc<Pane>) {
    let writer = &pane.durable.writer;
    loop {
        let (number, durable, release) = {
            let mut asks = lock(&writer.asks);
            if asks.asked == asks.carried_out {
                asks.writing = false;
                return;
            }
            (asks.asked, std::mem::take(&mut asks.durable), asks.release)
        };
        if release {
            let (store, id) = (writer.store.clone(), writer.id.clone());
            let _ = tokio::task::spawn_blocking(move || store.remove(&id)).await;
            // The writer stays marked as running: none starts again.
            lock(&writer.asks).carried_out = RELEASED;
            writer.done.send_replace(RELEASED);
            return;
        }
        let record = pane.record();
        let store = writer.store.clone();
        let saved = tokio::task::spawn_blocking(move || save(&store, &record, durable)).await;
        if let Ok(Err(err)) | Err(err) = saved.map_err(io::Error::other) {
            tracing::warn!(pane = %writer.id, %err, "cannot write the pane record");
        }
        lock(&writer.asks).carried_out = number;
        writer.done.send_replace(number);
    }
}

/// Writes `record`; `durable`: until it is on the disk.
fn save(store: &RecordStore, record: &PaneRecord, durable: bool) -> io::Result<()> {
    if durable {
        store.save(record)
    } else {
        store.save_unsynced(record)
    }
}
