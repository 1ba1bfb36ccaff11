//! Connections to a host that may be killed and restarted under them: the
//! host's life (is it up, how many times was it killed), connecting across
//! a restart, and telling a connection lost to the restart from one the
//! host broke.

use crate::ledger::Verdict;
use panehost_client::{Client, ClientError, ClientOptions};
use panehost_ipc::ErrorBody;
use std::path::PathBuf;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// How long a connection attempt (connect and handshake) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a task waits for a killed host to be back.
pub const HOST_BACK_TIMEOUT: Duration = Duration::from_secs(120);

/// Whether the host is up, and how many times it was killed.
#[derive(Debug)]
pub struct HostLife {
    /// The socket the host (every incarnation) listens on.
    pub socket: PathBuf,
    kills: AtomicU64,
    up: watch::Sender<bool>,
    open_connections: Arc<AtomicI64>,
}

impl HostLife {
    /// A host that is up at `socket`.
    pub fn new(socket: PathBuf) -> HostLife {
        HostLife {
            socket,
            kills: AtomicU64::new(0),
            up: watch::Sender::new(true),
            open_connections: Arc::new(AtomicI64::new(0)),
        }
    }

    /// How many times the host was killed so far.
    pub fn kills(&self) -> u64 {
        self.kills.load(Ordering::SeqCst)
    }

    /// True while the host is up (not between a kill and its restart).
    pub fn is_up(&self) -> bool {
        *self.up.borrow()
    }

    /// Called just before the host is killed: it is down from now on, and
    /// every connection opened before now may be lost.
    pub fn going_down(&self) {
        self.up.send_replace(false);
        self.kills.fetch_add(1, Ordering::SeqCst);
    }

    /// Called once the restarted host listens.
    pub fn back_up(&self) {
        self.up.send_replace(true);
    }

    /// Waits until the host is up; false when it is not within `timeout`.
    pub async fn wait_up(&self, timeout: Duration) -> bool {
        let mut up = self.up.subscribe();
        tokio::time::timeout(timeout, async { up.wait_for(|up| *up).await.is_ok() }).await.unwrap_or(false)
    }

    /// Connections the program holds open to the host now.
    pub fn open_connections(&self) -> u64 {
        self.open_connections.load(Ordering::SeqCst).max(0) as u64
    }

    /// Counts one connection as open until the guard is dropped (for
    /// connections not made through [`HostLife::connect`]).
    pub fn hold_connection(&self) -> ConnectionGuard {
        self.open_connections.fetch_add(1, Ordering::SeqCst);
        ConnectionGuard(Arc::clone(&self.open_connections))
    }

    /// Connects and completes the handshake, waiting for the host while it
    /// is down. Fails when the host refuses or does not answer while it is
    /// up and was not killed meanwhile.
    pub async fn connect(&self, options: &ClientOptions) -> Result<Link, String> {
        let deadline = Instant::now() + HOST_BACK_TIMEOUT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if !self.wait_up(left).await {
                return Err(format!("the host was not back up within {HOST_BACK_TIMEOUT:?}"));
            }
            let epoch = self.kills();
            if !self.is_up() {
                continue;
            }
            let attempt = tokio::time::timeout(CONNECT_TIMEOUT, Client::connect(&self.socket, options)).await;
            let killed_meanwhile = self.kills() != epoch || !self.is_up();
            match attempt {
                Ok(Ok(client)) => return Ok(Link { client, epoch, _open: self.hold_connection() }),
                Ok(Err(_)) | Err(_) if killed_meanwhile => continue,
                Ok(Err(error)) => return Err(format!("cannot connect while the host is up: {error}")),
                Err(_) => return Err(format!("connect and handshake took over {CONNECT_TIMEOUT:?}")),
            }
        }
    }

    /// What a failed request means: the host's answer, a connection lost
    /// to a kill of the host, or a broken connection.
    pub fn classify(&self, link_epoch: u64, error: ClientError) -> ErrorClass {
        match error {
            ClientError::Host(body) => ErrorClass::Host(body),
            error if error.is_connection_lost() && link_epoch < self.kills() => ErrorClass::LostToRestart,
            error => ErrorClass::Broken(error.to_string()),
        }
    }
}

/// Counts an open connection until dropped.
#[derive(Debug)]
pub struct ConnectionGuard(Arc<AtomicI64>);

impl Drop for ConnectionGuard {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// A connection, and the number of host kills before it was opened.
#[derive(Debug)]
pub struct Link {
    /// The connection.
    pub client: Client,
    /// [`HostLife::kills`] when it was opened: a loss is the restart's
    /// when the host was killed since.
    pub epoch: u64,
    _open: ConnectionGuard,
}

/// What a failed request means.
#[derive(Debug)]
pub enum ErrorClass {
    /// The host answered with an error.
    Host(ErrorBody),
    /// The connection was lost because the host was killed.
    LostToRestart,
    /// The connection broke, or timed out, with no kill to explain it.
    Broken(String),
}

impl ErrorClass {
    /// The verdict when `documented` says which host error codes the
    /// protocol documents for the situation.
    pub fn verdict(self, what: &str, documented: impl Fn(&str) -> bool) -> Verdict {
        match self {
            ErrorClass::Host(body) if documented(&body.code) => Verdict::Expected(body.code),
            ErrorClass::Host(body) => Verdict::Failed(format!("{what}: undocumented answer {body}")),
            ErrorClass::LostToRestart => Verdict::LostToRestart,
            ErrorClass::Broken(detail) => Verdict::Failed(format!("{what}: {detail}")),
        }
    }
}
