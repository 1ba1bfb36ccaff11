//! What of a pane survives the host: its record (saved off the async
//! threads, removed on release), the reservation of offsets ahead of the
//! reader, and the end marker that gives a quiet pane its exact end.
//!
//! [`DurableRecord`] owns them; the record's lock is a leaf (no method
//! calls out while holding it); the end marker's is held while the caller
//! reads the pane's end (from the progress, a leaf), so that the end it
//! marks is exact. The record reaches the disk through the pane's record
//! writer (`record_writer.rs`), the one task that writes and removes it:
//! no lock is held while it does.

use super::end_marker::EndMarker;
use super::record_writer::RecordWriter;
use super::{lock, Pane};
use crate::limits::RESERVE_STEP;
use crate::store::records::{PaneRecord, RecordStore, RecordedScreen, RecordedTurn};
use panehost_ipc::{ExitStatus, Size};
use std::sync::Mutex;

/// A pane's record, where it is written, and its end marker.
#[derive(Debug)]
pub(super) struct DurableRecord {
    record: Mutex<PaneRecord>,
    /// The pane's exact output end on disk, while it is quiet.
    end_marker: Mutex<EndMarker>,
    /// Writes the record, and removes it on release.
    pub(super) writer: RecordWriter,
}

impl DurableRecord {
    /// Keeps `record` in `store`, with its end marker (made by
    /// [`EndMarker::create`]). Its writer starts once the pane exists
    /// ([`RecordWriter::start`]).
    pub(super) fn new(record: PaneRecord, end_marker: EndMarker, store: RecordStore) -> Self {
        let writer = RecordWriter::new(store, record.id.clone());
        DurableRecord { record: Mutex::new(record), end_marker: Mutex::new(end_marker), writer }
    }

    /// A copy of the record.
    pub(super) fn copy(&self) -> PaneRecord {
        lock(&self.record).clone()
    }

    pub(super) fn set_screen(&self, screen: RecordedScreen) {
        lock(&self.record).screen = Some(screen);
    }

    pub(super) fn set_size(&self, size: Size) {
        lock(&self.record).size = size;
    }

    pub(super) fn set_exit(&self, status: ExitStatus) {
        lock(&self.record).exit = Some(status);
    }

    pub(super) fn set_closing(&self) {
        lock(&self.record).closing = true;
    }

    pub(super) fn set_typing(&self, typing: bool) {
        lock(&self.record).typing = typing;
    }

    /// Records the session's native reference; false when it was already
    /// the one recorded.
    pub(super) fn set_native_reference(&self, reference: &str) -> bool {
        let mut record = lock(&self.record);
        if record.native_reference.as_deref() == Some(reference) {
            return false;
        }
        record.native_reference = Some(reference.to_owned());
        true
    }

    /// The offset up to which output may be read before the record must
    /// reserve more.
    pub(super) fn reserved_offset(&self) -> u64 {
        lock(&self.record).reserved_offset
    }

    /// Reserves offsets up to past `needed`, when the reservation falls
    /// short of it; true when it did (and the record must be saved).
    fn reserve(&self, needed: u64) -> bool {
        let mut record = lock(&self.record);
        if needed <= record.reserved_offset {
            return false;
        }
        record.reserved_offset = needed + RESERVE_STEP;
        true
    }

    /// The reader is about to take bytes (the end marker says "open").
    fn reading_begins(&self) {
        lock(&self.end_marker).before_read();
    }

    /// What the reader took is in the ring, or there was nothing.
    fn reading_ends(&self) {
        lock(&self.end_marker).after_read();
    }

    /// The saved screen shows the output up to `screen_at`: when `end` (read
    /// under the marker's lock, so that a read that began before has set
    /// the marker open and one that begins after sees the exact end) says
    /// that is all of it, the marker holds it as the exact end.
    fn saved_at(&self, screen_at: u64, end: impl FnOnce() -> u64) {
        let mut marker = lock(&self.end_marker);
        if end() == screen_at {
            marker.settled_at(screen_at);
        }
    }
}

impl Pane {
    pub(super) fn set_recorded_screen(&self, screen: RecordedScreen) {
        self.durable.set_screen(screen);
    }

    /// A copy of the pane's record, with the turn open now.
    pub fn record(&self) -> PaneRecord {
        let (open_turn, activity) = {
            let turns = lock(&self.turns);
            (turns.open_turn(), turns.activity())
        };
        let mut record = self.durable.copy();
        record.open_turn = open_turn.map(|(offset, submitted)| RecordedTurn { offset, submitted });
        record.activity = Some(activity.to_owned());
        record
    }

    /// The reader is about to take at most `bytes` from the PTY (the end
    /// marker says "open" from now on, and the ring how many bytes a host
    /// killed before they are in it would lose).
    pub(super) fn reading_begins(&self, bytes: usize) {
        self.durable.reading_begins();
        self.output.set_reading(bytes);
    }

    /// What the reader took is in the ring, or there was nothing.
    pub(super) fn reading_ends(&self) {
        self.output.set_reading(0);
        self.durable.reading_ends();
    }

    /// The screen saved in the record shows the output up to `screen_at`:
    /// when that is all of it, the end marker holds it as the exact end.
    pub(super) fn record_saved_at(&self, screen_at: u64) {
        self.durable.saved_at(screen_at, || self.progress.end());
    }

    /// Writes the pane's record (off the async threads), and waits until
    /// it is on the disk.
    pub(super) async fn save_record(&self) {
        self.write_record(true).await;
    }

    /// Writes the pane's record; `durable`: waits until it is on the disk.
    pub(super) async fn write_record(&self, durable: bool) {
        self.durable.writer.write(durable).await;
    }

    /// Tells the keeper the pane is forgotten (it lets the pane go once
    /// its child has exited), and forgets the record.
    pub async fn release(&self) {
        // Taken out first: no lock is held while the line is written.
        let control = lock(&self.keeper_control).take();
        if let Some(mut control) = control {
            use tokio::io::AsyncWriteExt;
            let _ = control.write_all(crate::keeper_wire::pane_lines::RELEASE).await;
        }
        self.durable.writer.release().await;
    }

    /// Makes sure the reservation on disk covers the next `len` bytes,
    /// before the reader takes them from the PTY. A host killed after a read
    /// loses the bytes it held; a restarted host continues offsets from the
    /// reservation, so clients are told of those bytes as a gap, and no
    /// offset is ever given twice.
    pub(super) async fn reserve_ahead(&self, len: usize) {
        if self.durable.reserve(self.progress.end() + len as u64) {
            self.save_record().await;
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::limits::RESERVE_STEP;
    use crate::pane::end_marker::EndMarker;
    use crate::pane::fake_keeper::{
        eventually, exit_of, output_with, record_on_disk, shell_pane, KeeperNews, SIZE, WAIT,
    };
    use panehost_ipc::turn::activity;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_first_record_is_on_disk_when_the_pane_is_made() {
        let (keeper, pane) = shell_pane("read -r x").await;
        let record = record_on_disk(&keeper).expect("the record is written with the start");
        assert_eq!(record.id, pane.info().id);
        assert_eq!(record.pid, keeper.pid);
        assert_eq!((record.generation, record.size, record.exit.clone()), (1, SIZE, None));
        assert_eq!(record.reserved_offset, RESERVE_STEP, "offsets reserved ahead of the first read");
        assert_eq!(record.activity.as_deref(), Some(activity::UNKNOWN));
    }

    /// The reader never takes bytes past the reservation on disk.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_reservation_on_disk_stays_ahead_of_the_output() {
        let total = 3 * RESERVE_STEP / 2;
        let (keeper, pane) =
            shell_pane(&format!("yes 0123456789abcdefghijklmnopqrstuvwxyz | head -c {total}; read -r x")).await;
        let mut progress = pane.progress();
        let outrun = tokio::time::timeout(WAIT, async {
            loop {
                let end = progress.latest().end;
                let reserved = record_on_disk(&keeper).expect("a record").reserved_offset;
                assert!(reserved >= end, "the output reached {end}, the disk reserves up to {reserved}");
                if end >= total {
                    return reserved;
                }
                progress.changed().await.expect("the pane is gone");
            }
        })
        .await
        .expect("the output arrives in time");
        assert!(outrun > RESERVE_STEP, "the reservation grew with the output");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_exit_is_recorded() {
        // It exits once the pane runs: an exit recorded before the
        // recorder's task first runs is saved at the end of its first
        // round (2 s) instead of at once.
        let (keeper, pane) = shell_pane("read -r x; exit 7").await;
        let turn = pane.join_input_line().wait().await;
        pane.write_input(&turn, b"\r", WAIT).await.expect("the input is written");
        drop(turn);
        exit_of(&pane).await;
        eventually("the exit saved in the record", || {
            record_on_disk(&keeper).is_some_and(|record| record.exit.as_ref().map(|exit| exit.code) == Some(7))
        })
        .await;
    }

    /// Once the output is quiet, the saved screen shows all of it, and
    /// the end marker holds its exact end.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_quiet_panes_exact_end_is_recorded() {
        // The output comes once the pane runs (see above).
        let (keeper, pane) = shell_pane("read -r x; echo some output; read -r y").await;
        let turn = pane.join_input_line().wait().await;
        pane.write_input(&turn, b"\r", WAIT).await.expect("the input is written");
        drop(turn);
        output_with(&pane, "some output").await;
        let end = pane.current_progress().end;
        let marker = keeper.records.end_marker_path(&pane.info().id);
        eventually("the exact end in the end marker", || EndMarker::read_exact(&marker) == Some(end)).await;
        let record = record_on_disk(&keeper).expect("a record");
        assert_eq!(record.screen.map(|screen| screen.offset), Some(end));
    }

    /// Writes asked for at once land in some order; once each has been
    /// answered, the record on the disk is the pane's record as it is
    /// then, never an older one.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn writes_racing_each_other_leave_the_newest_record_on_disk() {
        let (keeper, pane) = shell_pane("read -r x").await;
        let writers: Vec<_> = (0..32u16)
            .map(|round| {
                let pane = std::sync::Arc::clone(&pane);
                tokio::spawn(async move {
                    pane.durable.set_size(panehost_ipc::Size { cols: 40 + round, rows: 10 + round % 7 });
                    pane.write_record(round % 3 == 0).await;
                })
            })
            .collect();
        for writer in writers {
            writer.await.expect("the writer task");
        }
        let on_disk = record_on_disk(&keeper).expect("a record");
        assert_eq!(on_disk.size, pane.record().size);
        // Released while writes are asked for: each is answered, and none
        // lands after the removal.
        let racing: Vec<_> = (0..8)
            .map(|_| {
                let pane = std::sync::Arc::clone(&pane);
                tokio::spawn(async move { pane.write_record(true).await })
            })
            .collect();
        pane.release().await;
        for writer in racing {
            tokio::time::timeout(WAIT, writer).await.expect("answered").expect("the writer task");
        }
        assert!(record_on_disk(&keeper).is_none(), "a write landed after the release");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_release_tells_the_keeper_and_forgets_the_record() {
        let (keeper, pane) = shell_pane("exit 0").await;
        exit_of(&pane).await;
        assert!(matches!(keeper.next_news(), Some(KeeperNews::Exited(_))));
        pane.release().await;
        assert_eq!(keeper.next_news(), Some(KeeperNews::Line("release".to_owned())));
        assert!(record_on_disk(&keeper).is_none(), "the record is gone");
        assert!(!keeper.records.ring_path(&pane.info().id).exists(), "the ring file is gone");
        // No save lands after the release.
        pane.save_record().await;
        assert!(record_on_disk(&keeper).is_none(), "a save after the release wrote the record again");
    }
}
