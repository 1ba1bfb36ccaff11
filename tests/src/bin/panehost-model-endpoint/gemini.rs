//! Gemini (`POST /v1beta/models/{model}:generateContent`,
//! `:streamGenerateContent?alt=sse`, `:countTokens`; the same under
//! `/v1/models/`) and the Gemini model list (`GET /v1beta/models`).
//!
//! Streamed with `alt=sse`: one `data: {GenerateContentResponse}` per word,
//! each with `candidates[0].content = {"parts":[{"text": WORD}],"role":"model"}`;
//! the last also has `finishReason: "STOP"` and `usageMetadata`. Without
//! `alt=sse`, `streamGenerateContent` answers a JSON array holding one whole
//! response. Whole: one response with the whole text.

use crate::script::Prompt;
use crate::sse::{self, Step};
use crate::{error, script, RequestId, Shared, Turn};
use axum::body::Bytes;
use axum::extract::{Path, RawQuery, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::{Extension, Json};
use serde_json::{json, Value};

/// The prompt: the last content whose role is `user` (or has no role).
pub fn prompt(body: &Value) -> Prompt {
    let contents = body["contents"].as_array().map(Vec::as_slice).unwrap_or_default();
    contents
        .iter()
        .rev()
        .find(|c| c["role"].is_null() || c["role"] == "user")
        .map(|c| {
            let parts = c["parts"].as_array().map(Vec::as_slice).unwrap_or_default();
            Prompt::from_parts(parts.iter().filter_map(|p| p["text"].as_str()))
        })
        .unwrap_or_default()
}

fn usage(turn: &Turn) -> Value {
    json!({
        "promptTokenCount": turn.input_tokens,
        "candidatesTokenCount": turn.output_tokens,
        "totalTokenCount": turn.total_tokens(),
    })
}

fn response(turn: &Turn, text: &str, last: bool) -> Value {
    let mut candidate = json!({
        "content": { "parts": [{ "text": text }], "role": "model" },
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
    let prompt = prompt(&body);
    match action {
        "countTokens" => Json(json!({ "totalTokens": script::words(&prompt.text) })).into_response(),
        "generateContent" => {
            let turn = app.turn(id, model, &prompt, false).await;
            turn.wait_whole().await;
            Json(response(&turn, &turn.answer.text, true)).into_response()
        }
        "streamGenerateContent" => {
            let sse_wanted = query.unwrap_or_default().split('&').any(|pair| pair == "alt=sse");
            let turn = app.turn(id, model, &prompt, sse_wanted).await;
            if !sse_wanted {
                turn.wait_whole().await;
                return Json(json!([response(&turn, &turn.answer.text, true)])).into_response();
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
