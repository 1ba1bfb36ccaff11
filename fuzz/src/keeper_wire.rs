//! Both ends of the keeper's wire (`keeper_wire/`): the pane requests a
//! keeper reads on its stdin (framing, words, the request's options, and
//! that what parses encodes back to the same request), the lines it reads
//! on a pane's connection, and the greeting, `exited` line and answers the
//! host reads from it. Whatever
//! arrives, and however it is split across reads, nothing panics, no
//! request over the limit is buffered, and a request names a socket in
//! the keepers' directory and a size within the bounds.

use panehost_host::keeper_wire::answer::Answer;
use panehost_host::keeper_wire::pane_lines::{parse_exited, parse_greeting, RequestReader};
use panehost_host::keeper_wire::pane_request::{words, PaneRequest, PaneRequestReader, MAX_PANE_REQUEST};
use std::path::Path;

/// The first byte says where the stream is split into reads; the rest is
/// the stream.
pub fn keeper_wire(data: &[u8]) {
    let Some((&split, stream)) = data.split_first() else { return };
    let sockets = Path::new("/run/keepers");
    let mut requests = PaneRequestReader::default();
    for chunk in stream.chunks(usize::from(split).max(1)) {
        let (bodies, too_long) = requests.feed(chunk);
        for body in bodies {
            assert!(body.len() <= MAX_PANE_REQUEST);
            if let Ok(parts) = words(&body) {
                if let Ok(request) = PaneRequest::parse(parts.into_iter(), sockets) {
                    assert_eq!(request.socket.parent(), Some(sockets), "a socket outside the directory");
                    assert!((2..=1000).contains(&request.cols) && (2..=1000).contains(&request.rows));
                    // What the keeper reads, the host would have written
                    // the same way.
                    if let Ok(encoded) = request.encode() {
                        let (again, _) = PaneRequestReader::default().feed(&encoded);
                        let reread = PaneRequest::parse(words(&again[0]).unwrap().into_iter(), sockets);
                        assert_eq!(reread.as_ref(), Ok(&request));
                    }
                }
            }
        }
        if too_long.is_some() {
            break;
        }
    }
    let mut lines = RequestReader::default();
    for chunk in stream.chunks(usize::from(split).max(1)) {
        if lines.feed(chunk).is_err() {
            break;
        }
    }
    for line in stream.split(|&byte| byte == b'\n') {
        let _ = parse_greeting(line);
        let _ = parse_exited(&String::from_utf8_lossy(line));
        if let Ok(answer) = Answer::parse(line) {
            // An answer the host reads is one a keeper could have written.
            assert_eq!(Answer::parse(answer.line().trim_end().as_bytes()).as_ref(), Ok(&answer));
        }
    }
}
