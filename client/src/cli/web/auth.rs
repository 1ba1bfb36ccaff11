//! Who may use the web terminal: the access token, its cookie, the Origin
//! check, and keeping the token out of logs.
//!
//! - Each run makes a fresh token: 32 bytes from `/dev/urandom`, in hex.
//! - `GET /?token=T` with the right token sets a cookie holding it
//!   (`HttpOnly; SameSite=Strict; Path=/`, named after the port, since
//!   cookies do not tell ports apart) and redirects to the same URL without
//!   the token, so that it leaves the address bar and the history.
//! - Every other request, WebSocket upgrades included, needs the cookie or
//!   the token in its query (`?token=T`, for programs); else 401.
//! - A WebSocket upgrade, and any request that is not GET, HEAD or OPTIONS,
//!   must come with an `Origin` that is this server's own origin (the
//!   scheme and the `Host` the request was sent to); else 403. A page of
//!   another site can then neither talk to a pane through the cookie the
//!   browser holds nor change anything.
//! - Request logs print URLs through [`redact_uri`].

use super::server::{query_param, AppState};
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode, Uri};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::fmt::Write as _;
use std::io::Read as _;
use std::sync::Arc;

/// Bytes of randomness in a token.
const TOKEN_BYTES: usize = 32;

/// What replaces the token in logged URLs.
const REDACTED: &str = "REDACTED";

/// A fresh access token: 64 lowercase hex digits.
#[derive(Clone, PartialEq, Eq)]
pub(super) struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(REDACTED)")
    }
}

impl Token {
    /// Reads 32 bytes from `/dev/urandom`.
    pub(super) fn generate() -> std::io::Result<Token> {
        let mut bytes = [0u8; TOKEN_BYTES];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
        Ok(Token::from_bytes(&bytes))
    }

    fn from_bytes(bytes: &[u8]) -> Token {
        let mut text = String::with_capacity(bytes.len() * 2);
        for byte in bytes {
            let _ = write!(text, "{byte:02x}");
        }
        Token(text)
    }
}

/// The token and the cookie that carries it.
#[derive(Debug)]
pub(super) struct Auth {
    token: Token,
    cookie_name: String,
}

impl Auth {
    /// The server on `port` accepts `token`.
    pub(super) fn new(token: Token, port: u16) -> Auth {
        Auth { token, cookie_name: format!("panehost_web_{port}") }
    }

    /// The token, for the one URL printed at start.
    pub(super) fn token(&self) -> &str {
        &self.token.0
    }

    /// Compares in time independent of where the first difference is.
    fn is_token(&self, candidate: &str) -> bool {
        let expected = self.token.0.as_bytes();
        let candidate = candidate.as_bytes();
        if expected.len() != candidate.len() {
            return false;
        }
        expected.iter().zip(candidate).fold(0u8, |acc, (a, b)| acc | (a ^ b)) == 0
    }

    /// True when a `Cookie` header carries the token under our name.
    fn has_cookie(&self, headers: &HeaderMap) -> bool {
        headers
            .get_all(header::COOKIE)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(';'))
            .filter_map(|pair| pair.trim().split_once('='))
            .any(|(name, value)| name == self.cookie_name && self.is_token(value.trim_matches('"')))
    }

    /// The `Set-Cookie` value: a session cookie for this server only.
    fn set_cookie(&self) -> String {
        format!("{}={}; Path=/; HttpOnly; SameSite=Strict", self.cookie_name, self.token.0)
    }
}

/// The middleware in front of every route: logs the request (token
/// redacted), checks the Origin where it matters, then the cookie or the
/// token; adds the security headers to every answer.
pub(super) async fn guard(State(state): State<Arc<AppState>>, request: Request, next: Next) -> Response {
    let method = request.method().clone();
    tracing::debug!(%method, uri = %redact_uri(request.uri()), "request");
    let csp = content_security_policy(request.headers());
    let mut response = check(&state.auth, request, next).await;
    let headers = response.headers_mut();
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    headers.insert(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer"));
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Ok(csp) = HeaderValue::from_str(&csp) {
        headers.insert(header::CONTENT_SECURITY_POLICY, csp);
    }
    tracing::debug!(%method, status = response.status().as_u16(), "answered");
    response
}

async fn check(auth: &Auth, request: Request, next: Next) -> Response {
    let headers = request.headers();
    if needs_same_origin(request.method(), headers) && !is_same_origin(headers) {
        tracing::info!(origin = ?headers.get(header::ORIGIN), "refused a request from a foreign origin");
        return refusal(
            StatusCode::FORBIDDEN,
            "403 Forbidden: this request must come from the web terminal's own page.",
        );
    }
    let query_token = query_param(request.uri().query(), "token");
    let token_ok = query_token.as_deref().is_some_and(|token| auth.is_token(token));
    if token_ok && request.method() == Method::GET && request.uri().path() == "/" && !is_upgrade(headers) {
        return welcome_redirect(auth, request.uri());
    }
    if token_ok || auth.has_cookie(headers) {
        return next.run(request).await;
    }
    refusal(
        StatusCode::UNAUTHORIZED,
        "401 Unauthorized: open the URL that `panehost web` printed when it started (it carries the access token).",
    )
}

/// Sets the cookie and sends the browser to the same URL without the token.
fn welcome_redirect(auth: &Auth, uri: &Uri) -> Response {
    let location = without_token(uri);
    let mut response = StatusCode::SEE_OTHER.into_response();
    let headers = response.headers_mut();
    if let (Ok(location), Ok(cookie)) = (HeaderValue::from_str(&location), HeaderValue::from_str(&auth.set_cookie())) {
        headers.insert(header::LOCATION, location);
        headers.insert(header::SET_COOKIE, cookie);
    }
    response
}

fn refusal(status: StatusCode, text: &'static str) -> Response {
    let mut response = Response::new(Body::from(format!("{text}\n")));
    *response.status_mut() = status;
    response.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    response
}

fn is_upgrade(headers: &HeaderMap) -> bool {
    headers
        .get(header::UPGRADE)
        .and_then(|value| value.to_str().ok())
        .is_some_and(|value| value.eq_ignore_ascii_case("websocket"))
}

/// WebSocket upgrades and state-changing methods.
fn needs_same_origin(method: &Method, headers: &HeaderMap) -> bool {
    is_upgrade(headers) || !matches!(*method, Method::GET | Method::HEAD | Method::OPTIONS)
}

/// `Origin` is `http://` or `https://` followed by exactly the `Host` the
/// request was sent to. A missing Origin, or `null`, is not.
fn is_same_origin(headers: &HeaderMap) -> bool {
    let (Some(origin), Some(host)) = (
        headers.get(header::ORIGIN).and_then(|value| value.to_str().ok()),
        headers.get(header::HOST).and_then(|value| value.to_str().ok()),
    ) else {
        return false;
    };
    let Some(origin_host) = origin.strip_prefix("http://").or_else(|| origin.strip_prefix("https://")) else {
        return false;
    };
    !host.is_empty() && origin_host.eq_ignore_ascii_case(host)
}

/// Scripts, styles and connections from this server only; no framing.
/// xterm.js sets inline styles, hence `'unsafe-inline'` for styles (and
/// only for styles).
fn content_security_policy(headers: &HeaderMap) -> String {
    let mut connect = String::from("'self'");
    let host = headers.get(header::HOST).and_then(|value| value.to_str().ok()).unwrap_or("");
    let plain_host =
        !host.is_empty() && host.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | ':' | '-' | '[' | ']'));
    if plain_host {
        let _ = write!(connect, " ws://{host} wss://{host}");
    }
    format!(
        "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; \
         font-src 'self' data:; connect-src {connect}; frame-ancestors 'none'; base-uri 'none'; form-action 'none'"
    )
}

/// The URI's path and query with every `token` parameter removed.
fn without_token(uri: &Uri) -> String {
    let kept: Vec<&str> = uri
        .query()
        .unwrap_or("")
        .split('&')
        .filter(|pair| !pair.is_empty() && pair.split('=').next() != Some("token"))
        .collect();
    if kept.is_empty() {
        uri.path().to_owned()
    } else {
        format!("{}?{}", uri.path(), kept.join("&"))
    }
}

/// The URI as logs may show it: the value of every `token` parameter is
/// replaced by `REDACTED`.
pub(super) fn redact_uri(uri: &Uri) -> String {
    let Some(query) = uri.query() else {
        return uri.path().to_owned();
    };
    let pairs: Vec<String> = query
        .split('&')
        .map(|pair| match pair.split_once('=') {
            Some((name, _)) if name == "token" => format!("{name}={REDACTED}"),
            _ => pair.to_owned(),
        })
        .collect();
    format!("{}?{}", uri.path(), pairs.join("&"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn auth() -> Auth {
        Auth::new(Token::from_bytes(&[0xab; TOKEN_BYTES]), 8080)
    }

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.append(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn a_token_is_64_hex_digits_and_fresh_each_time() {
        let one = Token::generate().unwrap();
        let two = Token::generate().unwrap();
        assert_eq!(one.0.len(), 64);
        assert!(one.0.bytes().all(|b| b.is_ascii_hexdigit() && !b.is_ascii_uppercase()));
        assert_ne!(one, two);
        assert_eq!(format!("{one:?}"), "Token(REDACTED)");
    }

    #[test]
    fn only_the_exact_token_matches() {
        let auth = auth();
        assert!(auth.is_token(&"ab".repeat(32)));
        assert!(!auth.is_token(&"ab".repeat(31)));
        assert!(!auth.is_token(&format!("{}ac", "ab".repeat(31))));
        assert!(!auth.is_token(""));
    }

    #[test]
    fn the_cookie_is_named_after_the_port_and_locked_down() {
        let auth = auth();
        let cookie = auth.set_cookie();
        assert!(cookie.starts_with(&format!("panehost_web_8080={}", "ab".repeat(32))), "{cookie}");
        assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Strict") && cookie.contains("Path=/"));
        let token = "ab".repeat(32);
        assert!(auth.has_cookie(&headers(&[("cookie", &format!("a=b; panehost_web_8080={token}"))])));
        assert!(!auth.has_cookie(&headers(&[("cookie", &format!("panehost_web_9090={token}"))])));
        assert!(!auth.has_cookie(&headers(&[("cookie", "panehost_web_8080=00")])));
        assert!(!auth.has_cookie(&HeaderMap::new()));
    }

    #[test]
    fn same_origin_means_the_host_the_request_went_to() {
        let ok = headers(&[("host", "127.0.0.1:8080"), ("origin", "http://127.0.0.1:8080")]);
        assert!(is_same_origin(&ok));
        let other_port = headers(&[("host", "127.0.0.1:8080"), ("origin", "http://127.0.0.1:9090")]);
        assert!(!is_same_origin(&other_port));
        let foreign = headers(&[("host", "127.0.0.1:8080"), ("origin", "https://evil.example")]);
        assert!(!is_same_origin(&foreign));
        let suffix = headers(&[("host", "127.0.0.1:8080"), ("origin", "http://127.0.0.1:8080.evil.example")]);
        assert!(!is_same_origin(&suffix));
        assert!(!is_same_origin(&headers(&[("host", "127.0.0.1:8080"), ("origin", "null")])));
        assert!(!is_same_origin(&headers(&[("host", "127.0.0.1:8080")])));
    }

    #[test]
    fn upgrades_and_writes_need_the_same_origin() {
        let upgrade = headers(&[("upgrade", "websocket")]);
        assert!(needs_same_origin(&Method::GET, &upgrade));
        assert!(needs_same_origin(&Method::POST, &HeaderMap::new()));
        assert!(!needs_same_origin(&Method::GET, &HeaderMap::new()));
    }

    #[test]
    fn the_token_never_reaches_a_log_line() {
        let secret = "ab".repeat(32);
        let uri: Uri = format!("/ws?pane=p1&token={secret}&offset=5").parse().unwrap();
        let logged = redact_uri(&uri);
        assert_eq!(logged, "/ws?pane=p1&token=REDACTED&offset=5");
        assert!(!logged.contains(&secret));
        assert_eq!(redact_uri(&"/api/panes".parse().unwrap()), "/api/panes");
    }

    #[test]
    fn the_redirect_drops_only_the_token() {
        let secret = "ab".repeat(32);
        assert_eq!(without_token(&format!("/?token={secret}").parse().unwrap()), "/");
        assert_eq!(without_token(&format!("/?pane=p1&token={secret}").parse().unwrap()), "/?pane=p1");
    }

    #[test]
    fn the_policy_allows_websockets_to_this_host_only() {
        let csp = content_security_policy(&headers(&[("host", "127.0.0.1:8080")]));
        assert!(csp.contains("connect-src 'self' ws://127.0.0.1:8080 wss://127.0.0.1:8080;"), "{csp}");
        let odd = content_security_policy(&headers(&[("host", "x; script-src *")]));
        assert!(odd.contains("connect-src 'self';"), "{odd}");
    }
}
