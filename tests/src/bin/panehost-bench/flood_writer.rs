//! The flooding pane's program: `panehost-bench flood-writer FILE COUNTER`
//! writes FILE to its standard output over and over, 64 KiB a write, until
//! it is killed or a write fails (its terminal is gone). After every write
//! it stores how many bytes it has written in all in COUNTER (eight bytes,
//! little-endian, at the start of the file), so that the bench can tell how
//! much of the flood each system took.
//!
//! One process for the whole flood, so that no system pays for a `cat`
//! started per copy, and its pid is the pane's: tmux, the host or the bench
//! ends it with the pane.

use crate::BenchResult;
use std::io::{Read, Write};
use std::os::fd::AsFd;
use std::os::unix::fs::FileExt;
use std::path::Path;

/// The first argument that runs the bench as the flood writer.
pub const MODE: &str = "flood-writer";

/// The most bytes one write hands the terminal.
const WRITE_BYTES: usize = 64 * 1024;

/// The command line of a flood writer that prints `file` and counts in
/// `counter`.
pub fn command(bench_exe: &Path, file: &Path, counter: &Path) -> Vec<String> {
    [bench_exe, Path::new(MODE), file, counter].iter().map(|p| p.display().to_string()).collect()
}

/// Runs the flood writer with `args` (FILE COUNTER); returns only when a
/// write fails.
pub fn run(args: &[String]) -> BenchResult<()> {
    let [file, counter] = args else {
        return Err(format!("usage: panehost-bench {MODE} FILE COUNTER").into());
    };
    let contents = std::fs::read(file)?;
    if contents.is_empty() {
        return Err(format!("{file} is empty").into());
    }
    let counter = std::fs::OpenOptions::new().create(true).truncate(true).write(true).open(counter)?;
    counter.write_all_at(&0u64.to_le_bytes(), 0)?;
    let mut out = std::fs::File::from(std::io::stdout().as_fd().try_clone_to_owned()?);
    let mut written = 0u64;
    loop {
        for chunk in contents.chunks(WRITE_BYTES) {
            out.write_all(chunk)?;
            written += chunk.len() as u64;
            counter.write_all_at(&written.to_le_bytes(), 0)?;
        }
    }
}

/// How many bytes the flood writer counting in `counter` has written (0
/// when it has not started).
pub fn bytes_written(counter: &Path) -> u64 {
    let mut bytes = [0u8; 8];
    match std::fs::File::open(counter).and_then(|mut file| file.read_exact(&mut bytes)) {
        Ok(()) => u64::from_le_bytes(bytes),
        Err(_) => 0,
    }
}
