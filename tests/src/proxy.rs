//! A small unix-socket proxy between a client and the host, whose
//! connections can be cut on demand: a client dropped mid-turn.

use std::path::{Path, PathBuf};
use tokio::net::{UnixListener, UnixStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// Forwards connections from its own socket to the host's.
#[derive(Debug)]
pub struct Proxy {
    /// The proxy's own socket, where clients connect instead of the host's.
    pub path: PathBuf,
    sever: watch::Sender<u64>,
    task: JoinHandle<()>,
}

impl Proxy {
    /// Listens on `path`, forwarding every connection to `target`.
    pub fn start(path: &Path, target: &Path) -> Result<Proxy, String> {
        let _ = std::fs::remove_file(path);
        let listener = UnixListener::bind(path).map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
        let (sever, severed) = watch::channel(0u64);
        let target = target.to_path_buf();
        let task = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let target = target.clone();
                let mut severed = severed.clone();
                severed.mark_unchanged();
                tokio::spawn(async move {
                    let Ok(mut outbound) = UnixStream::connect(&target).await else { return };
                    tokio::select! {
                        _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound) => {}
                        _ = severed.changed() => {}
                    }
                });
            }
        });
        Ok(Proxy { path: path.to_path_buf(), sever, task })
    }

    /// Drops every connection open through the proxy; new ones still work.
    pub fn sever_all(&self) {
        self.sever.send_modify(|count| *count += 1);
    }
}

impl Drop for Proxy {
    fn drop(&mut self) {
        self.sever_all();
        self.task.abort();
        let _ = std::fs::remove_file(&self.path);
    }
}
