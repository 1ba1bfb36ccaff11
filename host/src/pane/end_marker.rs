//! The end marker: a pane's exact output end, on disk, while it is quiet.
//!
//! A restarted host continues a pane's offsets from a point no client can
//! have passed. The record's reserved offset is such a point, but it lies
//! up to 1 MiB ahead, so every restart would tell clients of a gap, even
//! for a pane that printed nothing. The end marker (`<id>.end` beside the
//! record) says more when it can: once the pane's output has settled and
//! its screen is saved, it holds the exact end ("exact E"); before the
//! reader takes the next bytes from the PTY, it says "open" again. So when
//! it reads "exact E" after a crash, no byte at E or beyond was ever read,
//! and the restarted host continues from E with no gap.
//!
//! The file is 9 bytes: `E` and the offset (u64, little-endian) when exact;
//! anything else (`O`, or an empty file) when open. Each change is one
//! `pwrite` of 9 bytes, which a killed process either made or did not. It
//! is not synced: a crash of the machine ends the keepers too, and a pane
//! restored by native resume starts a new generation, whose offsets no
//! client compares with the old ones.

use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;

const EXACT: u8 = b'E';
const OPEN: u8 = b'O';
const MARKER_LEN: usize = 9;

/// The marker of one pane, and what the reader is doing.
#[derive(Debug)]
pub(crate) struct EndMarker {
    file: Option<File>,
    /// The exact end the file says, or `None` when it says "open".
    exact: Option<u64>,
    /// True from just before the reader takes bytes until they are in the
    /// ring (their offsets then show in the pane's end).
    reading: bool,
}

impl EndMarker {
    /// The marker at `path`, created (0600) or reset to "open". Without a
    /// file (it cannot be created) the marker is always open: restarts
    /// then use the reservation, as before.
    pub(crate) fn create(path: &Path) -> EndMarker {
        let file =
            std::fs::OpenOptions::new().read(true).write(true).create(true).truncate(true).mode(0o600).open(path);
        let file = match file {
            Ok(file) => Some(file),
            Err(err) => {
                tracing::warn!(path = %path.display(), %err, "cannot create the end marker; restarts will show a gap");
                None
            }
        };
        let mut marker = EndMarker { file, exact: None, reading: false };
        marker.write(OPEN, 0);
        marker
    }

    /// The exact end the marker at `path` holds, if it says one.
    pub(crate) fn read_exact(path: &Path) -> Option<u64> {
        let bytes = std::fs::read(path).ok()?;
        match bytes.as_slice() {
            [EXACT, offset @ ..] if offset.len() == MARKER_LEN - 1 => Some(u64::from_le_bytes(offset.try_into().ok()?)),
            _ => None,
        }
    }

    /// The reader is about to take bytes from the PTY: the marker says
    /// "open" from now on.
    pub(crate) fn before_read(&mut self) {
        self.reading = true;
        if self.exact.is_some() {
            self.write(OPEN, 0);
        }
    }

    /// What the reader took is in the ring (or there was nothing).
    pub(crate) fn after_read(&mut self) {
        self.reading = false;
    }

    /// The pane's output ends at `end` and the saved screen shows all of
    /// it: the marker says so, unless the reader is taking bytes.
    pub(crate) fn settled_at(&mut self, end: u64) {
        if self.reading || self.exact == Some(end) {
            return;
        }
        self.write(EXACT, end);
    }

    fn write(&mut self, tag: u8, offset: u64) {
        let Some(file) = &self.file else { return };
        let mut bytes = [0u8; MARKER_LEN];
        bytes[0] = tag;
        bytes[1..].copy_from_slice(&offset.to_le_bytes());
        let written: io::Result<()> = file.write_all_at(&bytes, 0);
        match written {
            Ok(()) => self.exact = (tag == EXACT).then_some(offset),
            Err(err) => {
                // Whatever the file says now, an empty one says "open".
                tracing::warn!(%err, "cannot write the end marker; emptying it");
                if file.set_len(0).is_err() {
                    tracing::error!("cannot empty the end marker either; no longer using it");
                    self.file = None;
                }
                self.exact = None;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_only_while_settled_and_open_before_every_read() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p1.end");
        let mut marker = EndMarker::create(&path);
        assert_eq!(EndMarker::read_exact(&path), None);
        marker.settled_at(1135);
        assert_eq!(EndMarker::read_exact(&path), Some(1135));
        marker.before_read();
        assert_eq!(EndMarker::read_exact(&path), None, "open before the bytes are taken");
        marker.settled_at(2000);
        assert_eq!(EndMarker::read_exact(&path), None, "not while the reader takes bytes");
        marker.after_read();
        marker.settled_at(2000);
        assert_eq!(EndMarker::read_exact(&path), Some(2000));
        // A marker made anew for the same pane starts open.
        drop(marker);
        let _again = EndMarker::create(&path);
        assert_eq!(EndMarker::read_exact(&path), None);
    }

    #[test]
    fn anything_but_an_exact_marker_reads_as_open() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p1.end");
        for bytes in [&b""[..], b"E123", b"O\0\0\0\0\0\0\0\0", b"E\x01\0\0\0\0\0\0\0\0extra"] {
            std::fs::write(&path, bytes).unwrap();
            assert_eq!(EndMarker::read_exact(&path), None, "{bytes:?}");
        }
        assert_eq!(EndMarker::read_exact(&dir.path().join("missing.end")), None);
    }
}
