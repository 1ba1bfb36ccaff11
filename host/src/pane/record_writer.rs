//! The pane's record writer: the one task that writes the pane's record to
//! the disk, and removes it for good on release.
//!
//! Whoever wants the record on the disk asks the writer and waits for its
//! answer; nobody holds a lock while a record is written. The writer takes
//! the record when it writes it, so what lands is never older than what a
//! caller asked for, and asks that queued while it wrote are answered by
//! one write. After the release nothing is written: the asks queued with
//! it are answered without a write, and later ones at once.

use super::Pane;
use crate::store::records::{PaneRecord, RecordStore};
use panehost_ipc::PaneId;
use std::io;
use std::sync::Weak;
use tokio::sync::{mpsc, oneshot};

/// An ask of the writer, answered on `done` once carried out.
#[derive(Debug)]
enum Ask {
    /// Write the record as it is then; `durable`: until it is on the disk.
    Write { durable: bool, done: oneshot::Sender<()> },
    /// Remove the record for good.
    Release { done: oneshot::Sender<()> },
}

/// The pane's side: asks the writer, and waits for its answer.
///
/// Each caller waits for the answer to its ask, so the queue holds at
/// most one ask per waiting caller.
#[derive(Debug)]
pub(super) struct RecordWriter {
    asks: mpsc::UnboundedSender<Ask>,
}

/// What the writer task starts from (see [`run`]).
#[derive(Debug)]
pub(super) struct WriterStart {
    asks: mpsc::UnboundedReceiver<Ask>,
    store: RecordStore,
    pane: PaneId,
}

impl RecordWriter {
    /// A writer of `pane`'s record into `store`, and what its task starts
    /// from once the pane exists. Asks made before the task runs wait for
    /// it.
    pub(super) fn new(store: RecordStore, pane: PaneId) -> (RecordWriter, WriterStart) {
        let (asks, queue) = mpsc::unbounded_channel();
        (RecordWriter { asks }, WriterStart { asks: queue, store, pane })
    }

    /// Has the record written as it is now (or later); `durable`: returns
    /// once it is on the disk. Nothing is written after the release.
    pub(super) async fn write(&self, durable: bool) {
        self.ask(|done| Ask::Write { durable, done }).await;
    }

    /// Has the record removed for good; returns once it is.
    pub(super) async fn release(&self) {
        self.ask(|done| Ask::Release { done }).await;
    }

    async fn ask(&self, ask: impl FnOnce(oneshot::Sender<()>) -> Ask) {
        let (done, answer) = oneshot::channel();
        if self.asks.send(ask(done)).is_ok() {
            // An error: the writer is gone (released, or the pane dropped).
            let _ = answer.await;
        }
    }
}

/// The writer task of the pane `pane` points to: until the release, or
/// until the pane is gone.
pub(super) async fn run(start: WriterStart, pane: Weak<Pane>) {
    let WriterStart { mut asks, store, pane: id } = start;
    while let Some(first) = asks.recv().await {
        let mut batch = vec![first];
        while let Ok(more) = asks.try_recv() {
            batch.push(more);
        }
        if batch.iter().any(|ask| matches!(ask, Ask::Release { .. })) {
            let removing = store.clone();
            let removed = id.clone();
            let _ = tokio::task::spawn_blocking(move || removing.remove(&removed)).await;
            // No ask is carried out from now on; those already queued are
            // answered (dropping them) as the queue empties.
            asks.close();
            while asks.recv().await.is_some() {}
            return;
        }
        let durable = batch.iter().any(|ask| matches!(ask, Ask::Write { durable: true, .. }));
        let Some(record) = pane.upgrade().map(|pane| pane.record()) else { return };
        let saving = store.clone();
        let saved = tokio::task::spawn_blocking(move || save(&saving, &record, durable)).await;
        if let Ok(Err(err)) | Err(err) = saved.map_err(io::Error::other) {
            tracing::warn!(pane = %id, %err, "cannot write the pane record");
        }
        for ask in batch {
            let (Ask::Write { done, .. } | Ask::Release { done }) = ask;
            let _ = done.send(());
        }
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
