//! Server-sent events: framing, pacing, and stopping when the client leaves.

use axum::body::{Body, Bytes};
use axum::http::{header, StatusCode};
use axum::response::Response;
use serde_json::Value;
use std::collections::VecDeque;
use std::convert::Infallible;
use std::time::Duration;

/// One frame of a stream, sent after `delay`.
#[derive(Debug)]
pub struct Step {
    pub delay: Duration,
    pub bytes: Bytes,
}

impl Step {
    pub fn now(bytes: Bytes) -> Step {
        Step { delay: Duration::ZERO, bytes }
    }
}

/// `event: NAME` (when named) and `data: JSON`, then a blank line.
pub fn event(name: Option<&str>, data: &Value) -> Bytes {
    let mut frame = String::new();
    if let Some(name) = name {
        frame.push_str("event: ");
        frame.push_str(name);
        frame.push('\n');
    }
    frame.push_str("data: ");
    frame.push_str(&data.to_string());
    frame.push_str("\n\n");
    Bytes::from(frame)
}

/// An event named after its JSON `type` field (OpenAI responses, Anthropic).
pub fn typed(data: Value) -> Bytes {
    let name = data["type"].as_str().unwrap_or("message").to_string();
    event(Some(&name), &data)
}

/// OpenAI's end-of-stream marker.
pub fn done() -> Bytes {
    Bytes::from_static(b"data: [DONE]\n\n")
}

/// Logs the end of a stream: complete, or cut short because the body was
/// dropped, which is what happens when the client goes away.
struct Watch {
    request: u64,
    sent: usize,
    total: usize,
}

impl Drop for Watch {
    fn drop(&mut self) {
        if self.sent == self.total {
            eprintln!("#{} stream complete ({} events)", self.request, self.total);
        } else {
            eprintln!(
                "#{} client disconnected after {} of {} events; stopped streaming",
                self.request, self.sent, self.total
            );
        }
    }
}

/// A `200 text/event-stream` response that sends the steps in order, each
/// after its delay. Nothing is produced ahead of time: when the client
/// disconnects, the body is dropped during the next write or wait and no
/// further step runs.
pub fn response(request: u64, steps: Vec<Step>) -> Response {
    let watch = Watch { request, sent: 0, total: steps.len() };
    let steps: VecDeque<Step> = steps.into();
    let stream = futures_util::stream::unfold((steps, watch), |(mut steps, mut watch)| async move {
        let step = steps.pop_front()?;
        if !step.delay.is_zero() {
            tokio::time::sleep(step.delay).await;
        }
        watch.sent += 1;
        Some((Ok::<Bytes, Infallible>(step.bytes), (steps, watch)))
    });
    Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "text/event-stream")
        .header(header::CACHE_CONTROL, "no-cache")
        .body(Body::from_stream(stream))
        .expect("static headers are valid")
}

/// The text steps of an answer: the first piece at once, each later one
/// after `word_delay`, each framed by `frame`.
pub fn pieces(pieces: &[String], word_delay: Duration, mut frame: impl FnMut(&str, bool) -> Bytes) -> Vec<Step> {
    let last = pieces.len().saturating_sub(1);
    pieces
        .iter()
        .enumerate()
        .map(|(i, piece)| Step {
            delay: if i == 0 { Duration::ZERO } else { word_delay },
            bytes: frame(piece, i == last),
        })
        .collect()
}
