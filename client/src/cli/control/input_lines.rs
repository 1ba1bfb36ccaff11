//! Standard input as lines, each read incrementally and kept whole only up
//! to a bound: a longer line is skipped up to its newline and reported by
//! its length and first bytes, never held in memory.

use std::io::{self, BufRead};
use tokio::sync::mpsc;

/// Lines read ahead of the bridge. Each may hold up to the line bound, so
/// the queue is short: the bridge's memory stays a few lines' worth.
const LINES_QUEUED: usize = 2;

/// Bytes kept from the start of an overlong line, to find the id it begins
/// with (`{"id":18446744073709551615,` is 28 bytes).
pub(super) const OVERLONG_HEAD_KEPT: usize = 64;

/// One line of input, without its line feed.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum InputLine {
    /// A line within the bound.
    Line(Vec<u8>),
    /// A line longer than the bound: its length, and its first
    /// [`OVERLONG_HEAD_KEPT`] bytes.
    Overlong {
        /// Its length in bytes.
        length: u64,
        /// Its first bytes.
        head: Vec<u8>,
    },
}

/// Reads standard input on a plain thread, line by line, keeping lines of
/// at most `max_len` bytes. The channel closes at end of input; a read
/// error is sent, then the channel closes.
pub(super) fn spawn(max_len: usize) -> io::Result<mpsc::Receiver<io::Result<InputLine>>> {
    let (sender, receiver) = mpsc::channel(LINES_QUEUED);
    std::thread::Builder::new().name("stdin".into()).spawn(move || {
        let mut stdin = io::stdin().lock();
        loop {
            match read_line(&mut stdin, max_len) {
                Ok(None) => return,
                Ok(Some(line)) => {
                    if sender.blocking_send(Ok(line)).is_err() {
                        return;
                    }
                }
                Err(error) => {
                    let _ = sender.blocking_send(Err(error));
                    return;
                }
            }
        }
    })?;
    Ok(receiver)
}

/// The next line of `input` (the last may lack its line feed); `None` at
/// the end. A line of more than `max_len` bytes is read to its end but
/// only its first bytes are kept.
///
/// # Errors
/// Fails when `input` does (an interrupted read is retried).
pub(super) fn read_line(input: &mut impl BufRead, max_len: usize) -> io::Result<Option<InputLine>> {
    let mut line = Vec::new();
    // Some(length so far) once the line is known to be overlong.
    let mut overlong: Option<u64> = None;
    loop {
        let available = match input.fill_buf() {
            Ok(available) => available,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => continue,
            Err(error) => return Err(error),
        };
        if available.is_empty() {
            return Ok(match overlong {
                Some(length) => Some(InputLine::Overlong { length, head: line }),
                None if line.is_empty() => None,
                None => Some(InputLine::Line(line)),
            });
        }
        let newline = available.iter().position(|&byte| byte == b'\n');
        let part = &available[..newline.unwrap_or(available.len())];
        if overlong.is_none() && line.len() + part.len() > max_len {
            overlong = Some(line.len() as u64);
            line.truncate(OVERLONG_HEAD_KEPT);
            line.shrink_to_fit();
        }
        match overlong.as_mut() {
            Some(length) => {
                *length += part.len() as u64;
                let wanted = OVERLONG_HEAD_KEPT.saturating_sub(line.len()).min(part.len());
                line.extend_from_slice(&part[..wanted]);
            }
            None => line.extend_from_slice(part),
        }
        let used = part.len() + usize::from(newline.is_some());
        input.consume(used);
        if newline.is_some() {
            return Ok(Some(match overlong {
                Some(length) => InputLine::Overlong { length, head: line },
                None => InputLine::Line(line),
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], max_len: usize, buffer: usize) -> Vec<InputLine> {
        let mut reader = io::BufReader::with_capacity(buffer, input);
        std::iter::from_fn(|| read_line(&mut reader, max_len).unwrap()).collect()
    }

    #[test]
    fn lines_are_split_at_line_feeds_and_the_last_may_lack_one() {
        for buffer in [1, 3, 64] {
            let read = lines(b"one\n\ntwo\r\nthree", 10, buffer);
            let expected = [&b"one"[..], b"", b"two\r", b"three"].map(|line| InputLine::Line(line.to_vec()));
            assert_eq!(read, expected, "buffer {buffer}");
            assert!(lines(b"", 10, buffer).is_empty());
            assert_eq!(lines(b"\n", 10, buffer), [InputLine::Line(Vec::new())]);
        }
    }

    #[test]
    fn a_line_of_the_bound_is_kept_and_one_byte_more_is_not() {
        for buffer in [1, 7, 4096] {
            let exact = vec![b'x'; 100];
            let mut input = exact.clone();
            input.push(b'\n');
            input.extend(vec![b'y'; 101]);
            input.extend(b"\nafter\n");
            let read = lines(&input, 100, buffer);
            assert_eq!(read[0], InputLine::Line(exact.clone()), "buffer {buffer}");
            assert_eq!(read[1], InputLine::Overlong { length: 101, head: vec![b'y'; OVERLONG_HEAD_KEPT] });
            assert_eq!(read[2], InputLine::Line(b"after".to_vec()), "the next line is read as usual");
        }
    }

    #[test]
    fn an_overlong_line_keeps_only_its_head_even_without_a_line_feed() {
        let mut input = br#"{"id":7,"request":"#.to_vec();
        input.extend(vec![b'z'; 1_000_000]);
        let read = lines(&input, 1000, 8192);
        let InputLine::Overlong { length, head } = &read[0] else { panic!("{read:?}") };
        assert_eq!(*length, input.len() as u64);
        assert_eq!(head[..], input[..OVERLONG_HEAD_KEPT]);
        assert_eq!(read.len(), 1);
        // Shorter than the head kept: all of it.
        let read = lines(b"abcdef", 3, 2);
        assert_eq!(read, [InputLine::Overlong { length: 6, head: b"abcdef".to_vec() }]);
    }
}
