//! The JSON routes that change or describe the host, beside the pane
//! list: the runtimes a pane can be started with, starting a pane, and
//! closing one.
//!
//! | route | answer |
//! |---|---|
//! | `GET /api/runtimes` | the host's `runtimes` answer, `{"runtimes": [...]}` |
//! | `POST /api/panes` | starts a pane: `201` with its summary (the `started` answer) |
//! | `POST /api/panes/{pane}/close` | closes a pane: the `closed` answer |
//!
//! Every failure is `{"error": {"code", "message", "limitation"}}`, the
//! protocol's error body: the host's own (`RUNTIME_NOT_READY`,
//! `UNKNOWN_PANE`, ...) or one of [`code`]. A start's body is read up to
//! [`MAX_START_BODY`] bytes and checked field by field before anything
//! reaches the host. The guard in front ([`super::auth`]) asks for the
//! token on every `/api/` route and for the page's own `Origin` on every
//! `POST`.

use super::server::AppState;
use super::wire;
use crate::ClientError;
use axum::body::{to_bytes, Body};
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use panehost_ipc::runtime::permission_profile;
use panehost_ipc::{check_labels, Labels};
use panehost_ipc::{ErrorBody, PaneId, Request, Response as Answer, StartParams};
use serde::Deserialize;
use std::sync::Arc;

/// Largest body of a start, in bytes: a runtime, a directory, 32 labels
/// of at most 64 + 256 bytes and a profile fit with room to spare.
pub(super) const MAX_START_BODY: usize = 16 * 1024;

/// Longest runtime id a start may name, in bytes.
const MAX_RUNTIME_LEN: usize = 64;

/// Longest working directory a start may name, in bytes (Linux's `PATH_MAX`).
const MAX_CWD_LEN: usize = 4096;

/// Longest pane id a close may name, in bytes.
const MAX_PANE_ID_LEN: usize = 128;

/// Codes of the errors these routes report themselves.
pub(super) mod code {
    /// The request's body or path is not what the route takes.
    pub(crate) const BAD_REQUEST: &str = "BAD_REQUEST";
    /// The body is longer than the route reads.
    pub(crate) const BODY_TOO_LARGE: &str = "BODY_TOO_LARGE";
    /// The body is not `application/json`.
    pub(crate) const UNSUPPORTED_MEDIA_TYPE: &str = "UNSUPPORTED_MEDIA_TYPE";
}

/// What the page sends to start a pane: the fields of the protocol's
/// `start` that the page's form offers.
#[derive(Debug, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields)]
pub(super) struct StartForm {
    /// The runtime's id, as `runtimes` lists it.
    runtime: String,
    /// The working directory, absolute; `None`: the host's default.
    #[serde(default)]
    cwd: Option<String>,
    /// Labels, `{name: value}`, within the protocol's bounds.
    #[serde(default)]
    labels: Labels,
    /// `read_only`, `workspace_write` or `full_access`; `None`: the
    /// runtime's default.
    #[serde(default)]
    permission_profile: Option<String>,
}

impl StartForm {
    /// Reads and checks a start's body.
    pub(super) fn parse(body: &[u8]) -> Result<StartForm, String> {
        let form: StartForm = serde_json::from_slice(body).map_err(|error| format!("not a start: {error}"))?;
        if form.runtime.is_empty() || form.runtime.len() > MAX_RUNTIME_LEN {
            return Err(format!("runtime must be 1 to {MAX_RUNTIME_LEN} bytes"));
        }
        if let Some(cwd) = &form.cwd {
            if cwd.len() > MAX_CWD_LEN || !cwd.starts_with('/') || cwd.contains('\0') {
                return Err(format!("cwd must be an absolute path of at most {MAX_CWD_LEN} bytes"));
            }
        }
        check_labels(&form.labels).map_err(|error| error.to_string())?;
        if let Some(profile) = &form.permission_profile {
            if !permission_profile::ALL.contains(&profile.as_str()) {
                return Err(format!("permission_profile must be one of {}", permission_profile::ALL.join(", ")));
            }
        }
        Ok(form)
    }

    /// The protocol's `start`.
    fn into_params(self) -> StartParams {
        StartParams {
            runtime: self.runtime,
            cwd: self.cwd,
            labels: self.labels,
            permission_profile: self.permission_profile,
            ..StartParams::default()
        }
    }
}

/// `GET /api/runtimes`: the host's `runtimes` answer.
pub(super) async fn runtimes(State(state): State<Arc<AppState>>) -> Response {
    let result = state.host.with_client(|client| async move { client.runtimes().await }).await;
    match result {
        Ok(runtimes) => json(StatusCode::OK, &super::super::json::answer(Answer::Runtimes { runtimes })),
        Err(error) => host_failure(&error),
    }
}

/// `POST /api/panes`: starts a pane from a [`StartForm`].
pub(super) async fn start(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    let is_json = headers
        .get(header::CONTENT_TYPE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.split(';').next().is_some_and(|kind| kind.trim() == "application/json"));
    if !is_json {
        return own_failure(StatusCode::UNSUPPORTED_MEDIA_TYPE, code::UNSUPPORTED_MEDIA_TYPE, "send application/json");
    }
    let Ok(body) = to_bytes(body, MAX_START_BODY).await else {
        return own_failure(
            StatusCode::PAYLOAD_TOO_LARGE,
            code::BODY_TOO_LARGE,
            format!("a start's body is at most {MAX_START_BODY} bytes"),
        );
    };
    let form = match StartForm::parse(&body) {
        Ok(form) => form,
        Err(problem) => return own_failure(StatusCode::BAD_REQUEST, code::BAD_REQUEST, problem),
    };
    let params = form.into_params();
    // Not retried on a lost connection: the host may have started it.
    let result = async { state.host.client().await?.start(params).await }.await;
    match result {
        Ok(pane) => json(StatusCode::CREATED, &super::super::json::answer(Answer::Started(pane))),
        Err(error) => host_failure(&error),
    }
}

/// `POST /api/panes/{pane}/close`: closes a pane.
pub(super) async fn close(State(state): State<Arc<AppState>>, Path(pane): Path<String>) -> Response {
    if pane.is_empty() || pane.len() > MAX_PANE_ID_LEN {
        return own_failure(StatusCode::BAD_REQUEST, code::BAD_REQUEST, "no such pane id");
    }
    let request = Request::Close { pane: PaneId(pane) };
    let result = async { state.host.client().await?.request(request).await }.await;
    match result {
        Ok(answer @ Answer::Closed { .. }) => json(StatusCode::OK, &super::super::json::answer(answer)),
        Ok(other) => own_failure(
            StatusCode::BAD_GATEWAY,
            wire::code::HOST_UNREACHABLE,
            format!("the host answered close with {}", other.name()),
        ),
        Err(error) => host_failure(&error),
    }
}

/// The status a failure is answered with: `502` when the host could not be
/// reached, `404` for a pane it does not know, `422` for any other refusal.
fn status_of(body: &ErrorBody) -> StatusCode {
    match body.code.as_str() {
        wire::code::HOST_UNREACHABLE => StatusCode::BAD_GATEWAY,
        "UNKNOWN_PANE" => StatusCode::NOT_FOUND,
        _ => StatusCode::UNPROCESSABLE_ENTITY,
    }
}

fn host_failure(error: &ClientError) -> Response {
    let body = wire::error_body(error);
    tracing::info!(code = body.code, message = body.message, "the host refused a request of the page");
    json(status_of(&body), &serde_json::json!({ "error": body }))
}

fn own_failure(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    json(status, &serde_json::json!({ "error": wire::own_error(code, message) }))
}

/// A JSON answer.
pub(super) fn json(status: StatusCode, value: &serde_json::Value) -> Response {
    let mut response = (status, value.to_string()).into_response();
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_start_is_read_and_bounded() {
        let form = StartForm::parse(
            br#"{"runtime":"shell","cwd":"/tmp","labels":{"task":"T-1"},"permission_profile":"read_only"}"#,
        )
        .unwrap();
        let params = form.into_params();
        assert_eq!(params.runtime, "shell");
        assert_eq!(params.cwd.as_deref(), Some("/tmp"));
        assert_eq!(params.labels.get("task").map(String::as_str), Some("T-1"));
        assert_eq!(params.permission_profile.as_deref(), Some("read_only"));
        assert_eq!(StartForm::parse(br#"{"runtime":"shell"}"#).unwrap().into_params().cwd, None);

        let refused = |body: &str| StartForm::parse(body.as_bytes()).unwrap_err();
        assert!(refused(r#"{"runtime":""}"#).contains("runtime"));
        assert!(refused(&format!(r#"{{"runtime":"{}"}}"#, "x".repeat(65))).contains("runtime"));
        assert!(refused(r#"{"runtime":"shell","cwd":"tmp"}"#).contains("absolute"));
        assert!(refused(r#"{"runtime":"shell","labels":{"bad name":"x"}}"#).contains("label name"));
        let many: Vec<String> = (0..33).map(|i| format!(r#""l{i}":"v""#)).collect();
        assert!(refused(&format!(r#"{{"runtime":"shell","labels":{{{}}}}}"#, many.join(","))).contains("too many"));
        assert!(refused(r#"{"runtime":"shell","permission_profile":"root"}"#).contains("permission_profile"));
        assert!(refused(r#"{"runtime":"shell","command":["rm"]}"#).contains("unknown field"));
        assert!(refused("[]").contains("not a start"));
    }

    #[test]
    fn failures_carry_a_status_that_fits() {
        assert_eq!(status_of(&wire::own_error("HOST_UNREACHABLE", "")), StatusCode::BAD_GATEWAY);
        assert_eq!(status_of(&wire::own_error("UNKNOWN_PANE", "")), StatusCode::NOT_FOUND);
        assert_eq!(status_of(&wire::own_error("RUNTIME_NOT_READY", "")), StatusCode::UNPROCESSABLE_ENTITY);
    }
}
