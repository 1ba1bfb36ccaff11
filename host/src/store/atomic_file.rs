//! Writing a file so that a crash leaves the old contents or the new, never
//! a torn mix: a temporary file beside it, fsync, rename over it, then
//! fsync of the directory so the rename itself is durable.
//!
//! [`write_replacing`] does the same without the two fsyncs: the new
//! contents replace the old for every later reader, and survive the
//! writing process's crash, but a machine that loses power may come back
//! with either, or with a file the reader must refuse (empty, say).

use std::io::{self, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// Replaces `dir/name` with `bytes` atomically; the file is readable and
/// writable by its owner only.
///
/// # Errors
/// Fails when the temporary file cannot be written, synced or renamed.
pub fn write_atomically(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    write(dir, name, bytes, true)
}

/// Replaces `dir/name` with `bytes` for every later reader, without waiting
/// for the disk (see the module's documentation).
///
/// # Errors
/// Fails when the temporary file cannot be written or renamed.
pub fn write_replacing(dir: &Path, name: &str, bytes: &[u8]) -> io::Result<()> {
    write(dir, name, bytes, false)
}

fn write(dir: &Path, name: &str, bytes: &[u8], durable: bool) -> io::Result<()> {
    let temporary = dir.join(format!(".{name}.tmp"));
    // Private to the user, whatever the umask: records hold notify tokens.
    let mut file = std::fs::OpenOptions::new().write(true).create(true).truncate(true).mode(0o600).open(&temporary)?;
    // A temporary file left by an earlier host keeps its own mode: set it.
    file.set_permissions(std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
    file.write_all(bytes)?;
    if durable {
        file.sync_all()?;
    }
    drop(file);
    std::fs::rename(&temporary, dir.join(name))?;
    if durable {
        std::fs::File::open(dir)?.sync_all()?;
    }
    Ok(())
}
