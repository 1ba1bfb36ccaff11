//! Who may use the web terminal: the Host check, the access token, the
//! Origin check, and keeping the token out of logs.
//!
//! - Every request must name, in its `Host`, a name this server serves:
//!   its loopback names with its port (`127.0.0.1:P`, `localhost:P`,
//!   `[::1]:P`), or, with `--allow-remote`, the address it listens on and
//!   the names given with `--host-name`; else 421. A page of another site
//!   whose name was made to resolve to this machine (DNS rebinding) sends
//!   its own name and is refused before anything else.
//! - Each run makes a fresh token: 32 bytes from `/dev/urandom`, in hex.
//!   The printed URL carries it in its fragment (`/#token=T`), which the
//!   browser never sends to a server; the page keeps it in the tab's
//!   `sessionStorage`, which only this origin (scheme, host *and port*) can
//!   read. No cookie is set: a browser sends a host's cookies to every port
//!   of that host, so any other local web server could read one.
//! - The page's files are public (they hold no data). `GET /api/panes`
//!   needs the token as `Authorization: Bearer T`; a WebSocket upgrade as
//!   the subprotocol `panehost.token.T` (beside `panehost`, the one the
//!   server picks), since a page cannot set headers on a WebSocket; a
//!   program may pass `?token=T` instead. Else 401. `GET /?token=T` (an
//!   address from before) is sent on to `/#token=T`.
//! - A WebSocket upgrade, and any request that is not GET, HEAD or OPTIONS,
//!   must come with an `Origin` that is this server's own origin (the
//!   scheme and the `Host` the request was sent to); else 403.
//! - Request logs print URLs through [`redact_uri`]; the subprotocol header
//!   is never logged.
//! - A connection whose request carries the token (after the Host and
//!   Origin checks) is marked as the token holder's: it is never closed to
//!   make room for another ([`super::connection_table`]).

use super::connection_table::ConnectionHandle;
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

/// The token, and the names this server answers to.
#[derive(Debug)]
pub(super) struct Auth {
    token: Token,
    /// Every `Host` a request may name, lowercase, with the port.
    hosts: Vec<String>,
}

/// The WebSocket subprotocol the page asks for and the server picks.
pub(super) const SUBPROTOCOL: &str = "panehost";

/// The prefix of the subprotocol that carries the token.
const TOKEN_SUBPROTOCOL: &str = "panehost.token.";

impl Auth {
    /// The server on `listen` accepts `token`, for requests naming one of
    /// its loopback names, its own address, or one of `names` (each with
    /// the port).
    pub(super) fn new(token: Token, listen: std::net::SocketAddr, names: &[String]) -> Auth {
        let port = listen.port();
        let mut hosts = vec![format!("127.0.0.1:{port}"), format!("localhost:{port}"), format!("[::1]:{port}")];
        hosts.push(listen.to_string());
        hosts.extend(names.iter().map(|name| format!("{name}:{port}")));
        let mut hosts: Vec<String> = hosts.into_iter().map(|host| host.to_ascii_lowercase()).collect();
        hosts.sort();
        hosts.dedup();
        Auth { token, hosts }
    }

    /// The token, for the one URL printed at start.
    pub(super) fn token(&self) -> &str {
        &self.token.0
    }

    /// True when `host` (a `Host` header) is one this server serves.
    fn serves(&self, host: &str) -> bool {
        let host = host.to_ascii_lowercase();
        self.hosts.contains(&host)
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

    /// True when the request carries the token: `Authorization: Bearer T`,
    /// the subprotocol `panehost.token.T`, or `?token=T`.
    fn carries_token(&self, headers: &HeaderMap, uri: &Uri) -> bool {
        let bearer = headers
            .get_all(header::AUTHORIZATION)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .filter_map(|value| value.strip_prefix("Bearer "))
            .any(|token| self.is_token(token.trim()));
        let subprotocol = headers
            .get_all(header::SEC_WEBSOCKET_PROTOCOL)
            .iter()
            .filter_map(|value| value.to_str().ok())
            .flat_map(|value| value.split(','))
            .filter_map(|protocol| protocol.trim().strip_prefix(TOKEN_SUBPROTOCOL))
            .any(|token| self.is_token(token));
        let query = query_param(uri.query(), "token").is_some_and(|token| self.is_token(&token));
        bearer || subprotocol || query
    }
}

/// The middleware in front of every route: logs the request (token
/// redacted), checks the Host, the Origin where it matters, then the token
/// where it is needed; adds the security headers to every answer.
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
    let host = headers.get(header::HOST).and_then(|value| value.to_str().ok()).unwrap_or("");
    if !auth.serves(host) {
        tracing::info!(host, "refused a request for a name this server does not serve");
        return refusal(
            StatusCode::MISDIRECTED_REQUEST,
            "421 Misdirected Request: this server answers to its own names only (see `panehost web --help`).",
        );
    }
    if needs_same_origin(request.method(), headers) && !is_same_origin(headers) {
        tracing::info!(origin = ?headers.get(header::ORIGIN), "refused a request from a foreign origin");
        return refusal(
            StatusCode::FORBIDDEN,
            "403 Forbidden: this request must come from the web terminal's own page.",
        );
    }
    let path = request.uri().path();
    let needs_token = path == "/ws" || path.starts_with("/api/");
    let query_token = query_param(request.uri().query(), "token");
    if request.method() == Method::GET && path == "/" && !is_upgrade(headers) {
        if let Some(token) = query_token {
            return to_fragment(request.uri(), &token);
        }
    }
    let carries_token = auth.carries_token(headers, request.uri());
    if carries_token {
        // The token holder's connections are never closed to make room.
        if let Some(connection) = request.extensions().get::<ConnectionHandle>() {
            connection.vouch();
        }
    }
    if !needs_token || carries_token {
        return next.run(request).await;
    }
    refusal(
        StatusCode::UNAUTHORIZED,
        "401 Unauthorized: open the URL that `panehost web` printed when it started (it carries the access token).",
    )
}

/// An address of the page with the token in its query (as printed before)
/// sent on to the same address with the token in its fragment, which the
/// page keeps and the browser never sends.
fn to_fragment(uri: &Uri, token: &str) -> Response {
    let token: String = token.chars().filter(char::is_ascii_hexdigit).collect();
    let location = format!("{}#token={token}", without_token(uri));
    let mut response = StatusCode::SEE_OTHER.into_response();
    if let Ok(location) = HeaderValue::from_str(&location) {
        response.headers_mut().insert(header::LOCATION, location);
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
        Auth::new(Token::from_bytes(&[0xab; TOKEN_BYTES]), "127.0.0.1:8080".parse().unwrap(), &[])
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
    fn the_token_comes_as_a_bearer_a_subprotocol_or_a_query() {
        let auth = auth();
        let token = "ab".repeat(32);
        let bare: Uri = "/api/panes".parse().unwrap();
        assert!(auth.carries_token(&headers(&[("authorization", &format!("Bearer {token}"))]), &bare));
        let protocols = format!("panehost, panehost.token.{token}");
        assert!(auth.carries_token(&headers(&[("sec-websocket-protocol", &protocols)]), &bare));
        assert!(auth.carries_token(&HeaderMap::new(), &format!("/ws?pane=p1&token={token}").parse().unwrap()));
        assert!(!auth.carries_token(&headers(&[("authorization", "Bearer 00")]), &bare));
        assert!(!auth.carries_token(&headers(&[("cookie", &format!("panehost_web_8080={token}"))]), &bare));
        assert!(!auth.carries_token(&HeaderMap::new(), &bare));
    }

    #[test]
    fn only_the_names_of_this_server_are_served() {
        let auth = auth();
        for served in ["127.0.0.1:8080", "localhost:8080", "LOCALHOST:8080", "[::1]:8080"] {
            assert!(auth.serves(served), "{served}");
        }
        for foreign in ["evil.example:8080", "127.0.0.1:9090", "localhost", "", "127.0.0.1:8080.evil.example"] {
            assert!(!auth.serves(foreign), "{foreign}");
        }
        let remote =
            Auth::new(Token::from_bytes(&[1; TOKEN_BYTES]), "10.0.0.5:7000".parse().unwrap(), &["box.lan".into()]);
        assert!(remote.serves("10.0.0.5:7000") && remote.serves("box.lan:7000"));
        assert!(!remote.serves("evil.example:7000"));
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
