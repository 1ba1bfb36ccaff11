//! [`PaneFollower`]: a pane's event stream that survives lost connections.
//!
//! # How a resume stays exact
//!
//! The follower remembers two things about what it has *handed to its
//! caller* (not merely received): the pane's generation from the last
//! stream start, and the end offset of the last output — `offset +
//! data.len()` of the last [`Event::Output`], or `snapshot.offset` of the
//! last snapshot start or [`Event::Resync`] (see [`FollowCursor`]).
//!
//! When the connection drops (the stream ends without [`Event::Ended`]), the
//! follower connects again through its [`Connector`], retrying with backoff
//! for at most [`ReconnectPolicy::max_total`], and sends
//! `reconnect {pane, generation, offset}`. The host answers with a stream
//! start, which the follower hands on as [`FollowItem::Start`]:
//! - [`StreamStart::Replay`] `{from: offset}`: the bytes after `offset`
//!   follow, then live output. Nothing is lost and nothing repeats.
//! - [`StreamStart::Snapshot`] with `skipped_from: Some(offset)`: the host no
//!   longer holds those bytes; the snapshot stands for them and output
//!   continues at `snapshot.offset`.
//! - [`StreamStart::GenerationChanged`]: the process behind the pane was
//!   replaced; the snapshot shows the new one.
//!
//! Only if the host replays more than asked would output repeat; the
//! follower drops or trims such output, so its caller never sees a byte
//! twice.

use crate::connection::Client;
use crate::connector::Connector;
use crate::error::ClientError;
use crate::follow_cursor::FollowCursor;
use crate::options::ClientOptions;
use crate::retry::ReconnectPolicy;
use crate::subscription::EventStream;
use panehost_ipc::{Event, PaneId, StreamStart};
use std::path::PathBuf;

/// Options of a [`PaneFollower`] that connects by socket path.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FollowOptions {
    /// Options of each connection.
    pub client: ClientOptions,
    /// How to retry after a lost connection.
    pub reconnect: ReconnectPolicy,
}

/// One item of a followed pane.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FollowItem {
    /// A stream (re)started: at the beginning and after every reconnect.
    /// A snapshot start means the screen should be redrawn from it.
    Start(StreamStart),
    /// An event of the pane.
    Event(Event),
}

/// A subscription to one pane that reconnects by itself. See the module
/// documentation for the exact resume rules.
#[derive(Debug)]
pub struct PaneFollower {
    connector: Connector,
    policy: ReconnectPolicy,
    pane: PaneId,
    cursor: FollowCursor,
    stream: Option<EventStream>,
    start_to_hand_on: Option<StreamStart>,
}

impl PaneFollower {
    /// Connects to the host at `path` and subscribes to `pane`, from `from`
    /// when given (else from the current screen).
    ///
    /// # Errors
    /// As [`Client::connect`] and [`Client::subscribe`]; the first
    /// connection is not retried.
    pub async fn connect(
        path: impl Into<PathBuf>,
        options: &FollowOptions,
        pane: PaneId,
        from: Option<u64>,
    ) -> Result<Self, ClientError> {
        let connector = Connector::path(path, options.client.clone());
        PaneFollower::with_connector(connector, options.reconnect, pane, from).await
    }

    /// Subscribes through a connection `connector` opens, and reopens it
    /// that way after every loss.
    ///
    /// # Errors
    /// As [`PaneFollower::connect`].
    pub async fn with_connector(
        connector: Connector,
        policy: ReconnectPolicy,
        pane: PaneId,
        from: Option<u64>,
    ) -> Result<Self, ClientError> {
        let client = connector.connect().await?;
        PaneFollower::with_client(&client, connector, policy, pane, from).await
    }

    /// Subscribes on an existing connection; `connector` opens the next one
    /// after a loss.
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub async fn with_client(
        client: &Client,
        connector: Connector,
        policy: ReconnectPolicy,
        pane: PaneId,
        from: Option<u64>,
    ) -> Result<Self, ClientError> {
        let mut follower = PaneFollower {
            connector,
            policy,
            pane,
            cursor: FollowCursor::new(from),
            stream: None,
            start_to_hand_on: None,
        };
        let stream = client.open_stream(follower.cursor.resume_request(&follower.pane)).await?;
        follower.begin(stream);
        Ok(follower)
    }

    /// Subscribes where `cursor` stands (see [`FollowCursor::new`] and
    /// [`FollowCursor::at`]), opening the first connection through
    /// `connector` and retrying it as later ones are, within `policy`:
    /// for a caller that resumes on behalf of someone else (a browser page
    /// after a reload) while the host may be restarting.
    ///
    /// # Errors
    /// As [`PaneFollower::next`] when it reconnects.
    pub async fn from_cursor(
        connector: Connector,
        policy: ReconnectPolicy,
        pane: PaneId,
        cursor: FollowCursor,
    ) -> Result<Self, ClientError> {
        let mut follower = PaneFollower { connector, policy, pane, cursor, stream: None, start_to_hand_on: None };
        follower.resume().await?;
        Ok(follower)
    }

    /// The pane followed.
    pub fn pane(&self) -> &PaneId {
        &self.pane
    }

    /// The pane's generation as of the last stream start.
    pub fn generation(&self) -> Option<u64> {
        self.cursor.generation()
    }

    /// The end offset of the output handed on so far.
    pub fn offset(&self) -> Option<u64> {
        self.cursor.offset()
    }

    /// The current connection, while one is open.
    pub fn client(&self) -> Option<&Client> {
        self.stream.as_ref().map(EventStream::client)
    }

    /// The next item: a [`FollowItem::Start`] first and after every
    /// reconnect, then events. `Ok(None)` after [`Event::Ended`] has been
    /// handed on.
    ///
    /// # Errors
    /// When the connection is lost and cannot be reopened within the
    /// policy's time ([`ClientError::is_connection_lost`]), or the host
    /// refuses the resume (for example `UNKNOWN_PANE` once the pane was
    /// closed). Calling again after an error tries again.
    ///
    /// # Cancel safety
    /// Cancel safe while the connection is up: an event is either returned
    /// or stays queued. A cancelled reconnect starts over on the next call,
    /// from the same offset.
    pub async fn next(&mut self) -> Result<Option<FollowItem>, ClientError> {
        loop {
            if self.cursor.is_ended() {
                return Ok(None);
            }
            if let Some(start) = self.start_to_hand_on.take() {
                return Ok(Some(FollowItem::Start(start)));
            }
            let Some(stream) = self.stream.as_mut() else {
                self.resume().await?;
                continue;
            };
            match stream.next().await {
                Some(event) => {
                    if let Some(event) = self.cursor.admit(event) {
                        if matches!(event, Event::Ended { .. }) {
                            self.stream = None;
                        }
                        return Ok(Some(FollowItem::Event(event)));
                    }
                }
                None => {
                    tracing::warn!(
                        pane = %self.pane,
                        offset = ?self.cursor.offset(),
                        "lost the connection to the host; reconnecting"
                    );
                    self.stream = None;
                }
            }
        }
    }

    /// Opens a new connection and resumes from the cursor.
    async fn resume(&mut self) -> Result<(), ClientError> {
        let request = self.cursor.resume_request(&self.pane);
        let connector = &self.connector;
        tracing::debug!(to = connector.description(), ?request, "resuming");
        let stream = self
            .policy
            .retry(|| {
                let request = request.clone();
                async move { connector.connect().await?.open_stream(request).await }
            })
            .await?;
        self.begin(stream);
        Ok(())
    }

    fn begin(&mut self, stream: EventStream) {
        self.cursor.on_start(stream.generation(), stream.start());
        self.start_to_hand_on = Some(stream.start().clone());
        self.stream = Some(stream);
    }
}
