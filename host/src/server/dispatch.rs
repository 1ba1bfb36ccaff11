//! One handler per request. Handlers see panes, never sockets: they return
//! the answer, and (for `events` and `reconnect`) the subscription to start
//! once the answer is on its way; or, for a request that may wait, the work
//! that will answer it, to run beside the connection's other requests.

use crate::handlers::interrupt;
use crate::handlers::receipt;
use crate::handlers::terminal_attach;
use crate::handlers::turns;
use crate::handlers::wait_for;
use crate::limits;
use crate::pane::{history, InputPlace, Launch, Pane};
use crate::server::answer_budget::{self, AnswerPermit};
use crate::server::host_state::HostState;
use crate::server::outbox::Outbox;
use crate::server::passed_descriptors::PassedDescriptors;
use crate::server::peer_process::PeerProcess;
use crate::server::peer_search_path::peer_search_path;
use crate::server::subscription::{EventSink, SubscriptionTask};
use crate::server::watch::WatchTask;
use panehost_adapters::Catalog;
use panehost_adapters::LaunchPlan;
use panehost_ipc::{
    check_client_env, check_labels, labels_match, ErrorBody, ErrorCode, PaneDetail, PaneHistory, PaneId, Request,
    Response, Size, StartParams, StreamStart, Subscription,
};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::Duration;
use tracing::Instrument;

/// What a handler produced.
#[derive(Debug)]
pub(crate) struct Reply {
    /// The answer to the request.
    pub result: Result<Response, ErrorBody>,
    /// A subscription to run after the answer has been queued.
    pub then: Option<Follow>,
}

/// A subscription to run: one pane's events, or every pane's news.
#[derive(Debug)]
pub(crate) enum Follow {
    /// `events` or `reconnect`.
    Pane(SubscriptionTask),
    /// `watch`.
    Host(WatchTask),
}

impl Follow {
    /// The subscription id.
    pub(crate) fn id(&self) -> u64 {
        match self {
            Follow::Pane(task) => task.id,
            Follow::Host(task) => task.id,
        }
    }

    /// Delivers its events until it ends.
    pub(crate) async fn run(self) {
        match self {
            Follow::Pane(task) => task.run().await,
            Follow::Host(task) => task.run().await,
        }
    }
}

impl From<Result<Response, ErrorBody>> for Reply {
    fn from(result: Result<Response, ErrorBody>) -> Self {
        Reply { result, then: None }
    }
}

/// Work that answers a request once it is done: it may wait (for a
/// program to start, for its input to be taken, for a turn to end).
pub(crate) type Work = Pin<Box<dyn Future<Output = Answered> + Send>>;

/// A request's answer, and the part of the host's answer budget it holds
/// until it has been written.
#[derive(Debug)]
pub(crate) struct Answered {
    /// The answer.
    pub result: Result<Response, ErrorBody>,
    /// Given back once the answer's frame is written.
    pub held: Option<AnswerPermit>,
}

/// How a request is answered.
// Made once per request and matched at once, never stored in bulk: the
// size of the `Now` variant costs nothing, and boxing it would cost an
// allocation per request.
#[allow(clippy::large_enum_variant)]
pub(crate) enum Handling {
    /// Answered already: the request only looked or changed something at
    /// once.
    Now(Reply),
    /// Answered when the work is done; other requests of the connection
    /// go on meanwhile. Whatever must happen in the order the requests
    /// were read (a place in a pane's input line) has been taken already.
    Later(Work),
}

impl std::fmt::Debug for Handling {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Handling::Now(reply) => f.debug_tuple("Now").field(reply).finish(),
            Handling::Later(_) => f.write_str("Later(..)"),
        }
    }
}

impl From<Result<Response, ErrorBody>> for Handling {
    fn from(result: Result<Response, ErrorBody>) -> Self {
        Handling::Now(result.into())
    }
}

fn later(work: impl Future<Output = Result<Response, ErrorBody>> + Send + 'static) -> Handling {
    Handling::Later(Box::pin(async move { Answered { result: work.await, held: None } }))
}

/// Work whose answer may be large: it takes `cost` bytes from the host's
/// answer budget before it runs (waiting its turn, or answered `BUSY`),
/// and holds them until the answer is written.
fn later_within_budget(
    host: &Arc<HostState>,
    cost: usize,
    work: impl Future<Output = Result<Response, ErrorBody>> + Send + 'static,
) -> Handling {
    let host = Arc::clone(host);
    Handling::Later(Box::pin(async move {
        match host.answer_budget.take(cost).await {
            Ok(permit) => Answered { result: work.await, held: Some(permit) },
            Err(busy) => Answered { result: Err(busy), held: None },
        }
    }))
}

/// Per-connection facts a handler needs.
#[derive(Debug)]
pub(crate) struct ConnectionContext {
    /// Where this connection's frames go.
    pub outbox: Outbox,
    /// The next subscription id on this connection.
    pub next_subscription: u64,
    /// The connecting process, as the kernel reported it when it
    /// connected (`SO_PEERCRED`), held by a pidfd since.
    pub peer: Option<PeerProcess>,
    /// The descriptors the connection's first request brought; taken (and
    /// the slot closed) when that request is read.
    pub passed: Option<PassedDescriptors>,
    /// Cancelled once the client has ended its requests (closed its
    /// sending side or the connection): what waits for the client then
    /// stops.
    pub requests_ended: tokio_util::sync::CancellationToken,
}

impl ConnectionContext {
    /// A subscription id not used on this connection yet.
    pub(crate) fn new_subscription_id(&mut self) -> u64 {
        let id = self.next_subscription;
        self.next_subscription += 1;
        id
    }
}

/// Handles one request, at the moment it is read: answers it, or returns
/// the work that will. The host has restored its panes by then.
pub(crate) fn handle(host: &Arc<HostState>, context: &mut ConnectionContext, request: Request) -> Handling {
    let span = tracing::info_span!("request", op = request.name());
    let _entered = span.enter();
    tracing::debug!("request read");
    let host = Arc::clone(host);
    // Descriptors belong to the first request, whatever it is; later ones
    // find the slot gone (and closed) and take no lock.
    let passed = context.passed.take().map(|slot| slot.take_for_first_request()).unwrap_or_default();
    match request {
        Request::AttachTerminal { pane, detach_key } => {
            let ended = context.requests_ended.clone();
            later(terminal_attach::handle_attach_terminal(host, pane, detach_key, passed, ended).in_current_span())
        }
        Request::Start(params) => {
            let catalog = catalog_seen_by(&host, context.peer.as_ref());
            later(async move { handle_start(&host, &catalog, params).await }.in_current_span())
        }
        Request::Send(params) => match input_place(&host, &params.pane) {
            Ok((pane, place)) => later(turns::handle_send(pane, place, params).in_current_span()),
            Err(err) => Err(err).into(),
        },
        Request::Interrupt { pane, terminate } => match input_place(&host, &pane) {
            Ok((pane, place)) => later(interrupt::handle_interrupt(pane, place, terminate).in_current_span()),
            Err(err) => Err(err).into(),
        },
        Request::Ask { pane, text, timeout_ms } => match input_place(&host, &pane) {
            Ok((pane, place)) => later(turns::handle_ask(pane, place, text, timeout_ms).in_current_span()),
            Err(err) => Err(err).into(),
        },
        Request::Notify { pane, token, event, payload } => {
            turns::handle_notify(&host, context.peer.as_ref(), &pane, &token, &event, &payload).into()
        }
        Request::Inspect { pane } => match find(&host, &pane) {
            Ok(found) => {
                let cost = answer_budget::inspect_cost(found.current_progress().size);
                let budget = Arc::clone(&host);
                let work = async move { handle_inspect(&host, &pane) };
                later_within_budget(&budget, cost, work.in_current_span())
            }
            Err(err) => Err(err).into(),
        },
        Request::History { pane, lines } => match find(&host, &pane) {
            Ok(found) => {
                let wanted = lines.unwrap_or(limits::DEFAULT_HISTORY_LINES) as usize;
                let cost = answer_budget::history_cost(found.current_progress().size, found.held_len(), wanted);
                let budget = Arc::clone(&host);
                let work = async move { handle_history(&host, &pane, lines).await };
                later_within_budget(&budget, cost, work.in_current_span())
            }
            Err(err) => Err(err).into(),
        },
        Request::Events { pane, from } => Handling::Now(handle_events(&host, context, &pane, from)),
        Request::Reconnect { pane, generation, offset } => {
            Handling::Now(handle_reconnect(&host, context, &pane, generation, offset))
        }
        Request::Unsubscribe { subscription } => {
            // Connection-level: the connection handles it before dispatch.
            Err(ErrorBody::new(ErrorCode::UnknownSubscription, format!("no subscription {subscription}"))).into()
        }
        Request::Resize { pane, size } => handle_resize(&host, &pane, size).into(),
        Request::List { labels } => {
            let panes = host.registry.all();
            let matching = panes.iter().filter(|pane| labels_match(&pane.info().labels, &labels));
            Ok(Response::Panes { panes: matching.map(|pane| pane.summary()).collect() }).into()
        }
        Request::Watch {} => Handling::Now(handle_watch(&host, context)),
        Request::WaitFor(params) => match find(&host, &params.pane) {
            Ok(pane) => later(wait_for::handle_wait_for(pane, params).in_current_span()),
            Err(err) => Err(err).into(),
        },
        Request::Close { pane } => later(async move { handle_close(&host, &pane).await }.in_current_span()),
        Request::Runtimes {} => {
            let catalog = catalog_seen_by(&host, context.peer.as_ref());
            later(
                async move {
                    let runtimes = host.runtime_gate.runtime_infos(&catalog, &host.receipts).await;
                    Ok(Response::Runtimes { runtimes })
                }
                .in_current_span(),
            )
        }
        Request::Login { runtime, cwd, size } => {
            let catalog = catalog_seen_by(&host, context.peer.as_ref());
            later(async move { handle_login(&host, &catalog, &runtime, cwd.as_deref(), size).await }.in_current_span())
        }
        Request::ProbeRuntime { runtime, model, accept_weaker_boundary } => {
            let catalog = catalog_seen_by(&host, context.peer.as_ref());
            later(
                async move {
                    receipt::handle_probe_runtime(&host, &catalog, &runtime, model.as_deref(), accept_weaker_boundary)
                        .await
                }
                .in_current_span(),
            )
        }
    }
}

/// The runtimes as the connecting process sees the machine: the host's
/// own `PATH`, then the directories of the peer's (`peer_search_path`) it
/// lacks, so that a CLI installed after the host started in a directory
/// only the client searches is found; the host's catalog when the peer's
/// `PATH` cannot be read or adds nothing.
fn catalog_seen_by(host: &HostState, peer: Option<&PeerProcess>) -> Arc<Catalog> {
    peer.and_then(peer_search_path)
        .and_then(|path| host.catalog.with_client_search_path(&path))
        .map(Arc::new)
        .unwrap_or_else(|| Arc::clone(&host.catalog))
}

/// The pane a request writes to, and its place in the pane's input line,
/// taken now.
fn input_place(host: &HostState, id: &PaneId) -> Result<(Arc<Pane>, InputPlace), ErrorBody> {
    let pane = find(host, id)?;
    let place = pane.join_input_line();
    Ok((pane, place))
}

fn find(host: &HostState, id: &PaneId) -> Result<Arc<Pane>, ErrorBody> {
    host.registry.find(id)
}

fn check_size(size: Size) -> Result<Size, ErrorBody> {
    size.check().map_err(|err| ErrorBody::new(ErrorCode::InvalidArgument, err.to_string()))
}

async fn handle_start(host: &HostState, catalog: &Arc<Catalog>, params: StartParams) -> Result<Response, ErrorBody> {
    let size = check_size(params.size.unwrap_or(Size::DEFAULT))?;
    check_labels(&params.labels).map_err(|err| ErrorBody::new(ErrorCode::InvalidArgument, err.to_string()))?;
    check_client_env(&params.env).map_err(|err| ErrorBody::new(ErrorCode::InvalidArgument, err.to_string()))?;
    let plan = catalog.admit(&params).map_err(|err| err.to_error_body())?;
    receipt::require_ready(host, catalog, &params).await?;
    let unenforced = plan.unenforced_profile;
    let response = spawn_pane(host, catalog, plan, params.clone(), size).await?;
    if let (Some(profile), Response::Started(summary)) = (unenforced, &response) {
        tracing::warn!(
            pane = %summary.id,
            runtime = %summary.runtime,
            permission_profile = profile.as_str(),
            "started with a weaker boundary: the runtime cannot enforce the permission profile, and the client accepted that"
        );
    }
    if let (Some(limit), Response::Started(summary)) = (params.max_wall_ms, &response) {
        if let Some(pane) = host.registry.get(&summary.id) {
            turns::enforce_wall_time(pane, Duration::from_millis(limit));
        }
    }
    Ok(response)
}

async fn handle_login(
    host: &HostState,
    catalog: &Arc<Catalog>,
    runtime: &str,
    cwd: Option<&str>,
    size: Option<Size>,
) -> Result<Response, ErrorBody> {
    let size = check_size(size.unwrap_or(Size::DEFAULT))?;
    let plan = catalog.admit_login(runtime, cwd).map_err(|err| err.to_error_body())?;
    let start = StartParams {
        runtime: runtime.to_owned(),
        cwd: cwd.map(str::to_owned),
        size: Some(size),
        ..StartParams::default()
    };
    spawn_pane(host, catalog, plan, start, size).await
}

/// Checks the executable's identity, then spawns: nothing happens in
/// between.
async fn spawn_pane(
    host: &HostState,
    catalog: &Arc<Catalog>,
    plan: LaunchPlan,
    start: StartParams,
    size: Size,
) -> Result<Response, ErrorBody> {
    let _slot = host.start_slot()?;
    host.runtime_gate.check_before_spawn(catalog, &plan).await?;
    // Held until the pane joins the registry, or let go if the start
    // fails: no other start draws this id (its socket's name) meanwhile.
    let id = host.registry.reserve_id();
    let runtime = plan.runtime.clone();
    let pane = Pane::start(id.id().clone(), Launch { plan, start, size }, host.pane_services())
        .await
        .map_err(|err| ErrorBody::new(ErrorCode::SpawnFailed, format!("cannot start {runtime}: {err}")))?;
    tracing::info!(pane = %pane.info().id, runtime = %pane.info().runtime, pid = pane.info().pid, "pane started");
    crate::jitter::at(crate::jitter::Point::BeforePaneJoins).await;
    host.registry.join(id, Arc::clone(&pane));
    Ok(Response::Started(pane.summary()))
}

fn handle_inspect(host: &HostState, id: &PaneId) -> Result<Response, ErrorBody> {
    let pane = find(host, id)?;
    Ok(Response::Inspected(PaneDetail { screen: pane.snapshot(), pane: pane.summary() }))
}

async fn handle_history(host: &HostState, id: &PaneId, lines: Option<u32>) -> Result<Response, ErrorBody> {
    let pane = find(host, id)?;
    let (from, output, size) = pane.held_output();
    let to = from + output.len() as u64;
    let wanted = lines.unwrap_or(limits::DEFAULT_HISTORY_LINES) as usize;
    let lines = history::line_limit(size, wanted);
    // Re-parsing up to a ring's worth of output is CPU work. A scratch
    // model that fails on the output (a panic inside it) fails only this
    // request.
    let rendered = tokio::task::spawn_blocking(move || history::render(&output, size, lines))
        .await
        .ok()
        .flatten()
        .ok_or_else(|| {
            ErrorBody::new(
                ErrorCode::Internal,
                format!("the terminal model failed while re-parsing the output of {id}; its screen is in `inspect`"),
            )
        })?;
    Ok(Response::History(PaneHistory {
        pane: id.clone(),
        from,
        to,
        text: rendered.text,
        truncated: from > 0 || rendered.lines_dropped || lines < wanted,
    }))
}

fn handle_resize(host: &HostState, id: &PaneId, size: Size) -> Result<Response, ErrorBody> {
    let size = check_size(size)?;
    let pane = find(host, id)?;
    pane.resize(size).map_err(|err| ErrorBody::new(ErrorCode::Internal, format!("resizing pane {id}: {err}")))?;
    Ok(Response::Resized { pane: id.clone(), size })
}

async fn handle_close(host: &HostState, id: &PaneId) -> Result<Response, ErrorBody> {
    let pane = find(host, id)?;
    let (status, sweep) = host.close_pane(&pane).await;
    tracing::info!(pane = %id, code = status.code, ended = sweep.ended, survivors = sweep.survivors.len(), "pane closed");
    Ok(Response::Closed { pane: id.clone(), status, sweep: Some(sweep) })
}

fn handle_events(host: &HostState, context: &mut ConnectionContext, id: &PaneId, from: Option<u64>) -> Reply {
    let pane = match find(host, id) {
        Ok(pane) => pane,
        Err(err) => return Err(err).into(),
    };
    let start = match from {
        None => {
            let snapshot = pane.snapshot();
            StreamStart::Snapshot { snapshot, skipped_from: None }
        }
        Some(offset) => match resume_at(&pane, offset) {
            Ok(start) => start,
            Err(err) => return Err(err).into(),
        },
    };
    subscribe(context, pane, start)
}

fn handle_reconnect(
    host: &HostState,
    context: &mut ConnectionContext,
    id: &PaneId,
    generation: u64,
    offset: u64,
) -> Reply {
    let pane = match find(host, id) {
        Ok(pane) => pane,
        Err(err) => return Err(err).into(),
    };
    if generation != pane.info().generation {
        let start = StreamStart::GenerationChanged { previous: generation, snapshot: pane.snapshot() };
        return subscribe(context, pane, start);
    }
    match resume_at(&pane, offset) {
        Ok(start) => subscribe(context, pane, start),
        Err(err) => Err(err).into(),
    }
}

/// Where a stream resuming after `offset` begins: a replay when the ring
/// still holds it; else, for a client behind this host's first offset (it
/// followed the host before a restart), the screen at that first offset,
/// so that the gap is exactly what no host could hand on and every byte
/// this host holds follows; else a snapshot of the screen now. A snapshot
/// says what was skipped.
fn resume_at(pane: &Pane, offset: u64) -> Result<StreamStart, ErrorBody> {
    let end = pane.current_progress().end;
    if offset > end {
        return Err(ErrorBody::new(
            ErrorCode::OffsetOutOfRange,
            format!("offset {offset} is beyond the end of pane {} ({end})", pane.info().id),
        ));
    }
    if pane.ring_holds(offset) {
        return Ok(StreamStart::Replay { from: offset });
    }
    let snapshot = pane.start_snapshot_before(offset).unwrap_or_else(|| pane.snapshot());
    Ok(StreamStart::Snapshot { snapshot, skipped_from: Some(offset) })
}

fn subscribe(context: &mut ConnectionContext, pane: Arc<Pane>, start: StreamStart) -> Reply {
    let cursor = match &start {
        StreamStart::Replay { from } => *from,
        StreamStart::Snapshot { snapshot, .. } | StreamStart::GenerationChanged { snapshot, .. } => snapshot.offset,
    };
    let id = context.new_subscription_id();
    let subscription =
        Subscription { subscription: id, pane: pane.info().id.clone(), generation: pane.info().generation, start };
    let size = pane.current_progress().size;
    let next_signal = pane.first_signal_at(cursor);
    let task =
        SubscriptionTask { id, pane, cursor, size, next_signal, sink: EventSink::Connection(context.outbox.clone()) };
    Reply { result: Ok(Response::Subscribed(subscription)), then: Some(Follow::Pane(task)) }
}

/// `watch`: every pane now, then the news. The feed is followed before the
/// list is taken, so nothing between the two is missed (an event may
/// repeat what the list shows).
fn handle_watch(host: &Arc<HostState>, context: &mut ConnectionContext) -> Reply {
    let news = host.registry.follow_news();
    let panes = host.registry.summaries();
    let id = context.new_subscription_id();
    let lister = Arc::clone(host);
    let list_panes = Box::new(move || lister.registry.summaries());
    let task = WatchTask { id, news, list_panes, outbox: context.outbox.clone() };
    Reply { result: Ok(Response::Watching { subscription: id, panes }), then: Some(Follow::Host(task)) }
}
