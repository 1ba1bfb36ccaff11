//! What the host keeps on disk: pane records, completion receipts, written
//! atomically in private directories.

pub mod atomic_file;
pub mod json_files;
pub mod private_dir;
pub mod receipts;
pub mod records;
