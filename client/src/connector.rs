//! [`Connector`]: how to open a new connection when one is lost.

use crate::autostart::{connect_or_start, AutostartCommand};
use crate::connection::Client;
use crate::error::ClientError;
use crate::options::ClientOptions;
use std::fmt;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;

type ConnectFuture = Pin<Box<dyn Future<Output = Result<Client, ClientError>> + Send>>;

/// A recipe for opening a connection, used again after every loss.
///
/// Cheap to clone.
#[derive(Clone)]
pub struct Connector {
    description: Arc<str>,
    connect: Arc<dyn Fn() -> ConnectFuture + Send + Sync>,
}

impl fmt::Debug for Connector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Connector").field(&self.description).finish()
    }
}

impl Connector {
    /// Connects to the host at `path`.
    pub fn path(path: impl Into<PathBuf>, options: ClientOptions) -> Self {
        let path: PathBuf = path.into();
        let description = format!("host at {}", path.display());
        let path = Arc::new(path);
        let options = Arc::new(options);
        Connector::from_fn(description, move || {
            let path = Arc::clone(&path);
            let options = Arc::clone(&options);
            async move { Client::connect(&path, &options).await }
        })
    }

    /// Connects to the host at `path`, starting it with `command` when
    /// nothing answers (see [`connect_or_start`]).
    pub fn autostart(path: impl Into<PathBuf>, options: ClientOptions, command: AutostartCommand) -> Self {
        let path: PathBuf = path.into();
        let description = format!("host at {} (started on demand)", path.display());
        let shared = Arc::new((path, options, command));
        Connector::from_fn(description, move || {
            let shared = Arc::clone(&shared);
            async move {
                let (path, options, command) = &*shared;
                connect_or_start(path, options, command).await
            }
        })
    }

    /// Connects however `connect` does; `description` names it in logs.
    pub fn from_fn<F, Fut>(description: impl Into<String>, connect: F) -> Self
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Client, ClientError>> + Send + 'static,
    {
        Connector {
            description: Arc::from(description.into()),
            connect: Arc::new(move || -> ConnectFuture { Box::pin(connect()) }),
        }
    }

    /// What this connector connects to, for logs.
    pub fn description(&self) -> &str {
        &self.description
    }

    /// Makes one attempt to connect.
    ///
    /// # Errors
    /// Whatever the recipe fails with; see [`Client::connect`].
    pub async fn connect(&self) -> Result<Client, ClientError> {
        (self.connect)().await
    }
}
