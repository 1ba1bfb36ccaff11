//! The reader: PTY master to ring, never waiting for a client.

use super::Pane;
use crate::limits::{FLOOD_READ, PTY_READ_CHUNK, PTY_READ_CHUNK_IDLE, PTY_READ_SHRINK_AFTER};
use std::io;
use std::sync::Arc;

/// The reader's buffer: small while the pane is idle (most panes, most of
/// the time), growing while reads fill it up to [`PTY_READ_CHUNK`], and
/// given back once the pane has been quiet for [`PTY_READ_SHRINK_AFTER`].
///
/// It is never larger than the ring: a read must fit in the ring next to
/// the bytes the terminal model has still to parse, or the reader would
/// wait for the model to parse past the end of the output.
struct ReadBuffer {
    bytes: Vec<u8>,
    /// The size it starts at and shrinks back to.
    idle: usize,
    /// The size it grows to at most.
    most: usize,
}

impl ReadBuffer {
    fn new(ring_capacity: usize) -> ReadBuffer {
        let most = PTY_READ_CHUNK.min(ring_capacity).max(1);
        let idle = PTY_READ_CHUNK_IDLE.min(most);
        ReadBuffer { bytes: vec![0; idle], idle, most }
    }

    fn is_grown(&self) -> bool {
        self.bytes.len() > self.idle
    }

    /// After a read of `read` bytes: a full buffer means more is waiting.
    fn after_read(&mut self, read: usize) {
        if read == self.bytes.len() && self.bytes.len() < self.most {
            self.bytes = vec![0; (self.bytes.len() * 4).min(self.most)];
        }
    }

    fn shrink(&mut self) {
        self.bytes = vec![0; self.idle];
    }
}

/// Reads the PTY until the process side closes (EOF or EIO) or the pane is
/// closed, appending every byte to the ring.
pub(super) async fn run(pane: Arc<Pane>) {
    let mut buffer = ReadBuffer::new(pane.output.capacity());
    let mut progress = pane.progress();
    loop {
        // Offsets for what the next read may bring are reserved on disk
        // first (see `Pane::reserve_ahead`).
        pane.reserve_ahead(buffer.bytes.len()).await;
        let readable = async {
            if buffer.is_grown() {
                // `None`: quiet for that long.
                tokio::time::timeout(PTY_READ_SHRINK_AFTER, pane.io.readable()).await.ok()
            } else {
                Some(pane.io.readable().await)
            }
        };
        let mut guard = tokio::select! {
            ready = readable => match ready {
                Some(Ok(guard)) => guard,
                Some(Err(err)) => {
                    tracing::warn!(pane = %pane.info.id, %err, "PTY master not pollable");
                    break;
                }
                None => {
                    buffer.shrink();
                    continue;
                }
            },
            _ = progress.until(|progress| progress.closed) => break,
        };
        pane.reading_begins(buffer.bytes.len());
        let read = guard.try_io(|fd| rustix::io::read(fd.get_ref(), &mut buffer.bytes[..]).map_err(io::Error::from));
        if !matches!(read, Ok(Ok(n)) if n > 0) {
            pane.reading_ends();
        }
        match read {
            Ok(Ok(0)) => break,
            Ok(Ok(read)) => {
                if read < FLOOD_READ && read < buffer.bytes.len() {
                    // A short read (one that left room in the buffer) took
                    // all there was: wait for the next
                    // readiness event rather than read again only to be
                    // told EAGAIN (one system call less per keystroke's
                    // echo). Output that arrived after this read has its
                    // own event, which this does not clear. After a large
                    // read the output floods: more is most likely there
                    // already, and reading again at once spares a trip
                    // through the reactor (an epoll wait, and often a
                    // worker thread's sleep and wake).
                    guard.clear_ready();
                }
                pane.accept_output(&buffer.bytes[..read]).await;
                pane.reading_ends();
                buffer.after_read(read);
            }
            Ok(Err(err)) if err.kind() == io::ErrorKind::Interrupted => {}
            // EIO: every process holding the terminal's other side is gone.
            Ok(Err(err)) if err.raw_os_error() == Some(rustix::io::Errno::IO.raw_os_error()) => break,
            Ok(Err(err)) => {
                tracing::warn!(pane = %pane.info.id, %err, "PTY read failed");
                break;
            }
            Err(_would_block) => {}
        }
    }
    tracing::debug!(pane = %pane.info.id, "reader finished");
    pane.finish_reading();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_buffer_grows_to_the_chunk_and_never_past_the_ring() {
        let mut buffer = ReadBuffer::new(crate::limits::DEFAULT_RING_BYTES);
        assert_eq!(buffer.bytes.len(), PTY_READ_CHUNK_IDLE);
        for _ in 0..8 {
            let full = buffer.bytes.len();
            buffer.after_read(full);
        }
        assert_eq!(buffer.bytes.len(), PTY_READ_CHUNK);
        buffer.shrink();
        assert_eq!(buffer.bytes.len(), PTY_READ_CHUNK_IDLE);

        for ring in [1, 1000, PTY_READ_CHUNK_IDLE, 10_000] {
            let mut buffer = ReadBuffer::new(ring);
            assert!(buffer.bytes.len() <= ring);
            for _ in 0..8 {
                let full = buffer.bytes.len();
                buffer.after_read(full);
                assert!(buffer.bytes.len() <= ring, "a ring of {ring} bytes");
            }
            assert_eq!(buffer.bytes.len(), ring);
        }
    }

    use crate::pane::fake_keeper::{all_output, behaviour, exit_of, FakeKeeper, SIZE};
    use crate::pane::PaneLimits;
    use panehost_adapters::CompletionSignal;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn output_read_from_the_pty_is_in_the_ring_whole_and_in_order() {
        let script = "i=0; while [ $i -lt 2000 ]; do echo \"line $i\"; i=$((i+1)); done";
        let (_keeper, pane) = FakeKeeper::pane(
            &["/bin/sh", "-c", script],
            SIZE,
            behaviour(CompletionSignal::Unobserved),
            PaneLimits::default(),
        )
        .await;
        // The exit is recorded once the reader has taken the last byte.
        exit_of(&pane).await;
        // The terminal turns each newline into CR LF.
        let expected: String = (0..2000).map(|i| format!("line {i}\r\n")).collect();
        let output = String::from_utf8(all_output(&pane)).expect("text");
        assert!(
            output == expected,
            "the ring holds {} bytes, not the {} written in order",
            output.len(),
            expected.len()
        );
        assert_eq!(pane.current_progress().end, expected.len() as u64);
    }
}
