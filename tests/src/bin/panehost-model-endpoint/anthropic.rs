//! Anthropic messages (`POST /v1/messages`, `POST /v1/messages/count_tokens`).
//!
//! Streamed, each `event: TYPE` and `data: {"type": TYPE, ...}`:
//! `message_start` (the message with empty content and the input usage),
//! `content_block_start` (an empty text block), one `content_block_delta`
//! with a `text_delta` per word, `content_block_stop`, `message_delta`
//! (`stop_reason: "end_turn"` and the output usage), `message_stop`.
//! Whole: the message object. Token count: `{"input_tokens": N}`.
//!
//! A tool call is one `tool_use` block (streamed: `content_block_start` with
//! the block and empty `input`, one `input_json_delta` holding the whole
//! input, `content_block_stop`) and `stop_reason: "tool_use"`. Declared
//! tools are `tools[].{name, input_schema}`; a tool's result comes back as a
//! `tool_result` block of the last user message.

use crate::script::Prompt;
use crate::sse::{self, Step};
use crate::tools::{self, Call, Declared, Exchange, ToolResult};
use crate::{content_text, model_or, script, RequestId, Shared, Turn};
use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{json, Value};

fn blocks<'a>(message: &'a Value, kind: &'a str) -> impl Iterator<Item = &'a Value> + 'a {
    message["content"].as_array().map(Vec::as_slice).unwrap_or_default().iter().filter(move |b| b["type"] == kind)
}

/// The prompt: the last message whose role is `user` and that carries no
/// tool result (its text blocks; images are not text).
pub fn prompt(body: &Value) -> Prompt {
    let messages = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user" && blocks(m, "tool_result").next().is_none())
        .map(|m| Prompt::from_parts(content_text(&m["content"], &["text"])))
        .unwrap_or_default()
}

/// The prompt, the declared tools, and the tool result of the last message.
pub fn exchange(body: &Value) -> Exchange {
    let tools = body["tools"].as_array().map(Vec::as_slice).unwrap_or_default();
    let tools = tools
        .iter()
        .filter_map(|t| Some(Declared { name: t["name"].as_str()?.to_owned(), parameters: t["input_schema"].clone() }))
        .collect();
    let messages = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    let result =
        messages.last().filter(|m| m["role"] == "user").and_then(|m| blocks(m, "tool_result").last()).map(|block| {
            // The name is on the assistant's tool_use block with the same id.
            let name = messages
                .iter()
                .flat_map(|m| blocks(m, "tool_use"))
                .find(|used| used["id"] == block["tool_use_id"])
                .and_then(|used| used["name"].as_str())
                .map(str::to_owned);
            ToolResult { name, text: tools::result_text(&block["content"]), is_error: block["is_error"] == true }
        });
    Exchange { prompt: prompt(body), tools, result }
}

fn tool_use(call: &Call, input: Value) -> Value {
    json!({ "type": "tool_use", "id": call.id, "name": call.name, "input": input })
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
    let turn = app.turn(id, model_or(&app, &body), &exchange(&body), stream).await;
    let stop_reason = if turn.call.is_some() { "tool_use" } else { "end_turn" };
    if !stream {
        turn.wait_whole().await;
        let content = match &turn.call {
            Some(call) => vec![tool_use(call, call.arguments.clone())],
            None => vec![json!({ "type": "text", "text": turn.answer.text })],
        };
        let usage = usage(turn.input_tokens, turn.output_tokens);
        return Json(message(&turn, content, json!(stop_reason), usage)).into_response();
    }
    let mut steps = vec![Step::now(sse::typed(json!({
        "type": "message_start",
        "message": message(&turn, vec![], Value::Null, usage(turn.input_tokens, 1)),
    })))];
    let block = |content_block: Value| {
        Step::now(sse::typed(json!({ "type": "content_block_start", "index": 0, "content_block": content_block })))
    };
    match &turn.call {
        Some(call) => {
            steps.push(block(tool_use(call, json!({}))));
            steps.push(Step::now(sse::typed(json!({
                "type": "content_block_delta",
                "index": 0,
                "delta": { "type": "input_json_delta", "partial_json": call.arguments.to_string() },
            }))));
        }
        None => {
            steps.push(block(json!({ "type": "text", "text": "" })));
            steps.extend(turn.text_steps(|piece, _| {
                sse::typed(json!({
                    "type": "content_block_delta",
                    "index": 0,
                    "delta": { "type": "text_delta", "text": piece },
                }))
            }));
        }
    }
    steps.push(Step::now(sse::typed(json!({ "type": "content_block_stop", "index": 0 }))));
    steps.push(Step::now(sse::typed(json!({
        "type": "message_delta",
        "delta": { "stop_reason": stop_reason, "stop_sequence": null },
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
