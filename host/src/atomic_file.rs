//! Writing a file so that a crash leaves the old contents or the new, never
//! a torn mix: a temporary file beside it, fsync, rename over it, then
//! fsync of the directory so the rename itself is durable.

use std::io::{self, Write};
use std::path::Path;

/// Replaces `dir/name` with `bytes` atomically.
///
/// # Errors
/// Fails when the temporary file cannot be written, synced or renamed.
pub fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    let temporary = dir.join(format!(".{name}.tmp"));
    let mut file = std::fs::OpenOptions::new().write(true).create(true).truncate(true).open(&temporary)?;
    file.write_all(bytes)?;
    file.sync_all()?;
    drop(file);
    std::fs::rename(&temporary, dir.join(name))?;
    std::fs::File::open(dir)?.sync_all()
}
