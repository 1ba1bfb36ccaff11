//! How a client connection behaves: encoding, name, timeouts, buffers.

use panehost_ipc::Encoding;
use std::time::Duration;

/// How long the host has to answer the handshake, by default.
pub const DEFAULT_HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(5);

/// How long the host has to answer a request, by default. Generous: an
/// interrupt escalates through bounded waits and a start may probe a
/// runtime's version first.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);

/// How many events each subscription buffers before the connection's reader
/// waits for the subscriber, by default.
pub const DEFAULT_EVENT_BUFFER: usize = 256;

/// Options of one client connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientOptions {
    /// The encoding of every frame after the handshake.
    pub encoding: Encoding,
    /// The name the host logs for this client.
    pub client_name: String,
    /// How long to wait for the host to accept the connection, and again
    /// for its handshake reply.
    pub handshake_timeout: Duration,
    /// How long to wait for the answer to a request; `None` waits until the
    /// answer arrives or the connection closes.
    pub request_timeout: Option<Duration>,
    /// Events buffered per subscription (at least 1). When a subscriber
    /// falls this far behind, the connection stops reading until it catches
    /// up; the host then resyncs the subscription rather than slowing down.
    pub event_buffer: usize,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            encoding: Encoding::Bincode,
            client_name: concat!("panehost-client ", env!("CARGO_PKG_VERSION")).to_owned(),
            handshake_timeout: DEFAULT_HANDSHAKE_TIMEOUT,
            request_timeout: Some(DEFAULT_REQUEST_TIMEOUT),
            event_buffer: DEFAULT_EVENT_BUFFER,
        }
    }
}

impl ClientOptions {
    /// The default options with another encoding.
    pub fn with_encoding(encoding: Encoding) -> Self {
        ClientOptions { encoding, ..ClientOptions::default() }
    }

    /// The default options with another client name.
    pub fn named(client_name: impl Into<String>) -> Self {
        ClientOptions { client_name: client_name.into(), ..ClientOptions::default() }
    }
}
