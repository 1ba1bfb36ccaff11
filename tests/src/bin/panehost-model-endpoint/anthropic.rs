//! Anthropic messages (`POST /v1/messages`, `POST /v1/messages/count_tokens`).
//!
//! Streamed, each `event: TYPE` and `data: {"type": TYPE, ...}`:
//! `message_start` (the message with empty content and the input usage),
//! `content_block_start` (an empty text block), one `content_block_delta`
//! with a `text_delta` per word, `content_block_stop`, `message_delta`
//! (`stop_reason: "end_turn"` and the output usage), `message_stop`.
//! Whole: the message object. Token count: `{"input_tokens": N}`.

use crate::script::Prompt;
use crate::sse::{self, Step};
use crate::{content_text, model_or, script, RequestId, Shared, Turn};
use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{json, Value};

/// The prompt: the last message whose role is `user` (its text blocks; tool
/// results and images are not text).
pub fn prompt(body: &Value) -> Prompt {
    let messages = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| Prompt::from_parts(content_text(&m["content"], &["text"])))
        .unwrap_or_default()
}

fn usage(input: u64, output: u64) -> Value {
    json!({
        "input_tokens": input,
        "cache_creation_input_tokens": 0,
        "cache_read_input_tokens": 0,
        "output_tokens": output,
    })
}

fn message(turn: &Turn, content: Vec<Value>, stop_reason: Value, usage: Value) -> Value {
    json!({
        "id": format!("msg_{:024}", turn.request),
        "type": "message",
        "role": "assistant",
        "model": turn.model,
        "content": content,
        "stop_reason": stop_reason,
        "stop_sequence": null,
        "usage": usage,
    })
}

pub async fn messages(State(app): State<Shared>, Extension(id): Extension<RequestId>, body: Bytes) -> Response {
    let body = match app.body(id, &body) {
        Ok(body) => body,
        Err(bad) => return bad.into_response(),
    };
    let stream = body["stream"].as_bool().unwrap_or(false);
    let turn = app.turn(id, model_or(&app, &body), &prompt(&body), stream).await;
    if !stream {
        turn.wait_whole().await;
        let content = vec![json!({ "type": "text", "text": turn.answer.text })];
        let usage = usage(turn.input_tokens, turn.output_tokens);
        return Json(message(&turn, content, json!("end_turn"), usage)).into_response();
    }
    let mut steps = vec![
        Step::now(sse::typed(json!({
            "type": "message_start",
            "message": message(&turn, vec![], Value::Null, usage(turn.input_tokens, 1)),
        }))),
        Step::now(sse::typed(json!({
            "type": "content_block_start",
            "index": 0,
            "content_block": { "type": "text", "text": "" },
        }))),
    ];
    steps.extend(turn.text_steps(|piece, _| {
        sse::typed(json!({
            "type": "content_block_delta",
            "index": 0,
            "delta": { "type": "text_delta", "text": piece },
        }))
    }));
    steps.push(Step::now(sse::typed(json!({ "type": "content_block_stop", "index": 0 }))));
    steps.push(Step::now(sse::typed(json!({
        "type": "message_delta",
        "delta": { "stop_reason": "end_turn", "stop_sequence": null },
        "usage": { "output_tokens": turn.output_tokens },
    }))));
    steps.push(Step::now(sse::typed(json!({ "type": "message_stop" }))));
    sse::response(turn.request, steps)
}

/// `POST /v1/messages/count_tokens`: the words of the last user message,
/// the same count a turn reports as its input.
pub async fn count_tokens(State(app): State<Shared>, Extension(id): Extension<RequestId>, body: Bytes) -> Response {
    let body = match app.body(id, &body) {
        Ok(body) => body,
        Err(bad) => return bad.into_response(),
    };
    Json(json!({ "input_tokens": script::words(&prompt(&body).text) })).into_response()
}
