//! The routes, and the state they share.
//!
//! | route | what |
//! |---|---|
//! | `GET /` | the page (index.html) |
//! | `GET /{file}.js`, `/{file}.css` | the page's own modules and styles |
//! | `GET /vendor/{file}` | xterm.js and its addons, from node_modules |
//! | `GET /api/panes` | the host's `panes` answer, as `panehost ls --json` prints it |
//! | `POST /api/panes`, `POST /api/panes/{pane}/close`, `GET /api/runtimes` | starting and closing panes, the runtimes ([`super::pane_api`]) |
//! | `GET /api/watch` | the host's `watch`, one JSON object per line ([`super::watch_relay`]) |
//! | `GET /ws?pane=P[&generation=G][&offset=N]` | the WebSocket bridge to one pane |
//!
//! Every route sits behind [`super::auth::guard`].

use super::assets::Assets;
use super::auth::{self, Auth};
use super::bridge::{self, Resume, StreamRequest};
use super::pane_api;
use super::resize_leases::ResizeLeases;
use super::watch_relay;
use super::wire;
use crate::{Client, ClientError, Connector, ReconnectPolicy};
use axum::extract::ws::WebSocketUpgrade;
use axum::extract::{Path, RawQuery, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{middleware, Router};
use panehost_ipc::{PaneId, Response as Answer};
use std::sync::Arc;
use tokio::sync::Mutex;

/// Largest WebSocket message the page may send: input is chunked by the
/// page far below this, so only a misbehaving peer reaches it.
const MAX_WEBSOCKET_MESSAGE: usize = 4 * 1024 * 1024;

/// What every route can reach.
#[derive(Debug)]
pub(super) struct AppState {
    /// The token, and the names this server answers to.
    pub(super) auth: Auth,
    /// The page's files.
    pub(super) assets: Assets,
    /// The host.
    pub(super) host: HostLink,
    /// The sizes to give panes back when their last resizing viewer leaves.
    pub(super) resize_leases: ResizeLeases,
}

/// The routes, behind the guard.
pub(super) fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/", get(index))
        .route("/api/panes", get(list_panes).post(pane_api::start))
        .route("/api/panes/{pane}/close", post(pane_api::close))
        .route("/api/runtimes", get(pane_api::runtimes))
        .route("/api/watch", get(watch_relay::watch))
        .route("/ws", get(websocket))
        .route("/vendor/{file}", get(vendor_file))
        .route("/{file}", get(page_file))
        .layer(middleware::from_fn_with_state(Arc::clone(&state), auth::guard))
        .with_state(state)
}

async fn index(State(state): State<Arc<AppState>>) -> Response {
    state.assets.index().await
}

async fn page_file(State(state): State<Arc<AppState>>, Path(file): Path<String>) -> Response {
    state.assets.page_file(&file).await
}

async fn vendor_file(State(state): State<Arc<AppState>>, Path(file): Path<String>) -> Response {
    state.assets.vendor_file(&file).await
}

/// The host's `panes` answer, `{"panes": [...]}`, as `panehost ls --json`
/// prints it; `{"error": {"code", "message", "limitation"}}` (the
/// protocol's error body) when the host cannot be reached.
async fn list_panes(State(state): State<Arc<AppState>>) -> Response {
    let result = state.host.with_client(|client| async move { client.list().await }).await;
    match result {
        Ok(panes) => json_response(StatusCode::OK, &super::super::json::answer(Answer::Panes { panes })),
        Err(error) => {
            tracing::warn!(%error, "cannot list the panes");
            json_response(StatusCode::BAD_GATEWAY, &serde_json::json!({ "error": wire::error_body(&error) }))
        }
    }
}

/// Upgrades to the bridge of the pane the query names.
async fn websocket(
    State(state): State<Arc<AppState>>,
    RawQuery(query): RawQuery,
    upgrade: WebSocketUpgrade,
) -> Response {
    let request = match stream_request(query.as_deref()) {
        Ok(request) => request,
        Err(problem) => return (StatusCode::BAD_REQUEST, format!("{problem}\n")).into_response(),
    };
    upgrade
        .protocols([auth::SUBPROTOCOL])
        .max_message_size(MAX_WEBSOCKET_MESSAGE)
        .on_upgrade(move |socket| bridge::run(socket, state, request))
}

/// Reads `pane`, `generation` and `offset`.
fn stream_request(query: Option<&str>) -> Result<StreamRequest, String> {
    let pane = query_param(query, "pane").filter(|pane| !pane.is_empty()).ok_or("the query needs a pane")?;
    let number = |name: &str| -> Result<Option<u64>, String> {
        query_param(query, name)
            .map(|value| value.parse::<u64>().map_err(|_| format!("{name} must be a non-negative integer")))
            .transpose()
    };
    let resume = match (number("generation")?, number("offset")?) {
        (Some(generation), Some(offset)) => Resume::Exact { generation, offset },
        (None, Some(offset)) => Resume::From(offset),
        (None, None) => Resume::Screen,
        (Some(_), None) => return Err("generation needs an offset".to_owned()),
    };
    Ok(StreamRequest { pane: PaneId(pane), resume })
}

fn json_response(status: StatusCode, value: &serde_json::Value) -> Response {
    let mut response = (status, value.to_string()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

/// The value of the first `name` parameter of a query, percent-decoded
/// (`+` stays `+`).
pub(super) fn query_param(query: Option<&str>, name: &str) -> Option<String> {
    query?
        .split('&')
        .filter_map(|pair| pair.split_once('=').or(Some((pair, ""))))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| percent_decode(value))
}

fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(high), Some(low)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((high * 16 + low) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The connection for short requests (list, input, resize), shared by every
/// route and reopened after a loss. Subscriptions and interrupts get
/// connections of their own: a subscription's backpressure, or an
/// interrupt's seconds of confirming, must not hold up anyone's keystrokes.
#[derive(Debug)]
pub(super) struct HostLink {
    connector: Connector,
    client: Mutex<Option<Client>>,
}

impl HostLink {
    pub(super) fn new(connector: Connector) -> HostLink {
        HostLink { connector, client: Mutex::new(None) }
    }

    /// Opens new connections (for subscriptions and interrupts).
    pub(super) fn connector(&self) -> &Connector {
        &self.connector
    }

    /// The shared connection, opened (with retries) when there is none.
    pub(super) async fn client(&self) -> Result<Client, ClientError> {
        let mut slot = self.client.lock().await;
        if let Some(client) = slot.as_ref().filter(|client| !client.is_closed()) {
            return Ok(client.clone());
        }
        let connector = &self.connector;
        let client = ReconnectPolicy::default().retry(|| connector.connect()).await?;
        *slot = Some(client.clone());
        Ok(client)
    }

    /// Drops the shared connection, so that the next
    /// [`HostLink::client`] opens a new one. Clones still held elsewhere
    /// keep working as long as the connection does.
    async fn forget(&self) {
        *self.client.lock().await = None;
    }

    /// Runs `request` on the shared connection, and once more on a new one
    /// when the connection was lost.
    pub(super) async fn with_client<T, F, Fut>(&self, request: F) -> Result<T, ClientError>
    where
        F: Fn(Client) -> Fut,
        Fut: std::future::Future<Output = Result<T, ClientError>>,
    {
        match request(self.client().await?).await {
            Err(error) if error.is_connection_lost() => {
                self.forget().await;
                request(self.client().await?).await
            }
            other => other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn query_parameters_are_found_and_decoded() {
        let query = Some("pane=p%31&offset=10&flag&token=abc");
        assert_eq!(query_param(query, "pane").as_deref(), Some("p1"));
        assert_eq!(query_param(query, "offset").as_deref(), Some("10"));
        assert_eq!(query_param(query, "flag").as_deref(), Some(""));
        assert_eq!(query_param(query, "missing"), None);
        assert_eq!(query_param(None, "pane"), None);
        assert_eq!(query_param(Some("a=%zz%4"), "a").as_deref(), Some("%zz%4"));
    }

    #[test]
    fn the_websocket_query_picks_how_to_resume() {
        let request = stream_request(Some("pane=p1")).unwrap();
        assert_eq!((request.pane.as_str(), request.resume), ("p1", Resume::Screen));
        let request = stream_request(Some("pane=p1&offset=7")).unwrap();
        assert_eq!(request.resume, Resume::From(7));
        let request = stream_request(Some("pane=p1&generation=2&offset=7")).unwrap();
        assert_eq!(request.resume, Resume::Exact { generation: 2, offset: 7 });
        assert!(stream_request(Some("offset=7")).is_err());
        assert!(stream_request(Some("pane=p1&generation=2")).is_err());
        assert!(stream_request(Some("pane=p1&offset=-1")).is_err());
    }
}
