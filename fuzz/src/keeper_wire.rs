//! Both ends of the keeper's wire: the pane requests a keeper reads on its
//! stdin (framing, words, the request's options), the lines it reads on a
//! pane's connection, and the greeting the host reads from it. Whatever
//! arrives, and however it is split across reads, nothing panics, no
//! request over the limit is buffered, and a request names a socket in
//! the keepers' directory and a size within the bounds.

use panehost_host::keeper::args::parse_pane;
use panehost_host::keeper::pane_requests::{words, PaneRequestReader, MAX_PANE_REQUEST};
use panehost_host::keeper::protocol::RequestReader;
use panehost_host::pane::keeper::parse_greeting;
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
            if let Ok(words) = words(&body) {
                if let Ok(request) = parse_pane(words.into_iter(), sockets) {
                    assert_eq!(request.socket.parent(), Some(sockets), "a socket outside the directory");
                    assert!((2..=1000).contains(&request.cols) && (2..=1000).contains(&request.rows));
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
    }
}
