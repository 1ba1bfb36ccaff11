//! Writing to standard output, where a closed pipe is a normal end.

use std::io::{self, Write};

/// Writes `bytes` to standard output and flushes. A closed pipe (the reader
/// went away, as with `| head`) is not an error: it returns `Ok(false)`.
pub(crate) fn write_stdout(bytes: &[u8]) -> io::Result<bool> {
    let mut stdout = io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(true),
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(false),
        Err(error) => Err(error),
    }
}

/// Writes one line of text to standard output; see [`write_stdout`].
pub(crate) fn print_line(line: &str) -> io::Result<bool> {
    let mut text = String::with_capacity(line.len() + 1);
    text.push_str(line);
    text.push('\n');
    write_stdout(text.as_bytes())
}
