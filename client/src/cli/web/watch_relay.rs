//! `GET /api/watch`: the host's `watch` relayed to the page, one JSON
//! object per line (`application/x-ndjson`), for as long as the page reads.
//!
//! ```text
//! {"panes":[{"id":"p1","activity":"idle",...}]}
//! {"event":{"pane_activity":{"pane":"p1","activity":"busy"}}}
//! {"event":{"pane_started":{"pane":{...}}}}
//! {"error":{"code":"HOST_UNREACHABLE","message":"...","limitation":null}}
//! ```
//!
//! `panes` is the `watching` answer's list, sent first and again whenever
//! the relay had to watch afresh (the host connection was lost: a host
//! restart, say); what the page knew before it is replaced, so that
//! nothing read from a host that is gone lingers. `event` is each event of
//! the watch, in the protocol's JSON (`pane_started`, `pane_activity`,
//! `pane_changed`, `pane_exited`, `pane_ended`, `pane_list`). `error` says the host cannot
//! be reached now; the relay keeps trying every [`RETRY_PAUSE`]. An empty
//! line is sent every [`HEARTBEAT`], so that the connection never idles
//! out ([`super::bounds::IDLE_TIMEOUT`]) and a page that left is noticed.
//!
//! The relay watches on a host connection of its own; a page that stops
//! reading fills [`QUEUE`] lines, then the relay stops reading the watch,
//! and the host sends a `pane_list` once it reads again.

use super::server::AppState;
use super::wire;
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use panehost_ipc::Response as Answer;
use serde_json::{json, Value};
use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;
use tokio::sync::mpsc;

/// How often an empty line is sent.
pub(super) const HEARTBEAT: Duration = Duration::from_secs(15);

/// Pause before watching again after the host could not be reached.
pub(super) const RETRY_PAUSE: Duration = Duration::from_secs(1);

/// Lines waiting for the page.
const QUEUE: usize = 64;

/// Starts the relay and answers with its lines.
pub(super) async fn watch(State(state): State<Arc<AppState>>) -> Response {
    let (lines, receiver) = mpsc::channel::<String>(QUEUE);
    tokio::spawn(relay(state, lines));
    let stream = futures_util::stream::unfold(receiver, |mut receiver| async move {
        let line = receiver.recv().await?;
        Some((Ok::<_, Infallible>(line), receiver))
    });
    let mut response = (StatusCode::OK, Body::from_stream(stream)).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/x-ndjson"));
    response
}

/// One line: `value` and a newline.
fn line(value: &Value) -> String {
    let mut text = value.to_string();
    text.push('\n');
    text
}

/// Watches the host and sends what it says until the page is gone.
async fn relay(state: Arc<AppState>, lines: mpsc::Sender<String>) {
    let connector = state.host.connector().clone();
    loop {
        let watched = async { crate::ReconnectPolicy::default().retry(|| connector.connect()).await?.watch().await };
        let (panes, mut events) = tokio::select! {
            watched = watched => match watched {
                Ok(watched) => watched,
                Err(error) => {
                    tracing::info!(%error, "cannot watch the host for the page");
                    if lines.send(line(&json!({ "error": wire::error_body(&error) }))).await.is_err() {
                        return;
                    }
                    tokio::select! {
                        () = tokio::time::sleep(RETRY_PAUSE) => continue,
                        () = lines.closed() => return,
                    }
                }
            },
            () = lines.closed() => return,
        };
        let listed = super::super::json::answer(Answer::Panes { panes });
        if lines.send(line(&listed)).await.is_err() {
            return;
        }
        let mut heartbeat = tokio::time::interval_at(tokio::time::Instant::now() + HEARTBEAT, HEARTBEAT);
        loop {
            tokio::select! {
                event = events.next() => match event {
                    Some(event) => {
                        if lines.send(line(&super::super::json::event_line(&event))).await.is_err() {
                            return;
                        }
                    }
                    // The host connection was lost, or the host ended the
                    // watch (it is stopping): watch afresh.
                    None => break,
                },
                _ = heartbeat.tick() => {
                    if lines.send("\n".to_owned()).await.is_err() {
                        return;
                    }
                }
                () = lines.closed() => return,
            }
        }
        tracing::debug!("the watch ended; watching afresh");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use panehost_ipc::{Event, PaneId};

    #[test]
    fn lines_are_the_protocols_json() {
        let event = Event::PaneActivity { pane: PaneId::from("p1"), activity: "busy".into() };
        assert_eq!(
            line(&super::super::super::json::event_line(&event)),
            "{\"event\":{\"pane_activity\":{\"activity\":\"busy\",\"pane\":\"p1\"}}}\n"
        );
        assert_eq!(line(&super::super::super::json::answer(Answer::Panes { panes: vec![] })), "{\"panes\":[]}\n");
    }
}
