//! Reading standard input on a plain thread.
//!
//! A blocking read cannot be cancelled; on its own thread it never holds up
//! the async runtime or the process's exit.

use std::io::{self, Read};
use tokio::sync::mpsc;

/// Chunks queued ahead of the reader.
const QUEUE: usize = 64;

/// Reads standard input in chunks as they arrive. The channel closes at end
/// of input; a read error is sent, then the channel closes.
pub(crate) fn spawn_chunk_reader() -> io::Result<mpsc::Receiver<io::Result<Vec<u8>>>> {
    spawn(|stdin, sender| {
        let mut buffer = vec![0u8; 16 * 1024];
        loop {
            match stdin.read(&mut buffer) {
                Ok(0) => return,
                Ok(len) => {
                    if sender.blocking_send(Ok(buffer[..len].to_vec())).is_err() {
                        return;
                    }
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => {
                    let _ = sender.blocking_send(Err(error));
                    return;
                }
            }
        }
    })
}

fn spawn(
    read: impl FnOnce(&mut io::StdinLock<'static>, mpsc::Sender<io::Result<Vec<u8>>>) + Send + 'static,
) -> io::Result<mpsc::Receiver<io::Result<Vec<u8>>>> {
    let (sender, receiver) = mpsc::channel(QUEUE);
    std::thread::Builder::new().name("stdin".into()).spawn(move || read(&mut io::stdin().lock(), sender))?;
    Ok(receiver)
}
