//! A pane record read back from disk: a record can never crash the host.
//! Whatever the file holds, reading it gives an error or a record whose
//! every field a restore acts on is within range; and what is left of it
//! when it cannot be read gives fields within range, or none.

use panehost_host::store::damaged_record::DamagedRecord;
use panehost_host::store::records::{PaneRecord, MAX_RECORDED_COUNT};
use std::path::Path;

/// The bytes are the file's contents.
pub fn pane_record(data: &[u8]) {
    let keepers = Path::new("/state/panes/keepers");
    if let Ok((record, _repairs)) = PaneRecord::from_bytes(data, keepers) {
        assert!(record.size.is_valid(), "size {} was let through", record.size);
        assert!(record.start.size.is_none_or(|size| size.is_valid()));
        assert!(record.reserved_offset <= MAX_RECORDED_COUNT && record.generation <= MAX_RECORDED_COUNT);
        assert_eq!(record.keeper_socket.parent(), Some(keepers));
        assert!(record.check(keepers).is_ok(), "a repaired record checks");
    }
    let left = DamagedRecord::read(&String::from_utf8_lossy(data));
    assert!(left.runtime.is_none_or(|runtime| !runtime.is_empty() && runtime.len() <= 256 && !runtime.contains('\\')));
    assert!(left.generation.is_none_or(|generation| (1..=MAX_RECORDED_COUNT).contains(&generation)));
}
