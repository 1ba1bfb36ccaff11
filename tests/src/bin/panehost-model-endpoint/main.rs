//! `panehost-model-endpoint`: a local HTTP server that plays the model for
//! real agent CLIs, so their turns complete offline with scripted answers.
//!
//! # Command line
//!
//! ```text
//! panehost-model-endpoint [--port N] [--bind ADDR] [--script FILE]
//!                         [--delay-ms N] [--model NAME] [--log-bodies]
//! ```
//!
//! * `--port N`: the port, default 0 (an ephemeral one).
//! * `--bind ADDR`: the address, default `127.0.0.1`. Anything but a loopback
//!   address (`127.0.0.0/8`, `::1`, `localhost`) is refused: exit 2.
//! * `--script FILE`: scripted answers (see `script.rs`), tried before the
//!   built-in `PING`, `SLOW` and echo rules.
//! * `--delay-ms N`: waited before the first byte of every model answer.
//! * `--model NAME`: the one model the model lists show (default `test-model`).
//!   Requests may name any model; answers repeat the name they were given.
//! * `--log-bodies`: also log each request body to stderr.
//!
//! The first stdout line is `listening on http://127.0.0.1:PORT` (flushed).
//! Every request is logged to stderr as `#N METHOD PATH?QUERY`, then the
//! prompt and the rule that answered, then the status, and for streams
//! whether they completed or the client disconnected.
//!
//! # Routes
//!
//! | route | dialect |
//! |---|---|
//! | `POST /v1/chat/completions` | OpenAI chat completions (`stream: true` for SSE) |
//! | `POST /v1/responses` | OpenAI responses (`stream: true` for SSE) |
//! | `POST /v1/messages` | Anthropic messages (`stream: true` for SSE) |
//! | `POST /v1/messages/count_tokens` | Anthropic token count |
//! | `POST /v1beta/models/{model}:generateContent` | Gemini (also under `/v1/models/`) |
//! | `POST /v1beta/models/{model}:streamGenerateContent?alt=sse` | Gemini SSE |
//! | `POST /v1beta/models/{model}:countTokens` | Gemini token count |
//! | `GET /v1/models`, `GET /v1/models/{id}` | OpenAI model list and model |
//! | `GET /v1beta/models`, `GET /v1beta/models/{model}` | Gemini model list and model |
//!
//! Anything else is a 404 (405 for a known path with another method) with a
//! JSON error body that OpenAI, Anthropic and Gemini clients can all read.

mod anthropic;
mod gemini;
mod openai_chat;
mod openai_responses;
mod script;
mod sse;
mod tools;

use axum::body::Bytes;
use axum::extract::{DefaultBodyLimit, Request, State};
use axum::http::StatusCode;
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use script::{Answer, Script};
use serde_json::{json, Value};
use std::io::Write;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};
use tools::{Call, Exchange};

const USAGE: &str = "\
usage: panehost-model-endpoint [--port N] [--bind ADDR] [--script FILE]
                               [--delay-ms N] [--model NAME] [--log-bodies]
";

/// What every handler shares.
#[derive(Debug)]
pub struct App {
    pub script: Script,
    pub delay: Duration,
    pub model: String,
    pub log_bodies: bool,
    requests: AtomicU64,
}

pub type Shared = Arc<App>;

/// The number the log gives a request.
#[derive(Clone, Copy, Debug)]
pub struct RequestId(pub u64);

/// One model answer, ready for a dialect to render.
#[derive(Debug)]
pub struct Turn {
    pub request: u64,
    pub model: String,
    pub answer: Answer,
    /// The tool call the model makes instead of a text answer.
    pub call: Option<Call>,
    pub pieces: Vec<String>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub created: u64,
}

impl Turn {
    pub fn total_tokens(&self) -> u64 {
        self.input_tokens + self.output_tokens
    }

    /// The steps of the answer's text, paced by its word delay.
    pub fn text_steps(&self, frame: impl FnMut(&str, bool) -> Bytes) -> Vec<sse::Step> {
        sse::pieces(&self.pieces, self.answer.word_delay, frame)
    }

    /// For a whole (non-streamed) answer: waits as long as streaming it would
    /// take. Logs if the client leaves first (the wait is then dropped).
    pub async fn wait_whole(&self) {
        struct Watch(u64, bool);
        impl Drop for Watch {
            fn drop(&mut self) {
                if !self.1 {
                    eprintln!("#{} client disconnected before the answer; stopped", self.0);
                }
            }
        }
        let time = self.answer.streaming_time();
        if time.is_zero() {
            return;
        }
        let mut watch = Watch(self.request, false);
        tokio::time::sleep(time).await;
        watch.1 = true;
    }
}

impl App {
    /// Chooses the answer for a request's prompt (a tool call, when its
    /// rule asks for one and the request declares a tool that writes), logs
    /// it, and waits the delay before the first byte.
    pub async fn turn(&self, request: RequestId, model: &str, exchange: &Exchange, stream: bool) -> Turn {
        let prompt = &exchange.prompt;
        let mut answer = self.script.answer(prompt);
        let (call, note) = tools::settle(&mut answer, exchange, format!("call_{}", request.0));
        let pieces = answer.pieces();
        eprintln!(
            "#{} prompt {:?} -> {} ({} words, {})",
            request.0,
            shorten(&prompt.text, 120),
            answer.rule,
            script::words(&answer.text),
            if stream { "streamed" } else { "whole" }
        );
        if let Some(note) = note {
            eprintln!("#{} {}", request.0, shorten(&note, 2000));
        }
        let delay = self.delay + answer.delay;
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        Turn {
            request: request.0,
            model: if model.is_empty() { self.model.clone() } else { model.to_string() },
            input_tokens: script::words(&prompt.text),
            output_tokens: script::words(&answer.text),
            answer,
            call,
            pieces,
            created: SystemTime::now().duration_since(UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0),
        }
    }

    /// Parses a JSON request body, logging it when asked to.
    pub fn body(&self, request: RequestId, body: &Bytes) -> Result<Value, BadBody> {
        if self.log_bodies {
            eprintln!("#{} body {}", request.0, String::from_utf8_lossy(body));
        }
        serde_json::from_slice(body).map_err(|e| BadBody(e.to_string()))
    }
}

/// A request body that is not JSON: a 400.
#[derive(Debug)]
pub struct BadBody(String);

impl IntoResponse for BadBody {
    fn into_response(self) -> Response {
        error(StatusCode::BAD_REQUEST, "invalid_request_error", &format!("request body is not JSON: {}", self.0))
    }
}

/// A JSON error that the OpenAI, Anthropic and Gemini clients all parse:
/// `{"type":"error","error":{"type","message","code","status"}}`.
pub fn error(status: StatusCode, kind: &str, message: &str) -> Response {
    let body = json!({
        "type": "error",
        "error": {
            "type": kind,
            "message": message,
            "code": status.as_u16(),
            "status": status.canonical_reason().unwrap_or("").to_uppercase().replace(' ', "_"),
        }
    });
    (status, Json(body)).into_response()
}

/// The text parts of a message's `content`: a string, or a list of parts
/// whose `text` is taken when their `type` is one of `text_types` (or absent).
pub fn content_text<'a>(content: &'a Value, text_types: &[&str]) -> Vec<&'a str> {
    match content {
        Value::String(text) => vec![text.as_str()],
        Value::Array(parts) => parts
            .iter()
            .filter(|part| match part["type"].as_str() {
                None => true,
                Some(kind) => text_types.contains(&kind),
            })
            .filter_map(|part| part["text"].as_str())
            .collect(),
        _ => Vec::new(),
    }
}

/// `text` cut at `max` characters, with `…` when it was longer.
pub fn shorten(text: &str, max: usize) -> String {
    let mut chars = text.chars();
    let short: String = chars.by_ref().take(max).collect();
    if chars.next().is_some() {
        format!("{short}…")
    } else {
        short
    }
}

async fn log_requests(State(app): State<Shared>, mut req: Request, next: Next) -> Response {
    let id = app.requests.fetch_add(1, Ordering::Relaxed) + 1;
    let target = req.uri().path_and_query().map(|p| p.as_str().to_string()).unwrap_or_default();
    eprintln!("#{id} {} {target}", req.method());
    req.extensions_mut().insert(RequestId(id));
    let started = Instant::now();
    let response = next.run(req).await;
    eprintln!("#{id} {} after {} ms", response.status().as_u16(), started.elapsed().as_millis());
    response
}

async fn not_found(req: Request) -> Response {
    error(StatusCode::NOT_FOUND, "not_found_error", &format!("no route for {} {}", req.method(), req.uri().path()))
}

async fn wrong_method(req: Request) -> Response {
    error(
        StatusCode::METHOD_NOT_ALLOWED,
        "invalid_request_error",
        &format!("{} is not served on {}", req.method(), req.uri().path()),
    )
}

fn router(app: Shared) -> Router {
    Router::new()
        .route("/v1/chat/completions", post(openai_chat::completions))
        .route("/v1/responses", post(openai_responses::responses))
        .route("/v1/messages", post(anthropic::messages))
        .route("/v1/messages/count_tokens", post(anthropic::count_tokens))
        .route("/v1/models", get(openai_chat::models))
        .route("/v1/models/{target}", get(openai_chat::model).post(gemini::generate))
        .route("/v1beta/models", get(gemini::models))
        .route("/v1beta/models/{target}", get(gemini::model).post(gemini::generate))
        .fallback(not_found)
        .method_not_allowed_fallback(wrong_method)
        .layer(DefaultBodyLimit::max(64 << 20))
        .layer(middleware::from_fn_with_state(app.clone(), log_requests))
        .with_state(app)
}

struct Options {
    port: u16,
    bind: IpAddr,
    script: Option<PathBuf>,
    delay_ms: u64,
    model: String,
    log_bodies: bool,
}

enum Parsed {
    Run(Options),
    Help,
}

fn parse_args(args: impl IntoIterator<Item = String>) -> Result<Parsed, String> {
    let mut options = Options {
        port: 0,
        bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
        script: None,
        delay_ms: 0,
        model: "test-model".into(),
        log_bodies: false,
    };
    let mut args = args.into_iter();
    while let Some(arg) = args.next() {
        let (name, inline) = match arg.split_once('=') {
            Some((name, value)) if name.starts_with("--") => (name.to_string(), Some(value.to_string())),
            _ => (arg.clone(), None),
        };
        let mut value = || inline.clone().or_else(|| args.next()).ok_or_else(|| format!("{name} needs a value"));
        match name.as_str() {
            "--help" | "-h" => return Ok(Parsed::Help),
            "--port" => {
                let v = value()?;
                options.port = v.parse().map_err(|_| format!("--port: not a port number: {v}"))?;
            }
            "--bind" => {
                let v = value()?;
                options.bind = loopback(&v)?;
            }
            "--script" => options.script = Some(PathBuf::from(value()?)),
            "--delay-ms" => {
                let v = value()?;
                options.delay_ms = v.parse().map_err(|_| format!("--delay-ms: not a number: {v}"))?;
            }
            "--model" => options.model = value()?,
            "--log-bodies" if inline.is_none() => options.log_bodies = true,
            _ => return Err(format!("unknown argument: {arg}")),
        }
    }
    Ok(Parsed::Run(options))
}

/// The address to bind, which must be a loopback one.
fn loopback(text: &str) -> Result<IpAddr, String> {
    let addr: IpAddr = if text == "localhost" {
        IpAddr::V4(Ipv4Addr::LOCALHOST)
    } else {
        let bare = text.trim_start_matches('[').trim_end_matches(']');
        bare.parse().map_err(|_| format!("--bind: not an IP address: {text}"))?
    };
    if !addr.is_loopback() {
        return Err(format!(
            "refusing to bind {addr}: not a loopback address; this fixture only listens on 127.0.0.0/8 or ::1"
        ));
    }
    Ok(addr)
}

fn main() -> ExitCode {
    let options = match parse_args(std::env::args().skip(1)) {
        Ok(Parsed::Run(options)) => options,
        Ok(Parsed::Help) => {
            print!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(why) => {
            eprint!("error: {why}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let script = match &options.script {
        Some(path) => match Script::load(path) {
            Ok(script) => script,
            Err(why) => {
                eprintln!("error: {why}");
                return ExitCode::from(2);
            }
        },
        None => Script::builtin(),
    };
    let app = Arc::new(App {
        script,
        delay: Duration::from_millis(options.delay_ms),
        model: options.model,
        log_bodies: options.log_bodies,
        requests: AtomicU64::new(0),
    });
    let runtime = match tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build() {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(serve(app, SocketAddr::new(options.bind, options.port)))
}

async fn serve(app: Shared, addr: SocketAddr) -> ExitCode {
    let listener = match tokio::net::TcpListener::bind(addr).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("error: cannot bind {addr}: {e}");
            return ExitCode::FAILURE;
        }
    };
    let local = match listener.local_addr() {
        Ok(local) => local,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "listening on http://{local}");
        let _ = out.flush();
    }
    eprintln!("listening on http://{local}");
    if let Err(e) = axum::serve(listener, router(app)).await {
        eprintln!("error: {e}");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}

/// The request's model name, or the configured one.
pub fn model_or<'a>(app: &'a App, body: &'a Value) -> &'a str {
    body["model"].as_str().filter(|m| !m.is_empty()).unwrap_or(&app.model)
}
