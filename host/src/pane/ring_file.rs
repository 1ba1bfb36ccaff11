//! Where the output ring keeps its bytes: a shared mapping of a file in
//! the state directory (`panes/<id>.ring`), so that what a pane printed
//! outlives the host's process.
//!
//! Bytes written to a shared file mapping are in the kernel's page cache
//! the moment they are copied there; a host killed with SIGKILL (or one
//! that panics) leaves them behind, and the next host maps the same file
//! and finds every byte the old one had read, at the same offsets. A crash
//! of the machine is another matter: nothing is synced, so after a reboot
//! the file is not trusted (the pane comes back by native resume, in a new
//! generation, with a new ring).
//!
//! The file is a page of header, then the ring's `capacity` bytes:
//!
//! ```text
//! 0      8         16      24     32        40          48        56          4096
//! |magic |capacity |first  |end   |reading  |hole from  |hole to  |  (zeros)  | data
//! ```
//!
//! all little-endian `u64`s; the byte at offset `o` is at `4096 + o %
//! capacity`. `first` is the first offset the ring took (where it began),
//! `end` one past the newest byte: the ring holds `min(end - first,
//! capacity)` bytes, ending at `end`. `end` is written after the bytes it
//! covers. `reading` is, while the host reads the PTY, the most bytes that
//! read may take (its buffer's size), until they are covered by `end`; 0
//! otherwise. A host killed in between lost them with its memory, and the
//! next host leaves a hole of that size for them, `hole from` to `hole
//! to`, offsets at which no bytes are held (0 and 0: none). The file is
//! created sparse: a pane that prints little costs little disk and memory.
//!
//! Where no file can be made (the disk is full, say), the same layout
//! lives in anonymous memory, which the host's end takes with it.

use std::fs::File;
use std::io;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;
use std::ptr::NonNull;

/// The header's size: one page, so the data starts page-aligned.
const HEADER_LEN: usize = 4096;

/// What a ring file starts with.
const MAGIC: &[u8; 8] = b"PHRING01";

/// The header's fields, by their index (8 bytes each).
const CAPACITY: usize = 1;
const FIRST: usize = 2;
const END: usize = 3;
const READING: usize = 4;
const HOLE_FROM: usize = 5;
const HOLE_TO: usize = 6;

/// The header and data of one ring, mapped.
#[derive(Debug)]
pub(super) struct RingMapping {
    /// The start of the mapping (the header).
    base: NonNull<u8>,
    /// The mapping's length: the header and `capacity` bytes.
    len: usize,
}

// Safety: the mapping is owned by this value alone (no other handle to its
// memory exists in this process), and every access goes through `&self` or
// `&mut self`, which the pane's output lock serialises.
unsafe impl Send for RingMapping {}
// Safety: as above; `&self` methods only read.
unsafe impl Sync for RingMapping {}

impl RingMapping {
    /// A new, empty ring of `capacity` bytes whose offsets begin at `at`:
    /// in a file at `path` (replacing any there), else in anonymous memory.
    ///
    /// # Errors
    /// Fails only when not even anonymous memory can be mapped.
    pub(super) fn create(path: Option<&Path>, capacity: usize, at: u64) -> io::Result<RingMapping> {
        let len = HEADER_LEN.checked_add(capacity).ok_or_else(|| io::Error::other("ring too large"))?;
        let mapped = match path.map(|path| create_file(path, len)) {
            Some(Ok(file)) => map_file(&file, len).inspect_err(|err| {
                tracing::warn!(%err, "cannot map the ring file; the ring lives in memory only");
            }),
            Some(Err(err)) => {
                tracing::warn!(%err, "cannot create the ring file; the ring lives in memory only");
                Err(err)
            }
            None => Err(io::Error::other("no ring file")),
        };
        let mut mapping = match mapped {
            Ok(mapping) => mapping,
            Err(_) => map_anonymous(len)?,
        };
        mapping.header_mut()[..8].copy_from_slice(MAGIC);
        mapping.set_field(CAPACITY, capacity as u64);
        mapping.set_field(FIRST, at);
        mapping.set_field(END, at);
        Ok(mapping)
    }

    /// The ring a host left in the file at `path`, when it is one: the
    /// magic, a capacity from 1 to `max_capacity` that the file is long
    /// enough for, and `first <= end <= max_offset`. `None` otherwise (no
    /// file, another kind of file, or fields out of range).
    pub(super) fn reopen(path: &Path, max_capacity: usize, max_offset: u64) -> Option<RingMapping> {
        let file = std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(path)
            .ok()?;
        let meta = file.metadata().ok()?;
        if !meta.is_file() || meta.len() < HEADER_LEN as u64 {
            return None;
        }
        let mut header = [0u8; 56];
        rustix::io::pread(&file, &mut header, 0).ok().filter(|read| *read == header.len())?;
        let field = |index: usize| u64::from_le_bytes(header[index * 8..index * 8 + 8].try_into().unwrap_or_default());
        let capacity = usize::try_from(field(CAPACITY)).ok()?;
        let (first, end) = (field(FIRST), field(END));
        let (hole_from, hole_to) = (field(HOLE_FROM), field(HOLE_TO));
        let len = HEADER_LEN.checked_add(capacity)?;
        let fits = meta.len() >= len as u64;
        let hole_fits = hole_from <= hole_to && hole_to <= end;
        if &header[..8] != MAGIC
            || capacity == 0
            || capacity > max_capacity
            || !fits
            || first > end
            || end > max_offset
            || !hole_fits
        {
            return None;
        }
        map_file(&file, len).ok()
    }

    /// The ring's capacity.
    pub(super) fn capacity(&self) -> usize {
        self.len - HEADER_LEN
    }

    /// The first offset the ring took.
    pub(super) fn first(&self) -> u64 {
        self.field(FIRST)
    }

    /// One past the newest byte.
    pub(super) fn end(&self) -> u64 {
        self.field(END)
    }

    /// Sets the end, once the bytes it covers are in place.
    pub(super) fn set_end(&mut self, end: u64) {
        self.set_field(END, end);
    }

    /// The most bytes a read in flight may have taken from the PTY that
    /// the end does not cover; 0 when none was.
    pub(super) fn reading(&self) -> u64 {
        self.field(READING)
    }

    /// Notes that a read of at most `bytes` is in flight (0: none).
    pub(super) fn set_reading(&mut self, bytes: u64) {
        self.set_field(READING, bytes);
    }

    /// The offsets at which no bytes are held, if any: `(from, to)`.
    pub(super) fn hole(&self) -> Option<(u64, u64)> {
        let (from, to) = (self.field(HOLE_FROM), self.field(HOLE_TO));
        (from < to).then_some((from, to))
    }

    /// Sets the ring's bounds and hole (none: `None`), after a restart.
    pub(super) fn set_bounds(&mut self, first: u64, end: u64, hole: Option<(u64, u64)>) {
        let (from, to) = hole.unwrap_or((0, 0));
        self.set_field(HOLE_FROM, from);
        self.set_field(HOLE_TO, to);
        self.set_field(FIRST, first);
        self.set_field(END, end);
    }

    /// The data area.
    pub(super) fn data(&self) -> &[u8] {
        // Safety: the mapping is `len` bytes long and lives as long as
        // `self`; the data area is its part after the header.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr().add(HEADER_LEN), self.len - HEADER_LEN) }
    }

    /// The data area, to write.
    pub(super) fn data_mut(&mut self) -> &mut [u8] {
        // Safety: as in `data`, and `&mut self` makes this the only
        // reference to the mapping's memory.
        unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr().add(HEADER_LEN), self.len - HEADER_LEN) }
    }

    fn header(&self) -> &[u8] {
        // Safety: the header is the mapping's first HEADER_LEN bytes.
        unsafe { std::slice::from_raw_parts(self.base.as_ptr(), HEADER_LEN) }
    }

    fn header_mut(&mut self) -> &mut [u8] {
        // Safety: as in `header`, with `&mut self` the only reference.
        unsafe { std::slice::from_raw_parts_mut(self.base.as_ptr(), HEADER_LEN) }
    }

    fn field(&self, index: usize) -> u64 {
        let mut bytes = [0u8; 8];
        bytes.copy_from_slice(&self.header()[index * 8..index * 8 + 8]);
        u64::from_le_bytes(bytes)
    }

    fn set_field(&mut self, index: usize, value: u64) {
        self.header_mut()[index * 8..index * 8 + 8].copy_from_slice(&value.to_le_bytes());
    }
}

impl Drop for RingMapping {
    fn drop(&mut self) {
        // Safety: `base` and `len` are the mapping made in `map_*`, which
        // nothing refers to once `self` is gone.
        let _ = unsafe { rustix::mm::munmap(self.base.as_ptr().cast(), self.len) };
    }
}

/// A new sparse file of `len` bytes at `path` (0600, no link followed,
/// replacing one there).
fn create_file(path: &Path, len: usize) -> io::Result<File> {
    let _ = std::fs::remove_file(path);
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
        .open(path)?;
    file.set_len(len as u64)?;
    Ok(file)
}

fn map_file(file: &File, len: usize) -> io::Result<RingMapping> {
    use rustix::mm::{MapFlags, ProtFlags};
    // Safety: a new mapping chosen by the kernel (no address given) of a
    // file at least `len` bytes long (created or checked so by the caller)
    // in the host's private state directory, whose one host holds the
    // directory's lock: nothing else truncates it while it is mapped.
    let ptr = unsafe {
        rustix::mm::mmap(std::ptr::null_mut(), len, ProtFlags::READ | ProtFlags::WRITE, MapFlags::SHARED, file, 0)
    }?;
    let base = NonNull::new(ptr.cast()).ok_or_else(|| io::Error::other("mmap gave a null address"))?;
    Ok(RingMapping { base, len })
}

fn map_anonymous(len: usize) -> io::Result<RingMapping> {
    use rustix::mm::{MapFlags, ProtFlags};
    // Safety: a new private anonymous mapping chosen by the kernel.
    let ptr = unsafe {
        rustix::mm::mmap_anonymous(std::ptr::null_mut(), len, ProtFlags::READ | ProtFlags::WRITE, MapFlags::PRIVATE)
    }?;
    let base = NonNull::new(ptr.cast()).ok_or_else(|| io::Error::other("mmap gave a null address"))?;
    Ok(RingMapping { base, len })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_one_mapping_wrote_another_finds() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("p00000001.ring");
        let mut ring = RingMapping::create(Some(&path), 16, 100).unwrap();
        ring.data_mut()[..5].copy_from_slice(b"hello");
        ring.set_end(105);
        // A second mapping of the file, as the next host makes (the first
        // is still there, as a killed host's pages are).
        let again = RingMapping::reopen(&path, 16, 1 << 40).expect("the ring is there");
        assert_eq!((again.capacity(), again.first(), again.end()), (16, 100, 105));
        assert_eq!(&again.data()[..5], b"hello");
        drop(ring);
        // The file is sparse: it costs next to no disk.
        use std::os::unix::fs::MetadataExt;
        assert!(std::fs::metadata(&path).unwrap().blocks() <= 16, "sparse");
    }

    #[test]
    fn anything_but_a_ring_in_range_is_not_reopened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("ring");
        assert!(RingMapping::reopen(&path, 16, 1000).is_none(), "no file");
        std::fs::write(&path, b"not a ring").unwrap();
        assert!(RingMapping::reopen(&path, 16, 1000).is_none(), "too short");
        drop(RingMapping::create(Some(&path), 16, 500).unwrap());
        assert!(RingMapping::reopen(&path, 8, 1000).is_none(), "capacity over the bound");
        assert!(RingMapping::reopen(&path, 16, 400).is_none(), "end past the reservation");
        let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();
        file.set_len(HEADER_LEN as u64 + 8).unwrap();
        assert!(RingMapping::reopen(&path, 16, 1000).is_none(), "shorter than its capacity");
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&path, &link).unwrap();
        assert!(RingMapping::reopen(&link, 16, 1000).is_none(), "a link is not followed");
    }

    #[test]
    fn without_a_file_the_ring_lives_in_memory() {
        let ring = RingMapping::create(None, 8, 7).unwrap();
        assert_eq!((ring.capacity(), ring.first(), ring.end()), (8, 7, 7));
        let dir = tempfile::tempdir().unwrap();
        let unwritable = dir.path().join("missing").join("ring");
        let mut ring = RingMapping::create(Some(&unwritable), 8, 0).unwrap();
        ring.data_mut()[0] = b'x';
        assert_eq!(ring.data()[0], b'x');
        assert!(!unwritable.exists());
    }
}
