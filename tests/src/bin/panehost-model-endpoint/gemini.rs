//! Gemini (`POST /v1beta/models/{model}:generateContent`,
//! `:streamGenerateContent?alt=sse`, `:countTokens`; the same under
//! `/v1/models/`) and the Gemini model list (`GET /v1beta/models`).
//!
//! Streamed with `alt=sse`: one `data: {GenerateContentResponse}` per word,
//! each with `candidates[0].content = {"parts":[{"text": WORD}],"role":"model"}`;
//! the last also has `finishReason: "STOP"` and `usageMetadata`. Without
//! `alt=sse`, `streamGenerateContent` answers a JSON array holding one whole
//! response. Whole: one response with the whole text.
//!
//! A tool call is one `functionCall` part (`name`, `args`, `id`) in one
//! response (one event when streamed) with `finishReason: "STOP"`. Declared
//! tools are `tools[].functionDeclarations[].{name, parameters}` (or
//! `parametersJsonSchema`); a tool's result comes back as a last content
//! holding `functionResponse` parts.

use crate::script::Prompt;
use crate::sse::{self, Step};
use crate::tools::{Declared, Exchange, ToolResult};
use crate::{error, script, RequestId, Shared, Turn};
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{json, Value};

fn parts(content: &Value) -> &[Value] {
    content["parts"].as_array().map(Vec::as_slice).unwrap_or_default()
}

fn function_responses(content: &Value) -> impl Iterator<Item = &Value> {
    parts(content).iter().filter_map(|p| p.get("functionResponse"))
}

/// The prompt: the last content whose role is `user` (or has no role) and
/// that carries no function response.
pub fn prompt(body: &Value) -> Prompt {
    let contents = body["contents"].as_array().map(Vec::as_slice).unwrap_or_default();
    contents
        .iter()
        .rev()
        .find(|c| (c["role"].is_null() || c["role"] == "user") && function_responses(c).next().is_none())
        .map(|c| Prompt::from_parts(parts(c).iter().filter_map(|p| p["text"].as_str())))
        .unwrap_or_default()
}

/// The prompt, the declared functions, and the function response of the
/// last content.
pub fn exchange(body: &Value) -> Exchange {
    let groups = body["tools"].as_array().map(Vec::as_slice).unwrap_or_default();
    let tools = groups
        .iter()
        .flat_map(|group| group["functionDeclarations"].as_array().map(Vec::as_slice).unwrap_or_default())
        .filter_map(|f| {
            let parameters =
                if f["parametersJsonSchema"].is_object() { &f["parametersJsonSchema"] } else { &f["parameters"] };
            Some(Declared { name: f["name"].as_str()?.to_owned(), parameters: lowercase_types(parameters) })
        })
        .collect();
    let contents = body["contents"].as_array().map(Vec::as_slice).unwrap_or_default();
    let result = contents.last().and_then(|c| function_responses(c).last()).map(|response| {
        let answer = &response["response"];
        let text = match answer.get("output").or(answer.get("error")) {
            Some(Value::String(text)) => text.clone(),
            _ => answer.to_string(),
        };
        let is_error = answer.get("error").is_some();
        ToolResult { name: response["name"].as_str().map(str::to_owned), text, is_error }
    });
    Exchange { prompt: prompt(body), tools, result }
}

/// Gemini's schemas may spell types in capitals (`STRING`); the tool
/// choice reads JSON schema's lower-case names.
fn lowercase_types(schema: &Value) -> Value {
    match schema {
        Value::Object(map) => Value::Object(
            map.iter()
                .map(|(key, value)| match (key.as_str(), value) {
                    ("type", Value::String(kind)) => (key.clone(), json!(kind.to_lowercase())),
                    _ => (key.clone(), lowercase_types(value)),
                })
                .collect(),
        ),
        Value::Array(values) => Value::Array(values.iter().map(lowercase_types).collect()),
        other => other.clone(),
    }
}

fn usage(turn: &Turn) -> Value {
    json!({
        "promptTokenCount": turn.input_tokens,
        "candidatesTokenCount": turn.output_tokens,
        "totalTokenCount": turn.total_tokens(),
    })
}

fn response(turn: &Turn, text: &str, last: bool) -> Value {
    let part = match &turn.call {
        Some(call) => json!({ "functionCall": { "id": call.id, "name": call.name, "args": call.arguments } }),
        None => json!({ "text": text }),
    };
    let mut candidate = json!({
        "content": { "parts": [part], "role": "model" },
        "index": 0,
    });
    let mut response = json!({
        "candidates": [],
        "modelVersion": turn.model,
        "responseId": format!("resp-{}", turn.request),
    });
    if last {
        candidate["finishReason"] = json!("STOP");
        response["usageMetadata"] = usage(turn);
    }
    response["candidates"] = json!([candidate]);
    response
}

/// `POST .../models/{model}:{action}`.
pub async fn generate(
    State(app): State<Shared>,
    Extension(id): Extension<RequestId>,
    Path(target): Path<String>,
    RawQuery(query): RawQuery,
    body: Bytes,
) -> Response {
    let Some((model, action)) = target.rsplit_once(':') else {
        return error(StatusCode::NOT_FOUND, "not_found_error", &format!("no action in models/{target}"));
    };
    let model = model.trim_start_matches("models/");
    let body = match app.body(id, &body) {
        Ok(body) => body,
        Err(bad) => return bad.into_response(),
    };
    let exchange = exchange(&body);
    match action {
        "countTokens" => Json(json!({ "totalTokens": script::words(&exchange.prompt.text) })).into_response(),
        "generateContent" => {
            let turn = app.turn(id, model, &exchange, false).await;
            turn.wait_whole().await;
            Json(response(&turn, &turn.answer.text, true)).into_response()
        }
        "streamGenerateContent" => {
            let sse_wanted = query.unwrap_or_default().split('&').any(|pair| pair == "alt=sse");
            let turn = app.turn(id, model, &exchange, sse_wanted).await;
            if !sse_wanted {
                turn.wait_whole().await;
                return Json(json!([response(&turn, &turn.answer.text, true)])).into_response();
            }
            if turn.call.is_some() {
                return sse::response(turn.request, vec![Step::now(sse::event(None, &response(&turn, "", true)))]);
            }
            let steps: Vec<Step> = turn.text_steps(|piece, last| sse::event(None, &response(&turn, piece, last)));
            sse::response(turn.request, steps)
        }
        other => error(StatusCode::NOT_FOUND, "not_found_error", &format!("action {other:?} is not served")),
    }
}

fn model_object(name: &str) -> Value {
    json!({
        "name": format!("models/{name}"),
        "version": "1",
        "displayName": name,
        "description": "The panehost model endpoint fixture",
        "inputTokenLimit": 1_048_576,
        "outputTokenLimit": 65_536,
        "supportedGenerationMethods": ["generateContent", "streamGenerateContent", "countTokens"],
    })
}

/// `GET /v1beta/models`: the one configured model.
pub async fn models(State(app): State<Shared>) -> Response {
    Json(json!({ "models": [model_object(&app.model)] })).into_response()
}

/// `GET /v1beta/models/{model}`: any name is answered as a model.
pub async fn model(Path(target): Path<String>) -> Response {
    Json(model_object(target.trim_start_matches("models/"))).into_response()
}
