//! What the host keeps on disk: pane records, completion receipts, written
//! atomically in private directories, and the lock that makes the state
//! directory one host's.

pub mod atomic_file;
pub mod damaged_record;
pub mod host_lock;
pub mod json_files;
pub mod private_dir;
pub mod receipts;
pub mod records;
