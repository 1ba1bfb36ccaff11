//! Writing to standard output and standard error, where a closed pipe is a
//! normal end.
//!
//! Everything printed goes through [`printable`](super::printable) first,
//! whatever it holds of what a host said; only [`write_stdout`] writes
//! bytes as they are, for a pane's own output (`attach`, `events`).

use super::printable;
use serde_json::Value;
use std::io::{self, Write};

/// Writes `bytes` to standard output as they are and flushes: for a pane's
/// output, which is meant for the terminal. A closed pipe (the reader went
/// away, as with `| head`) is not an error: it returns `Ok(false)`.
pub(crate) fn write_stdout(bytes: &[u8]) -> io::Result<bool> {
    let mut stdout = io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => Ok(true),
        Err(error) if error.kind() == io::ErrorKind::BrokenPipe => Ok(false),
        Err(error) => Err(error),
    }
}

/// Writes `text` (its own newlines kept, every other control character
/// escaped) to standard output; see [`write_stdout`].
pub(crate) fn print_text(text: &str) -> io::Result<bool> {
    write_stdout(printable::text(text).as_bytes())
}

/// Writes `text` as one line: every control character in it escaped,
/// newlines too ([`printable::line`]); see [`write_stdout`].
pub(crate) fn print_line(text: &str) -> io::Result<bool> {
    write_with_newline(&printable::line(text))
}

/// Writes `text` and a newline, as [`print_text`] does: for text of
/// several lines (a screen, the lines a turn added).
pub(crate) fn print_lines(text: &str) -> io::Result<bool> {
    write_with_newline(&printable::text(text))
}

/// Writes `value` as one line of JSON ([`printable::json`]).
pub(crate) fn print_json(value: &Value) -> io::Result<bool> {
    write_with_newline(&printable::json(value))
}

/// Writes JSON text made elsewhere (pretty-printed, say) and a newline,
/// every control character in it escaped as JSON escapes it
/// ([`printable::json_text`]).
pub(crate) fn print_json_text(json: &str) -> io::Result<bool> {
    write_with_newline(&printable::json_text(json))
}

/// Writes `text` and a newline to standard error, as [`print_text`] does.
pub(crate) fn eprint_lines(text: &str) {
    eprintln!("{}", printable::text(text));
}

/// Writes `shown`, already printable, and a newline.
fn write_with_newline(shown: &str) -> io::Result<bool> {
    let mut line = String::with_capacity(shown.len() + 1);
    line.push_str(shown);
    line.push('\n');
    write_stdout(line.as_bytes())
}
