//! The reader: PTY master to ring, never waiting for a client.

use super::Pane;
use crate::limits::PTY_READ_CHUNK;
use std::io;
use std::sync::Arc;

/// Reads the PTY until the process side closes (EOF or EIO) or the pane is
/// closed, appending every byte to the ring.
pub(super) async fn run(pane: Arc<Pane>) {
    let mut buffer = vec![0u8; PTY_READ_CHUNK];
    let mut progress = pane.progress();
    loop {
        let mut guard = tokio::select! {
            ready = pane.io.readable() => match ready {
                Ok(guard) => guard,
                Err(err) => {
                    tracing::warn!(pane = %pane.info.id, %err, "PTY master not pollable");
                    break;
                }
            },
            _ = progress.wait_for(|progress| progress.closed) => break,
        };
        match guard.try_io(|fd| rustix::io::read(fd.get_ref(), &mut buffer[..]).map_err(io::Error::from)) {
            Ok(Ok(0)) => break,
            Ok(Ok(read)) => pane.accept_output(&buffer[..read]).await,
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
