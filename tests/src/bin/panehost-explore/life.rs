//! The host's life as the clients see it (up or down, how many times it
//! was killed), connections that are opened again after a kill, and
//! telling an answer lost to a kill from a connection the host broke.

use panehost_client::{Client, ClientError, ClientOptions};
use panehost_ipc::ErrorBody;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;
use tokio::sync::watch;
use tokio::time::Instant;

/// How long a connection attempt (connect and handshake) may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(15);
/// How long a task waits for a killed host to be back.
const HOST_BACK_TIMEOUT: Duration = Duration::from_secs(60);

/// Whether the host is up, and how many times it was killed.
#[derive(Debug)]
pub struct HostLife {
    /// The socket every incarnation listens on.
    pub socket: PathBuf,
    kills: AtomicU64,
    up: watch::Sender<bool>,
}

impl HostLife {
    /// A host that is up at `socket`.
    pub fn new(socket: PathBuf) -> HostLife {
        HostLife { socket, kills: AtomicU64::new(0), up: watch::Sender::new(true) }
    }

    /// How many times the host was killed so far.
    pub fn kills(&self) -> u64 {
        self.kills.load(Ordering::SeqCst)
    }

    /// Called just before the host is killed.
    pub fn going_down(&self) {
        self.up.send_replace(false);
        self.kills.fetch_add(1, Ordering::SeqCst);
    }

    /// Called once the new host listens and its panes were checked.
    pub fn back_up(&self) {
        self.up.send_replace(true);
    }

    /// Waits until the host is up; false when it is not within `timeout`.
    pub async fn wait_up(&self, timeout: Duration) -> bool {
        let mut up = self.up.subscribe();
        tokio::time::timeout(timeout, async { up.wait_for(|up| *up).await.is_ok() }).await.unwrap_or(false)
    }

    /// Connects, waiting for the host while it is down. The second value
    /// is the number of kills before the connection was opened.
    pub async fn connect(&self, options: &ClientOptions) -> Result<(Client, u64), String> {
        let deadline = Instant::now() + HOST_BACK_TIMEOUT;
        loop {
            if !self.wait_up(deadline.saturating_duration_since(Instant::now())).await {
                return Err(format!("the host was not back up within {HOST_BACK_TIMEOUT:?}"));
            }
            let epoch = self.kills();
            let attempt = tokio::time::timeout(CONNECT_TIMEOUT, Client::connect(&self.socket, options)).await;
            let killed_meanwhile = self.kills() != epoch || !*self.up.borrow();
            match attempt {
                Ok(Ok(client)) => return Ok((client, epoch)),
                Ok(Err(_)) | Err(_) if killed_meanwhile => continue,
                Ok(Err(error)) => return Err(format!("cannot connect while the host is up: {error}")),
                Err(_) => return Err(format!("connect and handshake took over {CONNECT_TIMEOUT:?}")),
            }
        }
    }

    /// What a failed request means.
    pub fn classify(&self, epoch: u64, error: ClientError) -> Failed {
        match error {
            ClientError::Host(body) => Failed::Host(body),
            error if error.is_connection_lost() && epoch < self.kills() => Failed::Lost,
            error => Failed::Broken(error.to_string()),
        }
    }
}

/// Why a request did not succeed.
#[derive(Debug)]
pub enum Failed {
    /// The host answered with an error.
    Host(ErrorBody),
    /// The connection was lost to a kill of the host.
    Lost,
    /// Anything else: a broken connection, a timeout, a wrong answer.
    Broken(String),
}

/// A connection several clients share, opened again after a kill.
#[derive(Debug)]
pub struct SharedConnection {
    options: ClientOptions,
    current: tokio::sync::Mutex<Option<(Client, u64)>>,
}

impl SharedConnection {
    /// A connection that opens on first use.
    pub fn new(name: String) -> SharedConnection {
        let options = ClientOptions { request_timeout: Some(Duration::from_secs(60)), ..ClientOptions::named(name) };
        SharedConnection { options, current: tokio::sync::Mutex::new(None) }
    }

    /// The connection, and the kills before it was opened: the open one
    /// unless it closed or the host was killed since.
    pub async fn get(&self, life: &HostLife) -> Result<(Client, u64), String> {
        let mut current = self.current.lock().await;
        if let Some((client, epoch)) = current.as_ref() {
            if !client.is_closed() && *epoch == life.kills() {
                return Ok((client.clone(), *epoch));
            }
        }
        let opened = life.connect(&self.options).await?;
        *current = Some(opened.clone());
        Ok(opened)
    }

    /// Drops the connection.
    pub async fn drop_connection(&self) {
        self.current.lock().await.take();
    }
}
