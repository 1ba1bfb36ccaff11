//! [`Client`]: one connection to the host, shared by many tasks.

use crate::error::ClientError;
use crate::options::ClientOptions;
use crate::router::{self, PendingGuard, Reply, Shared};
use crate::subscription::EventStream;
use crate::transport;
use crate::watch_stream::WatchStream;
use crate::writer::FrameWriter;
use futures_util::StreamExt;
use interprocess::local_socket::traits::StreamCommon as _;
use panehost_ipc::{
    Encoding, ExitStatus, InterruptReport, Labels, PaneDetail, PaneHistory, PaneId, PaneSummary, Receipt, Request,
    Response, RuntimeInfo, SendParams, Size, StartParams, TurnReport, WaitForParams, WaitMatch, Welcome,
    RECEIPT_TIMEOUT_MS,
};
use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

/// Largest input one `send` request of [`Client::send_input`] carries, so
/// that the request stays under the frame limit in either encoding (base64
/// in JSON adds a third).
pub const INPUT_CHUNK_LEN: usize = 512 * 1024 - 1024;

/// A connection to the host.
///
/// Cloning is cheap (the connection is shared) and every method takes
/// `&self`, so one client serves many tasks at once; requests are answered
/// by id, in whatever order the host answers them. The connection closes
/// when the last clone and the last [`EventStream`] of it are dropped.
///
/// # Deadlocks
/// Events of every subscription and answers to requests arrive on the same
/// socket. When a subscription's buffer ([`ClientOptions::event_buffer`]) is
/// full, the connection stops reading until its [`EventStream`] is read. So
/// do not await a request on a connection while the only task that reads one
/// of its event streams is that same task: read events elsewhere, or use a
/// second connection for requests.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

struct Inner {
    shared: Arc<Shared>,
    writer: Arc<FrameWriter>,
    welcome: Welcome,
    request_timeout: Option<Duration>,
    reader: AbortHandle,
    host_pid: Option<u32>,
}

impl Drop for Inner {
    fn drop(&mut self) {
        self.reader.abort();
    }
}

impl fmt::Debug for Client {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Client")
            .field("host", &self.inner.welcome.host)
            .field("encoding", &self.inner.shared.encoding())
            .field("closed", &self.inner.shared.is_closed())
            .finish()
    }
}

impl Client {
    /// Connects to the host listening at `path` and performs the handshake.
    ///
    /// Must be called within a tokio runtime: the connection runs a reader
    /// and a writer task.
    ///
    /// # Errors
    /// [`ClientError::Connect`] when nothing listens at `path` (see
    /// [`ClientError::is_unreachable`]); [`ClientError::Refused`] when the
    /// host refuses the handshake; [`ClientError::Timeout`] when it does
    /// not answer in time.
    #[tracing::instrument(level = "debug", skip_all, fields(path = %path.display()))]
    pub async fn connect(path: &Path, options: &ClientOptions) -> Result<Client, ClientError> {
        let stream = transport::connect_socket(path, options.handshake_timeout).await?;
        let host_pid = stream.peer_creds().ok().and_then(|creds| creds.pid()).and_then(|pid| u32::try_from(pid).ok());
        Client::handshake(stream, options, host_pid).await
    }

    /// Performs the handshake on an already connected byte stream (a socket,
    /// or one end of an in-memory pipe in tests) and starts the connection's
    /// tasks on it.
    ///
    /// # Errors
    /// As [`Client::connect`], without the connect step.
    pub async fn connect_with_stream<S>(stream: S, options: &ClientOptions) -> Result<Client, ClientError>
    where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        Client::handshake(stream, options, None).await
    }

    async fn handshake<S>(stream: S, options: &ClientOptions, host_pid: Option<u32>) -> Result<Client, ClientError>
    where
        S: AsyncRead + AsyncWrite + Send + Unpin + 'static,
    {
        let (framed, welcome) = transport::open(stream, options).await?;
        let shared = Arc::new(Shared::new(options.encoding));
        let (sink, frames) = framed.split();
        let writer = FrameWriter::start(Box::pin(sink), Arc::clone(&shared));
        let reader =
            tokio::spawn(router::read_frames(frames, Arc::clone(&shared), Arc::clone(&writer), options.event_buffer))
                .abort_handle();
        Ok(Client {
            inner: Arc::new(Inner {
                shared,
                writer,
                welcome,
                request_timeout: options.request_timeout,
                reader,
                host_pid,
            }),
        })
    }

    /// The host's process id, as the kernel named the process listening on
    /// the socket when this connection was made; `None` for a connection
    /// made on a stream of the caller's ([`Client::connect_with_stream`]).
    pub fn host_pid(&self) -> Option<u32> {
        self.inner.host_pid
    }

    /// What the host said when it accepted the connection.
    pub fn welcome(&self) -> &Welcome {
        &self.inner.welcome
    }

    /// The encoding of this connection's frames.
    pub fn encoding(&self) -> Encoding {
        self.inner.shared.encoding()
    }

    /// True once the connection has ended; every request then fails.
    pub fn is_closed(&self) -> bool {
        self.inner.shared.is_closed()
    }

    /// Sends any request and returns the host's successful answer.
    ///
    /// An `events` or `reconnect` request sent this way opens a subscription
    /// whose events are discarded (and which is ended at once); use
    /// [`Client::subscribe`] or [`Client::reconnect`] to receive them.
    ///
    /// # Errors
    /// [`ClientError::Host`] when the host answers with an error;
    /// [`ClientError::ConnectionClosed`] when the connection ends first;
    /// [`ClientError::ConnectionError`] when the host reports an error
    /// without a request id while this request waits;
    /// [`ClientError::Timeout`] after [`ClientOptions::request_timeout`];
    /// [`ClientError::FrameTooLarge`] when the request does not fit a frame.
    ///
    /// # Cancel safety
    /// Dropping the future before it completes is safe: the request may or
    /// may not reach the host, its answer is discarded, and the connection
    /// stays usable.
    pub async fn request(&self, request: Request) -> Result<Response, ClientError> {
        let reply = self.exchange(request).await?;
        match (&reply.body, &reply.events) {
            (Response::Subscribed(subscription), Some(_)) => self.unsubscribe_soon(subscription.subscription),
            (Response::Watching { subscription, .. }, Some(_)) => self.unsubscribe_soon(*subscription),
            _ => {}
        }
        Ok(reply.body)
    }

    pub(crate) async fn exchange(&self, request: Request) -> Result<Reply, ClientError> {
        self.exchange_within(request, self.inner.request_timeout).await
    }

    async fn request_with_timeout(
        &self,
        request: Request,
        limit: Option<std::time::Duration>,
    ) -> Result<Response, ClientError> {
        Ok(self.exchange_within(request, limit).await?.body)
    }

    async fn exchange_within(
        &self,
        request: Request,
        limit: Option<std::time::Duration>,
    ) -> Result<Reply, ClientError> {
        let shared = &*self.inner.shared;
        let id = shared.next_id();
        let frame = shared.encode_request(id, request)?;
        let (waiter, answer) = oneshot::channel();
        shared.register(id, waiter)?;
        let _guard = PendingGuard { shared, id };
        tracing::trace!(id, len = frame.len(), "sending request");
        self.inner.writer.write(frame).await?;
        let answer = match limit {
            Some(limit) => tokio::time::timeout(limit, answer)
                .await
                .map_err(|_| ClientError::Timeout { what: "the host's answer", after: limit })?,
            None => answer.await,
        };
        answer.map_err(|_| ClientError::ConnectionClosed)?
    }

    /// Starts a pane. See [`StartParams`].
    ///
    /// # Errors
    /// As [`Client::request`]; the host refuses with codes such as
    /// `UNKNOWN_RUNTIME`, `RUNTIME_NOT_AVAILABLE` or `SPAWN_FAILED`.
    pub async fn start(&self, params: StartParams) -> Result<PaneSummary, ClientError> {
        match self.request(Request::Start(params)).await? {
            Response::Started(summary) => Ok(summary),
            other => Err(unexpected("started", &other)),
        }
    }

    /// Writes input to a pane and returns how many bytes were written.
    ///
    /// # Errors
    /// As [`Client::request`]; `PANE_EXITED` when the pane takes no input.
    pub async fn send(&self, params: SendParams) -> Result<u64, ClientError> {
        match self.request(Request::Send(params)).await? {
            Response::Sent { bytes, .. } => Ok(bytes),
            other => Err(unexpected("sent", &other)),
        }
    }

    /// Writes any amount of raw input, in `send` requests of at most
    /// [`INPUT_CHUNK_LEN`] bytes, and presses Enter after the last one when
    /// `enter` is set. Returns the total bytes written.
    ///
    /// # Errors
    /// As [`Client::send`]; chunks before a failure have been written.
    pub async fn send_input(&self, pane: &PaneId, input: &[u8], enter: bool) -> Result<u64, ClientError> {
        // Text that submits goes as text, so the host can paste it whole
        // when the program enabled bracketed paste.
        if enter && input.len() <= INPUT_CHUNK_LEN {
            if let Ok(text) = std::str::from_utf8(input) {
                let params =
                    SendParams { pane: pane.clone(), text: text.to_owned(), enter: true, ..Default::default() };
                return self.send(params).await;
            }
        }
        let mut chunks: Vec<&[u8]> = input.chunks(INPUT_CHUNK_LEN).collect();
        if chunks.is_empty() {
            chunks.push(&[]);
        }
        let last = chunks.len() - 1;
        let mut written = 0;
        for (index, chunk) in chunks.into_iter().enumerate() {
            let params = SendParams {
                pane: pane.clone(),
                bytes: chunk.into(),
                enter: enter && index == last,
                ..Default::default()
            };
            written += self.send(params).await?;
        }
        Ok(written)
    }

    /// Interrupts what the pane's process is doing.
    ///
    /// # Errors
    /// As [`Client::request`].
    pub async fn interrupt(&self, pane: &PaneId) -> Result<InterruptReport, ClientError> {
        self.interrupt_with(pane, false).await
    }

    /// Interrupts a pane; with `terminate`, an unconfirmed SIGINT escalates
    /// to SIGTERM and SIGKILL.
    ///
    /// # Errors
    /// As [`Client::request`].
    pub async fn interrupt_with(&self, pane: &PaneId, terminate: bool) -> Result<InterruptReport, ClientError> {
        match self.request(Request::Interrupt { pane: pane.clone(), terminate }).await? {
            Response::Interrupted(report) => Ok(report),
            other => Err(unexpected("interrupted", &other)),
        }
    }

    /// Describes a pane with its current screen.
    ///
    /// # Errors
    /// As [`Client::request`].
    pub async fn inspect(&self, pane: &PaneId) -> Result<PaneDetail, ClientError> {
        match self.request(Request::Inspect { pane: pane.clone() }).await? {
            Response::Inspected(detail) => Ok(detail),
            other => Err(unexpected("inspected", &other)),
        }
    }

    /// The pane's last lines of output as text (at most `lines` from above
    /// the screen, 1,000 when `None`, then the screen), re-parsed by the
    /// host from the output its ring still holds.
    ///
    /// # Errors
    /// As [`Client::request`].
    pub async fn history(&self, pane: &PaneId, lines: Option<u32>) -> Result<PaneHistory, ClientError> {
        match self.request(Request::History { pane: pane.clone(), lines }).await? {
            Response::History(history) => Ok(history),
            other => Err(unexpected("history", &other)),
        }
    }

    /// Lists every pane, oldest first.
    ///
    /// # Errors
    /// As [`Client::request`].
    pub async fn list(&self) -> Result<Vec<PaneSummary>, ClientError> {
        self.list_labelled(&Labels::new()).await
    }

    /// Lists the panes carrying every one of `labels` (with the same
    /// values), oldest first; every pane when `labels` is empty.
    ///
    /// # Errors
    /// As [`Client::request`].
    pub async fn list_labelled(&self, labels: &Labels) -> Result<Vec<PaneSummary>, ClientError> {
        match self.request(Request::List { labels: labels.clone() }).await? {
            Response::Panes { panes } => Ok(panes),
            other => Err(unexpected("panes", &other)),
        }
    }

    /// Changes a pane's terminal size; returns the size now in force.
    ///
    /// # Errors
    /// As [`Client::request`]; `INVALID_ARGUMENT` for a zero dimension.
    pub async fn resize(&self, pane: &PaneId, size: Size) -> Result<Size, ClientError> {
        match self.request(Request::Resize { pane: pane.clone(), size }).await? {
            Response::Resized { size, .. } => Ok(size),
            other => Err(unexpected("resized", &other)),
        }
    }

    /// Ends a pane's process group, reaps it and forgets the pane.
    ///
    /// # Errors
    /// As [`Client::request`].
    pub async fn close(&self, pane: &PaneId) -> Result<ExitStatus, ClientError> {
        match self.request(Request::Close { pane: pane.clone() }).await? {
            Response::Closed { status, .. } => Ok(status),
            other => Err(unexpected("closed", &other)),
        }
    }

    /// Describes the runtimes the host knows.
    ///
    /// # Errors
    /// As [`Client::request`].
    pub async fn runtimes(&self) -> Result<Vec<RuntimeInfo>, ClientError> {
        match self.request(Request::Runtimes {}).await? {
            Response::Runtimes { runtimes } => Ok(runtimes),
            other => Err(unexpected("runtimes", &other)),
        }
    }

    /// Takes a completion receipt of a runtime: the host runs its one-shot
    /// mode inside the read-only boundary and checks the answer. A receipt
    /// that did not pass is still an answer (`passed: false`, with what was
    /// seen); it replaces the stored one either way.
    ///
    /// # Errors
    /// As [`Client::request`]; `OPERATION_UNSUPPORTED` naming
    /// `RECEIPT_UNAVAILABLE` or `PERMISSION_PROFILE_UNENFORCED` (unless
    /// `accept_weaker_boundary`). The request waits for the run, so this
    /// call overrides the client's request timeout with the probe's.
    pub async fn probe_runtime(
        &self,
        runtime: &str,
        model: Option<&str>,
        accept_weaker_boundary: bool,
    ) -> Result<Receipt, ClientError> {
        let request = Request::ProbeRuntime {
            runtime: runtime.to_owned(),
            model: model.map(str::to_owned),
            accept_weaker_boundary,
        };
        let wait = std::time::Duration::from_millis(RECEIPT_TIMEOUT_MS) + std::time::Duration::from_secs(30);
        match self.request_with_timeout(request, Some(wait)).await? {
            Response::Receipt(receipt) => Ok(receipt),
            other => Err(unexpected("receipt", &other)),
        }
    }

    /// Submits `text` as a turn and waits until the turn ends (or the host's
    /// timeout says what it observed instead).
    ///
    /// # Errors
    /// As [`Client::request`]; `TURN_TIMEOUT` when the turn did not end in
    /// time. The request waits on the host, so this call overrides the
    /// client's request timeout with the turn's.
    pub async fn ask(
        &self,
        pane: &PaneId,
        text: &str,
        timeout: Option<std::time::Duration>,
    ) -> Result<TurnReport, ClientError> {
        let request = Request::Ask {
            pane: pane.clone(),
            text: text.to_owned(),
            timeout_ms: timeout.map(|t| t.as_millis() as u64),
        };
        let wait = timeout.unwrap_or(std::time::Duration::from_secs(600)) + std::time::Duration::from_secs(30);
        match self.request_with_timeout(request, Some(wait)).await? {
            Response::Answered(report) => Ok(report),
            other => Err(unexpected("answered", &other)),
        }
    }

    /// Waits until the pane's screen, or its output, matches
    /// `params.pattern` (a regular expression): where it was found.
    ///
    /// # Errors
    /// As [`Client::request`]; `WAIT_TIMEOUT` when the pattern was not
    /// seen in time, `PANE_EXITED` when the process ended first,
    /// `INVALID_ARGUMENT` for a pattern the host does not take.
    pub async fn wait_for(&self, params: WaitForParams) -> Result<WaitMatch, ClientError> {
        let timeout_ms = params.timeout_ms.unwrap_or(panehost_ipc::wait::DEFAULT_WAIT_TIMEOUT_MS);
        // The host answers by then; the margin covers a busy host.
        let wait = std::time::Duration::from_millis(timeout_ms) + std::time::Duration::from_secs(30);
        match self.request_with_timeout(Request::WaitFor(params), Some(wait)).await? {
            Response::Waited(found) => Ok(found),
            other => Err(unexpected("waited", &other)),
        }
    }

    /// Opens a pane running a runtime's own interactive sign-in.
    ///
    /// # Errors
    /// As [`Client::request`]; a runtime that signs in elsewhere answers
    /// `OPERATION_UNSUPPORTED` with `LOGIN_NOT_IN_TERMINAL`, one that needs
    /// no sign-in `LOGIN_NOT_REQUIRED`.
    pub async fn login(
        &self,
        runtime: &str,
        cwd: Option<String>,
        size: Option<Size>,
    ) -> Result<PaneSummary, ClientError> {
        match self.request(Request::Login { runtime: runtime.to_owned(), cwd, size }).await? {
            Response::Started(summary) => Ok(summary),
            other => Err(unexpected("started", &other)),
        }
    }

    /// Subscribes to a pane's output and lifecycle events.
    ///
    /// With `from: None` the stream begins with the current screen
    /// ([`panehost_ipc::StreamStart::Snapshot`]); with an offset it replays
    /// the output after it when the host still holds it. The stream's
    /// [`EventStream::start`] says which.
    ///
    /// # Errors
    /// As [`Client::request`]; `OFFSET_OUT_OF_RANGE` for an offset beyond
    /// the pane's output.
    pub async fn subscribe(&self, pane: &PaneId, from: Option<u64>) -> Result<EventStream, ClientError> {
        self.open_stream(Request::Events { pane: pane.clone(), from }).await
    }

    /// Resumes a subscription lost with an earlier connection: `generation`
    /// is the one last seen, `offset` the end of the output processed. The
    /// stream's start replays exactly from `offset`, or begins with a
    /// snapshot (naming the skipped bytes, or the changed generation).
    ///
    /// # Errors
    /// As [`Client::subscribe`].
    pub async fn reconnect(&self, pane: &PaneId, generation: u64, offset: u64) -> Result<EventStream, ClientError> {
        self.open_stream(Request::Reconnect { pane: pane.clone(), generation, offset }).await
    }

    /// Follows every pane of the host: the panes now, and a stream of
    /// their news (`pane_started`, `pane_activity`, `pane_changed`,
    /// `pane_exited`, `pane_ended`, and `pane_list` after falling behind). Each event
    /// states a pane's new state and may repeat what the list showed.
    ///
    /// # Errors
    /// As [`Client::request`]; `LIMIT_REACHED` when the connection holds
    /// as many subscriptions as it may.
    pub async fn watch(&self) -> Result<(Vec<PaneSummary>, WatchStream), ClientError> {
        let reply = self.exchange(Request::Watch {}).await?;
        match (reply.body, reply.events) {
            (Response::Watching { subscription, panes }, Some(events)) => {
                Ok((panes, WatchStream::new(self.clone(), subscription, events)))
            }
            (other, _) => Err(unexpected("watching", &other)),
        }
    }

    /// Sends a request that opens a subscription (`events` or `reconnect`).
    pub(crate) async fn open_stream(&self, request: Request) -> Result<EventStream, ClientError> {
        let reply = self.exchange(request).await?;
        match (reply.body, reply.events) {
            (Response::Subscribed(subscription), Some(events)) => {
                tracing::debug!(
                    subscription = subscription.subscription,
                    pane = %subscription.pane,
                    generation = subscription.generation,
                    "subscribed"
                );
                Ok(EventStream::new(self.clone(), subscription, events))
            }
            (other, _) => Err(unexpected("subscribed", &other)),
        }
    }

    /// Ends a subscription without waiting for the host's answer.
    pub(crate) fn unsubscribe_soon(&self, subscription: u64) {
        if !self.is_closed() {
            router::unsubscribe(&self.inner.shared, &self.inner.writer, subscription);
        }
    }
}

fn unexpected(expected: &'static str, got: &Response) -> ClientError {
    ClientError::UnexpectedResponse { expected, got: response_kind(got) }
}

/// The wire name of a response's kind.
pub(crate) fn response_kind(response: &Response) -> &'static str {
    response.name()
}
