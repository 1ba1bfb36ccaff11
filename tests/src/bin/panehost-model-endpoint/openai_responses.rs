//! OpenAI responses (`POST /v1/responses`).
//!
//! Streamed, one SSE event per step, each `event: TYPE` and `data: {"type":
//! TYPE, "sequence_number": N, ...}`: `response.created`,
//! `response.output_item.added`, `response.content_part.added`, one
//! `response.output_text.delta` per word, `response.output_text.done`,
//! `response.content_part.done`, `response.output_item.done`,
//! `response.completed` (the whole response, with `usage`).
//! Whole: the response object.
//!
//! A tool call is one `function_call` output item (streamed:
//! `response.output_item.added` with empty `arguments`, one
//! `response.function_call_arguments.delta`, `…arguments.done`,
//! `response.output_item.done`, `response.completed`). Declared tools are
//! the `tools[]` of `type: "function"` (`name`, `parameters`); a tool's
//! result comes back as a last input item of type `function_call_output`.

use crate::script::Prompt;
use crate::sse::{self, Step};
use crate::tools::{self, Call, Declared, Exchange, ToolResult};
use crate::{content_text, model_or, RequestId, Shared, Turn};
use axum::body::Bytes;
use axum::extract::State;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{json, Value};

/// The prompt: `input` when it is a string, else the last input item that is
/// a user message.
pub fn prompt(body: &Value) -> Prompt {
    match &body["input"] {
        Value::String(text) => Prompt::from_parts([text.as_str()]),
        Value::Array(items) => items
            .iter()
            .rev()
            .find(|item| item["role"] == "user" && (item["type"].is_null() || item["type"] == "message"))
            .map(|item| Prompt::from_parts(content_text(&item["content"], &["input_text", "text"])))
            .unwrap_or_default(),
        _ => Prompt::default(),
    }
}

fn items(body: &Value) -> &[Value] {
    body["input"].as_array().map(Vec::as_slice).unwrap_or_default()
}

/// The prompt, the declared function tools, and the tool result of the last
/// input item.
pub fn exchange(body: &Value) -> Exchange {
    let tools = body["tools"].as_array().map(Vec::as_slice).unwrap_or_default();
    let tools = tools
        .iter()
        .filter(|t| t["type"] == "function")
        .filter_map(|t| Some(Declared { name: t["name"].as_str()?.to_owned(), parameters: t["parameters"].clone() }))
        .collect();
    let input = items(body);
    let outputs = ["function_call_output", "custom_tool_call_output"];
    let result = input.last().filter(|item| outputs.iter().any(|kind| item["type"] == *kind)).map(|item| {
        let name = input
            .iter()
            .find(|call| call["call_id"] == item["call_id"] && call.get("name").is_some())
            .and_then(|call| call["name"].as_str())
            .map(str::to_owned);
        ToolResult { name, text: tools::result_text(&item["output"]), is_error: false }
    });
    Exchange { prompt: prompt(body), tools, result }
}

fn function_call(turn: &Turn, call: &Call, status: &str, arguments: &str) -> Value {
    json!({
        "id": format!("fc_{}", turn.request),
        "type": "function_call",
        "status": status,
        "call_id": call.id,
        "name": call.name,
        "arguments": arguments,
    })
}

fn item_id(turn: &Turn) -> String {
    format!("msg_{}", turn.request)
}

fn message(turn: &Turn, status: &str, content: Vec<Value>) -> Value {
    json!({ "id": item_id(turn), "type": "message", "status": status, "role": "assistant", "content": content })
}

fn output_text(text: &str) -> Value {
    json!({ "type": "output_text", "text": text, "annotations": [] })
}

fn response_object(turn: &Turn, body: &Value, status: &str, output: Vec<Value>, usage: Value) -> Value {
    json!({
        "id": format!("resp_{}", turn.request),
        "object": "response",
        "created_at": turn.created,
        "status": status,
        "error": null,
        "incomplete_details": null,
        "instructions": body.get("instructions").cloned().unwrap_or(Value::Null),
        "model": turn.model,
        "output": output,
        "parallel_tool_calls": true,
        "previous_response_id": body.get("previous_response_id").cloned().unwrap_or(Value::Null),
        "store": false,
        "temperature": 1.0,
        "text": { "format": { "type": "text" } },
        "tool_choice": "auto",
        "tools": [],
        "top_p": 1.0,
        "usage": usage,
    })
}

fn usage(turn: &Turn) -> Value {
    json!({
        "input_tokens": turn.input_tokens,
        "input_tokens_details": { "cached_tokens": 0 },
        "output_tokens": turn.output_tokens,
        "output_tokens_details": { "reasoning_tokens": 0 },
        "total_tokens": turn.total_tokens(),
    })
}

pub async fn responses(State(app): State<Shared>, Extension(id): Extension<RequestId>, body: Bytes) -> Response {
    let body = match app.body(id, &body) {
        Ok(body) => body,
        Err(bad) => return bad.into_response(),
    };
    let stream = body["stream"].as_bool().unwrap_or(false);
    let turn = app.turn(id, model_or(&app, &body), &exchange(&body), stream).await;
    if let Some(call) = &turn.call {
        return call_response(&turn, &body, call, stream).await;
    }
    let done_item = message(&turn, "completed", vec![output_text(&turn.answer.text)]);
    if !stream {
        turn.wait_whole().await;
        return Json(response_object(&turn, &body, "completed", vec![done_item], usage(&turn))).into_response();
    }

    let mut sequence = 0u64;
    let mut event = |mut data: Value| {
        data["sequence_number"] = json!(sequence);
        sequence += 1;
        sse::typed(data)
    };
    let item = item_id(&turn);
    let mut steps = vec![
        Step::now(event(json!({
            "type": "response.created",
            "response": response_object(&turn, &body, "in_progress", vec![], Value::Null),
        }))),
        Step::now(event(json!({
            "type": "response.output_item.added",
            "output_index": 0,
            "item": message(&turn, "in_progress", vec![]),
        }))),
        Step::now(event(json!({
            "type": "response.content_part.added",
            "item_id": item,
            "output_index": 0,
            "content_index": 0,
            "part": output_text(""),
        }))),
    ];
    steps.extend(turn.text_steps(|piece, _| {
        event(json!({
            "type": "response.output_text.delta",
            "item_id": item,
            "output_index": 0,
            "content_index": 0,
            "delta": piece,
            "logprobs": [],
        }))
    }));
    let text = &turn.answer.text;
    steps.push(Step::now(event(json!({
        "type": "response.output_text.done",
        "item_id": item,
        "output_index": 0,
        "content_index": 0,
        "text": text,
        "logprobs": [],
    }))));
    steps.push(Step::now(event(json!({
        "type": "response.content_part.done",
        "item_id": item,
        "output_index": 0,
        "content_index": 0,
        "part": output_text(text),
    }))));
    steps.push(Step::now(event(json!({
        "type": "response.output_item.done",
        "output_index": 0,
        "item": done_item,
    }))));
    steps.push(Step::now(event(json!({
        "type": "response.completed",
        "response": response_object(&turn, &body, "completed", vec![done_item.clone()], usage(&turn)),
    }))));
    sse::response(turn.request, steps)
}

/// The response that calls a tool, whole or streamed.
async fn call_response(turn: &Turn, body: &Value, call: &Call, stream: bool) -> Response {
    let arguments = call.arguments.to_string();
    let done_item = function_call(turn, call, "completed", &arguments);
    if !stream {
        turn.wait_whole().await;
        return Json(response_object(turn, body, "completed", vec![done_item], usage(turn))).into_response();
    }
    let item = format!("fc_{}", turn.request);
    let frames = [
        json!({
            "type": "response.created",
            "response": response_object(turn, body, "in_progress", vec![], Value::Null),
        }),
        json!({
            "type": "response.output_item.added",
            "output_index": 0,
            "item": function_call(turn, call, "in_progress", ""),
        }),
        json!({
            "type": "response.function_call_arguments.delta",
            "item_id": item,
            "output_index": 0,
            "delta": arguments,
        }),
        json!({
            "type": "response.function_call_arguments.done",
            "item_id": item,
            "output_index": 0,
            "arguments": arguments,
        }),
        json!({ "type": "response.output_item.done", "output_index": 0, "item": done_item }),
        json!({
            "type": "response.completed",
            "response": response_object(turn, body, "completed", vec![done_item.clone()], usage(turn)),
        }),
    ];
    let steps = frames
        .into_iter()
        .enumerate()
        .map(|(sequence, mut data)| {
            data["sequence_number"] = json!(sequence);
            Step::now(sse::typed(data))
        })
        .collect();
    sse::response(turn.request, steps)
}
