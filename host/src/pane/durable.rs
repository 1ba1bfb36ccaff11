//! What of a pane survives the host: its record (saved off the async
//! threads, removed on release), the reservation of offsets ahead of the
//! reader, and the end marker that gives a quiet pane its exact end.

use super::{lock, Pane};
use crate::limits::RESERVE_STEP;
use crate::store::records::{PaneRecord, RecordedScreen, RecordedTurn};
use panehost_ipc::ScreenSnapshot;
use std::io;

impl Pane {
    pub(super) fn set_recorded_screen(&self, screen: RecordedScreen) {
        lock(&self.record).screen = Some(screen);
    }

    /// A copy of the pane's record, with the turn open now.
    pub fn record(&self) -> PaneRecord {
        let open_turn = lock(&self.turns).open_turn();
        let mut record = lock(&self.record).clone();
        record.open_turn = open_turn.map(|(offset, submitted)| RecordedTurn { offset, submitted });
        record
    }

    /// The reader is about to take bytes from the PTY (the end marker says
    /// "open" from now on).
    pub(super) fn reading_begins(&self) {
        lock(&self.end_marker).before_read();
    }

    /// What the reader took is in the ring, or there was nothing.
    pub(super) fn reading_ends(&self) {
        lock(&self.end_marker).after_read();
    }

    /// The screen saved in the record shows the output up to `screen_at`:
    /// when that is all of it, the end marker holds it as the exact end.
    pub(super) fn record_saved_at(&self, screen_at: u64) {
        let mut marker = lock(&self.end_marker);
        // Under the marker's lock: a read that began before has set
        // `reading`, and one that begins after sees the exact end.
        if self.progress.end() == screen_at {
            marker.settled_at(screen_at);
        }
    }

    /// Where a subscription behind this host's first offset starts: the
    /// screen at that offset (for a pane taken back after a restart, while
    /// the ring still holds it), so that every byte this host holds
    /// follows. `None` otherwise.
    pub fn start_snapshot_before(&self, offset: u64) -> Option<ScreenSnapshot> {
        let mut start = lock(&self.start_snapshot);
        let snapshot = start.as_ref()?;
        if !self.ring_holds(snapshot.offset) {
            // The ring moved on; the screen is of no more use.
            *start = None;
            return None;
        }
        (offset < snapshot.offset).then(|| snapshot.clone())
    }

    /// Writes the pane's record (off the async threads), and waits until
    /// it is on the disk.
    pub(super) async fn save_record(&self) {
        self.write_record(true).await;
    }

    /// Writes the pane's record; `durable`: waits until it is on the disk.
    pub(super) async fn write_record(&self, durable: bool) {
        // Saves and the removal on release take turns: a save that finishes
        // after the release would bring a forgotten pane back.
        let released = self.record_released.lock().await;
        if *released {
            return;
        }
        let record = self.record();
        let records = self.records.clone();
        let saved =
            tokio::task::spawn_blocking(
                move || {
                    if durable {
                        records.save(&record)
                    } else {
                        records.save_unsynced(&record)
                    }
                },
            )
            .await;
        if let Ok(Err(err)) | Err(err) = saved.map_err(io::Error::other) {
            tracing::warn!(pane = %self.info.id, %err, "cannot write the pane record");
        }
    }

    /// Tells the keeper the pane is forgotten (it lets the pane go once
    /// its child has exited), and forgets the record.
    pub async fn release(&self) {
        if let Some(mut control) = self.keeper_control.lock().await.take() {
            use tokio::io::AsyncWriteExt;
            let _ = control.write_all(crate::keeper_wire::pane_lines::RELEASE).await;
        }
        {
            let mut released = self.record_released.lock().await;
            *released = true;
            let (records, id) = (self.records.clone(), self.info.id.clone());
            let _ = tokio::task::spawn_blocking(move || records.remove(&id)).await;
        }
    }

    /// Makes sure the reservation on disk covers the next `len` bytes,
    /// before the reader takes them from the PTY. A host killed after a read
    /// loses the bytes it held; a restarted host continues offsets from the
    /// reservation, so clients are told of those bytes as a gap, and no
    /// offset is ever given twice.
    pub(super) async fn reserve_ahead(&self, len: usize) {
        let needed = self.progress.end() + len as u64;
        if needed > lock(&self.record).reserved_offset {
            lock(&self.record).reserved_offset = needed + RESERVE_STEP;
            self.save_record().await;
        }
    }
}
