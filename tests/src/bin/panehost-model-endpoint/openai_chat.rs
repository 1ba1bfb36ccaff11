//! OpenAI chat completions (`POST /v1/chat/completions`) and the OpenAI
//! model list (`GET /v1/models`).
//!
//! Streamed: `data: {chunk}` lines, each `chat.completion.chunk` with
//! `choices[0].delta`: first `{"role":"assistant","content":""}`, then one
//! chunk per word in `delta.content`, then an empty delta with
//! `finish_reason: "stop"` and the `usage`, then `data: [DONE]`.
//! Whole: a `chat.completion` with `choices[0].message` and `usage`.
//!
//! A tool call is `message.tool_calls` (streamed: a first delta with the
//! call's id, name and empty `arguments`, a second with the arguments) and
//! `finish_reason: "tool_calls"`. Declared tools are
//! `tools[].function.{name, parameters}`; a tool's result comes back as a
//! last message with role `tool`.

use crate::script::Prompt;
use crate::sse::{self, Step};
use crate::tools::{self, Call, Declared, Exchange, ToolResult};
use crate::{content_text, model_or, RequestId, Shared, Turn};
use axum::body::Bytes;
use axum::extract::{Path, State};
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{json, Value};

/// The prompt: the last message whose role is `user`.
pub fn prompt(body: &Value) -> Prompt {
    let messages = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    messages
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .map(|m| Prompt::from_parts(content_text(&m["content"], &["text", "input_text"])))
        .unwrap_or_default()
}

/// The prompt, the declared tools, and the tool result of the last message.
pub fn exchange(body: &Value) -> Exchange {
    let tools = body["tools"].as_array().map(Vec::as_slice).unwrap_or_default();
    let tools = tools
        .iter()
        .filter_map(|t| {
            let function = &t["function"];
            Some(Declared { name: function["name"].as_str()?.to_owned(), parameters: function["parameters"].clone() })
        })
        .collect();
    let messages = body["messages"].as_array().map(Vec::as_slice).unwrap_or_default();
    let result = messages.last().filter(|m| m["role"] == "tool").map(|message| {
        let name = messages
            .iter()
            .flat_map(|m| m["tool_calls"].as_array().map(Vec::as_slice).unwrap_or_default())
            .find(|call| call["id"] == message["tool_call_id"])
            .and_then(|call| call["function"]["name"].as_str())
            .or(message["name"].as_str())
            .map(str::to_owned);
        ToolResult { name, text: tools::result_text(&message["content"]), is_error: false }
    });
    Exchange { prompt: prompt(body), tools, result }
}

fn tool_call(call: &Call, arguments: &str) -> Value {
    json!({ "index": 0, "id": call.id, "type": "function", "function": { "name": call.name, "arguments": arguments } })
}

fn usage(turn: &Turn) -> Value {
    json!({
        "prompt_tokens": turn.input_tokens,
        "completion_tokens": turn.output_tokens,
        "total_tokens": turn.total_tokens(),
    })
}

fn chunk(turn: &Turn, delta: Value, finish: Option<&str>, usage: Option<Value>) -> Value {
    let mut chunk = json!({
        "id": format!("chatcmpl-{}", turn.request),
        "object": "chat.completion.chunk",
        "created": turn.created,
        "model": turn.model,
        "system_fingerprint": "panehost-model-endpoint",
        "choices": [{ "index": 0, "delta": delta, "logprobs": null, "finish_reason": finish }],
    });
    if let Some(usage) = usage {
        chunk["usage"] = usage;
    }
    chunk
}

pub async fn completions(State(app): State<Shared>, Extension(id): Extension<RequestId>, body: Bytes) -> Response {
    let body = match app.body(id, &body) {
        Ok(body) => body,
        Err(bad) => return bad.into_response(),
    };
    let stream = body["stream"].as_bool().unwrap_or(false);
    let turn = app.turn(id, model_or(&app, &body), &exchange(&body), stream).await;
    let finish = if turn.call.is_some() { "tool_calls" } else { "stop" };
    if stream {
        let frame = |delta: Value| Step::now(sse::event(None, &chunk(&turn, delta, None, None)));
        let mut steps = Vec::new();
        match &turn.call {
            Some(call) => {
                steps.push(frame(json!({"role": "assistant", "content": null, "tool_calls": [tool_call(call, "")]})));
                let arguments = json!({ "index": 0, "function": { "arguments": call.arguments.to_string() } });
                steps.push(frame(json!({ "tool_calls": [arguments] })));
            }
            None => {
                steps.push(frame(json!({"role": "assistant", "content": ""})));
                steps.extend(
                    turn.text_steps(|piece, _| {
                        sse::event(None, &chunk(&turn, json!({ "content": piece }), None, None))
                    }),
                );
            }
        }
        steps.push(Step::now(sse::event(None, &chunk(&turn, json!({}), Some(finish), Some(usage(&turn))))));
        steps.push(Step::now(sse::done()));
        return sse::response(turn.request, steps);
    }
    turn.wait_whole().await;
    let message = match &turn.call {
        Some(call) => json!({
            "role": "assistant",
            "content": null,
            "tool_calls": [tool_call(call, &call.arguments.to_string())],
            "refusal": null,
        }),
        None => json!({ "role": "assistant", "content": turn.answer.text, "refusal": null }),
    };
    Json(json!({
        "id": format!("chatcmpl-{}", turn.request),
        "object": "chat.completion",
        "created": turn.created,
        "model": turn.model,
        "system_fingerprint": "panehost-model-endpoint",
        "choices": [{
            "index": 0,
            "message": message,
            "logprobs": null,
            "finish_reason": finish,
        }],
        "usage": usage(&turn),
    }))
    .into_response()
}

fn model_object(id: &str) -> Value {
    json!({ "id": id, "object": "model", "created": 1_700_000_000u64, "owned_by": "panehost" })
}

/// `GET /v1/models`: the one configured model.
pub async fn models(State(app): State<Shared>) -> Response {
    Json(json!({ "object": "list", "data": [model_object(&app.model)] })).into_response()
}

/// `GET /v1/models/{id}`: any id is answered as a model.
pub async fn model(Path(target): Path<String>) -> Response {
    Json(model_object(&target)).into_response()
}
