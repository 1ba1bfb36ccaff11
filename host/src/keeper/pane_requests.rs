//! Pane requests on the keeper's stdin: each a 4-byte big-endian length,
//! then that many bytes of words, every word ended by a NUL byte.

use std::ffi::OsString;
use std::os::unix::ffi::OsStringExt;

/// The largest pane request the keeper reads (its words and their NULs).
pub const MAX_PANE_REQUEST: usize = 1 << 20;

/// The length prefix announced more than [`MAX_PANE_REQUEST`] bytes: the
/// stream cannot be followed past it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestTooLong(pub usize);

/// Splits what stdin delivers into pane requests.
#[derive(Debug, Default)]
pub struct PaneRequestReader {
    pending: Vec<u8>,
}

impl PaneRequestReader {
    /// Adds bytes read from stdin and returns the bodies of the requests
    /// they complete, in order, and then, if a length prefix is over the
    /// limit, that length: nothing after it can be read.
    pub fn feed(&mut self, bytes: &[u8]) -> (Vec<Vec<u8>>, Option<RequestTooLong>) {
        self.pending.extend_from_slice(bytes);
        let mut bodies = Vec::new();
        let mut start = 0;
        while let Some(prefix) = self.pending.get(start..start + 4) {
            let length = u32::from_be_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
            if length > MAX_PANE_REQUEST {
                self.pending = Vec::new();
                return (bodies, Some(RequestTooLong(length)));
            }
            let Some(body) = self.pending.get(start + 4..start + 4 + length) else {
                break;
            };
            bodies.push(body.to_vec());
            start += 4 + length;
        }
        self.pending.drain(..start);
        if self.pending.is_empty() {
            // A request can be large; an idle keeper keeps no buffer.
            self.pending = Vec::new();
        }
        (bodies, None)
    }
}

/// The words of a request's body; every word must end with a NUL.
pub fn words(body: &[u8]) -> Result<Vec<OsString>, String> {
    let Some(words) = body.strip_suffix(b"\0") else {
        return Err("a pane request must end with a NUL byte".to_owned());
    };
    Ok(words.split(|&byte| byte == 0).map(|word| OsString::from_vec(word.to_vec())).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(body: &[u8]) -> Vec<u8> {
        let mut framed = u32::try_from(body.len()).unwrap().to_be_bytes().to_vec();
        framed.extend_from_slice(body);
        framed
    }

    #[test]
    fn splits_requests_across_reads() {
        let mut reader = PaneRequestReader::default();
        let stream = [frame(b"a\0bc\0"), frame(b""), frame(b"d\0")].concat();
        let (first, rest) = stream.split_at(6);
        assert_eq!(reader.feed(first), (vec![], None));
        assert_eq!(reader.feed(rest), (vec![b"a\0bc\0".to_vec(), vec![], b"d\0".to_vec()], None));
        assert!(reader.pending.is_empty());
    }

    #[test]
    fn stops_at_a_length_over_the_limit_after_the_requests_before_it() {
        let mut reader = PaneRequestReader::default();
        let too_long = u32::try_from(MAX_PANE_REQUEST + 1).unwrap().to_be_bytes();
        let stream = [frame(b"a\0"), too_long.to_vec(), frame(b"b\0")].concat();
        assert_eq!(reader.feed(&stream), (vec![b"a\0".to_vec()], Some(RequestTooLong(MAX_PANE_REQUEST + 1))));
    }

    #[test]
    fn words_end_with_nul() {
        assert_eq!(words(b"--cols\080\0\0").unwrap(), vec![OsString::from("--cols"), "80".into(), "".into()]);
        assert!(words(b"--cols\080").is_err());
        assert_eq!(words(b"").unwrap_err(), "a pane request must end with a NUL byte");
    }
}
