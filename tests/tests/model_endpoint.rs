//! The model endpoint fixture (`panehost-model-endpoint`) on its own: each
//! API dialect streamed and whole, the scripted answers, the model lists,
//! errors, stopping when a client leaves, and the loopback-only bind. Tool
//! calls are in `model_endpoint_tools.rs`.
//!
//! Requests go over a plain `TcpStream` with `Connection: close`; responses
//! are parsed in `endpoint_client/`, chunked transfer encoding included.

mod endpoint_client;

use endpoint_client::*;
use serde_json::json;
use std::io::Read;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

#[test]
fn dechunk_decodes() {
    assert_eq!(dechunk(b"4\r\nWiki\r\n6;x=y\r\npedia \r\n0\r\n\r\n"), b"Wikipedia ");
}

// --- OpenAI chat completions ---------------------------------------------

#[test]
fn chat_completions_streamed() {
    let endpoint = Endpoint::start();
    let reply = endpoint.post(
        "/v1/chat/completions",
        &json!({
            "model": "my-model",
            "stream": true,
            "messages": [
                {"role": "system", "content": "be brief"},
                {"role": "user", "content": "PING"},
                {"role": "assistant", "content": "PONG"},
                {"role": "user", "content": [{"type": "text", "text": "hello there"}]},
            ],
        }),
    );
    let events = reply.events();
    assert!(events.iter().all(|(name, _)| name.is_none()), "chat chunks are unnamed");
    assert_eq!(events.last().unwrap().1, "[DONE]");
    let chunks = data_json(&events[..events.len() - 1]);
    for chunk in &chunks {
        assert_eq!(chunk["object"], "chat.completion.chunk");
        assert_eq!(chunk["model"], "my-model");
        assert_eq!(chunk["id"], chunks[0]["id"]);
    }
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    let text: String = chunks.iter().filter_map(|c| c["choices"][0]["delta"]["content"].as_str()).collect();
    assert_eq!(text, "echo: hello there");
    assert!(chunks.len() >= 4, "one chunk per word: {chunks:#?}");
    let last = chunks.last().unwrap();
    assert_eq!(last["choices"][0]["finish_reason"], "stop");
    assert_eq!(last["usage"], json!({"prompt_tokens": 2, "completion_tokens": 3, "total_tokens": 5}));
    for chunk in &chunks[..chunks.len() - 1] {
        assert!(chunk["choices"][0]["finish_reason"].is_null());
    }
    endpoint.wait_for_log("POST /v1/chat/completions", WAIT);
}

#[test]
fn chat_completions_whole() {
    let endpoint = Endpoint::start();
    let reply = endpoint.post(
        "/v1/chat/completions",
        &json!({"model": "my-model", "messages": [{"role": "user", "content": "say PING now"}]}),
    );
    assert_eq!(reply.status, 200);
    let body = reply.json();
    assert_eq!(body["object"], "chat.completion");
    assert_eq!(body["model"], "my-model");
    assert_eq!(body["choices"][0]["message"], json!({"role": "assistant", "content": "PONG", "refusal": null}));
    assert_eq!(body["choices"][0]["finish_reason"], "stop");
    assert_eq!(body["usage"], json!({"prompt_tokens": 3, "completion_tokens": 1, "total_tokens": 4}));
}

// --- OpenAI responses ------------------------------------------------------

#[test]
fn responses_streamed() {
    let endpoint = Endpoint::start();
    let reply = endpoint.post(
        "/v1/responses",
        &json!({
            "model": "my-model",
            "stream": true,
            "instructions": "be brief",
            "input": [
                {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "rules"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<env>cwd</env>"}]},
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "PING"}]},
            ],
        }),
    );
    let events = reply.events();
    let data = data_json(&events);
    for (i, ((name, _), data)) in events.iter().zip(&data).enumerate() {
        assert_eq!(name.as_deref(), data["type"].as_str(), "the event name is the data's type");
        assert_eq!(data["sequence_number"], i);
    }
    let types: Vec<&str> = data.iter().map(|d| d["type"].as_str().unwrap()).collect();
    assert_eq!(
        types,
        [
            "response.created",
            "response.output_item.added",
            "response.content_part.added",
            "response.output_text.delta",
            "response.output_text.done",
            "response.content_part.done",
            "response.output_item.done",
            "response.completed",
        ]
    );
    assert_eq!(data[0]["response"]["status"], "in_progress");
    assert_eq!(data[1]["item"]["type"], "message");
    assert_eq!(data[1]["item"]["role"], "assistant");
    assert_eq!(data[2]["part"]["type"], "output_text");
    let item_id = data[1]["item"]["id"].clone();
    for event in &data[2..6] {
        assert_eq!(event["item_id"], item_id);
        assert_eq!(event["output_index"], 0);
        assert_eq!(event["content_index"], 0);
    }
    let deltas: String = data
        .iter()
        .filter(|d| d["type"] == "response.output_text.delta")
        .map(|d| d["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, "PONG");
    assert_eq!(data[4]["text"], "PONG");
    assert_eq!(data[5]["part"]["text"], "PONG");
    assert_eq!(data[6]["item"]["content"][0], json!({"type": "output_text", "text": "PONG", "annotations": []}));
    let completed = &data[7]["response"];
    assert_eq!(completed["status"], "completed");
    assert_eq!(completed["id"], data[0]["response"]["id"]);
    assert_eq!(completed["model"], "my-model");
    assert_eq!(completed["output"][0]["content"][0]["text"], "PONG");
    assert_eq!(completed["usage"]["input_tokens"], 1);
    assert_eq!(completed["usage"]["output_tokens"], 1);
    assert_eq!(completed["usage"]["total_tokens"], 2);
}

#[test]
fn responses_streamed_word_by_word() {
    let endpoint = Endpoint::start();
    let reply = endpoint.post("/v1/responses", &json!({"model": "m", "stream": true, "input": "one two three"}));
    let data = data_json(&reply.events());
    let deltas: Vec<&str> = data
        .iter()
        .filter(|d| d["type"] == "response.output_text.delta")
        .map(|d| d["delta"].as_str().unwrap())
        .collect();
    assert_eq!(deltas, ["echo: ", "one ", "two ", "three"]);
    assert_eq!(data.last().unwrap()["response"]["usage"]["output_tokens"], 4);
}

#[test]
fn responses_whole() {
    let endpoint = Endpoint::start();
    let reply = endpoint.post(
        "/v1/responses",
        &json!({"model": "my-model", "input": [{"role": "user", "content": "tell me something"}]}),
    );
    assert_eq!(reply.status, 200);
    let body = reply.json();
    assert_eq!(body["object"], "response");
    assert_eq!(body["status"], "completed");
    assert_eq!(body["output"][0]["type"], "message");
    assert_eq!(body["output"][0]["role"], "assistant");
    assert_eq!(body["output"][0]["content"][0]["text"], "echo: tell me something");
    assert_eq!(body["usage"]["input_tokens"], 3);
    assert_eq!(body["usage"]["output_tokens"], 4);
    assert_eq!(body["usage"]["total_tokens"], 7);
}

// --- Anthropic messages ------------------------------------------------------

#[test]
fn anthropic_messages_streamed() {
    let endpoint = Endpoint::start();
    let reply = endpoint.post(
        "/v1/messages?beta=true",
        &json!({
            "model": "my-model",
            "max_tokens": 100,
            "stream": true,
            "system": [{"type": "text", "text": "be brief"}],
            "messages": [{"role": "user", "content": [
                {"type": "text", "text": "<system-reminder>context</system-reminder>"},
                {"type": "text", "text": "hello   world"},
            ]}],
        }),
    );
    let events = reply.events();
    let data = data_json(&events);
    for ((name, _), data) in events.iter().zip(&data) {
        assert_eq!(name.as_deref(), data["type"].as_str());
    }
    let types: Vec<&str> = data.iter().map(|d| d["type"].as_str().unwrap()).collect();
    let deltas = types.iter().filter(|t| **t == "content_block_delta").count();
    let mut expected = vec!["message_start", "content_block_start"];
    expected.extend(vec!["content_block_delta"; deltas]);
    expected.extend(["content_block_stop", "message_delta", "message_stop"]);
    assert_eq!(types, expected);
    assert_eq!(deltas, 3);
    let start = &data[0]["message"];
    assert_eq!(start["role"], "assistant");
    assert_eq!(start["model"], "my-model");
    assert_eq!(start["content"], json!([]));
    assert_eq!(start["usage"]["input_tokens"], 3);
    assert_eq!(data[1]["content_block"], json!({"type": "text", "text": ""}));
    let text: String = data
        .iter()
        .filter(|d| d["type"] == "content_block_delta")
        .map(|d| {
            assert_eq!(d["delta"]["type"], "text_delta");
            d["delta"]["text"].as_str().unwrap()
        })
        .collect();
    assert_eq!(text, "echo: hello   world");
    let delta = &data[data.len() - 2];
    assert_eq!(delta["delta"]["stop_reason"], "end_turn");
    assert_eq!(delta["usage"]["output_tokens"], 3);
}

#[test]
fn anthropic_messages_whole_and_count_tokens() {
    let endpoint = Endpoint::start();
    let reply = endpoint.post(
        "/v1/messages",
        &json!({"model": "my-model", "max_tokens": 10, "messages": [{"role": "user", "content": "PING"}]}),
    );
    assert_eq!(reply.status, 200);
    let body = reply.json();
    assert_eq!(body["type"], "message");
    assert_eq!(body["role"], "assistant");
    assert_eq!(body["content"], json!([{"type": "text", "text": "PONG"}]));
    assert_eq!(body["stop_reason"], "end_turn");
    assert_eq!(body["usage"]["input_tokens"], 1);
    assert_eq!(body["usage"]["output_tokens"], 1);

    let reply = endpoint.post(
        "/v1/messages/count_tokens",
        &json!({"model": "my-model", "messages": [{"role": "user", "content": "four words right here"}]}),
    );
    assert_eq!(reply.status, 200);
    assert_eq!(reply.json(), json!({"input_tokens": 4}));
}

// --- Gemini ------------------------------------------------------------------

#[test]
fn gemini_streamed() {
    let endpoint = Endpoint::start();
    let reply = endpoint.post(
        "/v1beta/models/gemini-test:streamGenerateContent?alt=sse",
        &json!({
            "systemInstruction": {"parts": [{"text": "be brief"}]},
            "contents": [
                {"role": "user", "parts": [{"text": "<session_context>"}]},
                {"role": "model", "parts": [{"text": "Got it."}]},
                {"role": "user", "parts": [{"text": "hi gemini"}]},
            ],
        }),
    );
    let events = reply.events();
    assert!(events.iter().all(|(name, _)| name.is_none()));
    let data = data_json(&events);
    assert_eq!(data.len(), 3, "one event per word");
    let mut text = String::new();
    for (i, d) in data.iter().enumerate() {
        let candidate = &d["candidates"][0];
        assert_eq!(candidate["content"]["role"], "model");
        text.push_str(candidate["content"]["parts"][0]["text"].as_str().unwrap());
        if i + 1 < data.len() {
            assert!(candidate["finishReason"].is_null());
        }
    }
    assert_eq!(text, "echo: hi gemini");
    let last = data.last().unwrap();
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert_eq!(last["usageMetadata"], json!({"promptTokenCount": 2, "candidatesTokenCount": 3, "totalTokenCount": 5}));
    assert_eq!(last["modelVersion"], "gemini-test");
}

#[test]
fn gemini_whole_and_count_tokens() {
    let endpoint = Endpoint::start();
    let request = json!({"contents": [{"role": "user", "parts": [{"text": "PING"}]}]});
    let body = endpoint.post("/v1beta/models/gemini-test:generateContent", &request).json();
    assert_eq!(
        body["candidates"][0],
        json!({"content": {"parts": [{"text": "PONG"}], "role": "model"}, "finishReason": "STOP", "index": 0})
    );
    assert_eq!(body["usageMetadata"]["promptTokenCount"], 1);
    assert_eq!(body["usageMetadata"]["candidatesTokenCount"], 1);

    let body = endpoint.post("/v1beta/models/gemini-test:countTokens", &request).json();
    assert_eq!(body, json!({"totalTokens": 1}));

    let body = endpoint.post("/v1beta/models/gemini-test:streamGenerateContent", &request).json();
    assert_eq!(body[0]["candidates"][0]["content"]["parts"][0]["text"], "PONG");
}

// --- Model lists, errors, logging -------------------------------------------

#[test]
fn model_lists() {
    let endpoint = Endpoint::start_with(&["--model", "fixture-model"]);
    let body = endpoint.get("/v1/models").json();
    assert_eq!(body["object"], "list");
    assert_eq!(body["data"].as_array().unwrap().len(), 1);
    assert_eq!(body["data"][0]["id"], "fixture-model");
    assert_eq!(body["data"][0]["object"], "model");

    let body = endpoint.get("/v1beta/models").json();
    assert_eq!(body["models"].as_array().unwrap().len(), 1);
    assert_eq!(body["models"][0]["name"], "models/fixture-model");
    assert!(body["models"][0]["supportedGenerationMethods"].as_array().unwrap().contains(&json!("generateContent")));

    assert_eq!(endpoint.get("/v1/models/other").json()["id"], "other");
}

#[test]
fn unknown_routes_and_bad_bodies_get_json_errors() {
    let endpoint = Endpoint::start();
    let reply = endpoint.get("/v2/nothing?x=1");
    assert_eq!(reply.status, 404);
    let body = reply.json();
    assert_eq!(body["error"]["code"], 404);
    assert!(body["error"]["message"].as_str().unwrap().contains("/v2/nothing"));
    endpoint.wait_for_log("GET /v2/nothing?x=1", WAIT);

    let reply = endpoint.get("/v1/chat/completions");
    assert_eq!(reply.status, 405);
    assert_eq!(reply.json()["error"]["code"], 405);

    let mut stream = endpoint.connect();
    send(&mut stream, "POST", "/v1/messages", Some("{not json"));
    let mut raw = Vec::new();
    stream.read_to_end(&mut raw).unwrap();
    let reply = Reply::parse(&raw);
    assert_eq!(reply.status, 400);
    assert!(reply.json()["error"]["message"].as_str().unwrap().contains("not JSON"));

    let reply = endpoint.post("/v1beta/models/m:embedContent", &json!({}));
    assert_eq!(reply.status, 404);
}

// --- Scripted answers -------------------------------------------------------

#[test]
fn script_file_answers_first_and_delays() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(
        &script,
        json!([
            {"match": "weather", "answer": "sunny and warm", "delay_ms": 600},
            {"match": "PING", "answer": "scripted pong"},
        ])
        .to_string(),
    )
    .unwrap();
    let endpoint = Endpoint::start_with(&["--script", script.to_str().unwrap(), "--delay-ms", "200"]);
    let chat = |text: &str| {
        let started = Instant::now();
        let body = endpoint
            .post("/v1/chat/completions", &json!({"model": "m", "messages": [{"role": "user", "content": text}]}))
            .json();
        (body["choices"][0]["message"]["content"].as_str().unwrap().to_string(), started.elapsed())
    };
    let (answer, took) = chat("how is the weather?");
    assert_eq!(answer, "sunny and warm");
    assert!(took >= Duration::from_millis(800), "script delay plus global delay: {took:?}");
    let (answer, took) = chat("PING");
    assert_eq!(answer, "scripted pong", "script entries come before the built-in rules");
    assert!(took >= Duration::from_millis(200), "global delay: {took:?}");
    assert_eq!(chat("other").0, "echo: other");
}

#[test]
fn bad_script_file_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    std::fs::write(&script, r#"[{"answer": "no match field"}]"#).unwrap();
    let output = Command::new(env!("CARGO_BIN_EXE_panehost-model-endpoint"))
        .args(["--port", "0", "--script", script.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("bad script"));
    assert!(output.stdout.is_empty());
}

#[test]
fn slow_answer_streams_a_word_every_half_second_and_stops_when_the_client_leaves() {
    let endpoint = Endpoint::start();
    let mut stream = endpoint.connect();
    let started = Instant::now();
    let body = json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "SLOW"}]});
    send(&mut stream, "POST", "/v1/chat/completions", Some(&body.to_string()));
    // Read until the second word ("answer ") has arrived.
    let mut raw = Vec::new();
    let mut buf = [0u8; 4096];
    while !String::from_utf8_lossy(&raw).contains(r#""content":"answer ""#) {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "stream ended early: {}", String::from_utf8_lossy(&raw));
        raw.extend_from_slice(&buf[..n]);
        assert!(started.elapsed() < WAIT);
    }
    let took = started.elapsed();
    assert!(took >= Duration::from_millis(450), "the second word comes after 500 ms: {took:?}");
    assert!(String::from_utf8_lossy(&raw).contains(r#""content":"slow ""#));
    drop(stream);

    let line = endpoint.wait_for_log("client disconnected", Duration::from_secs(5));
    assert!(line.contains("of 123 events"), "{line}");
    let left = Instant::now();

    // The server is free at once for another turn.
    let reply =
        endpoint.post("/v1/messages", &json!({"model": "m", "messages": [{"role": "user", "content": "PING"}]}));
    assert_eq!(reply.json()["content"][0]["text"], "PONG");
    assert!(left.elapsed() < Duration::from_secs(2));
}

#[test]
fn slow_answer_stops_for_every_dialect() {
    let endpoint = Endpoint::start();
    let requests = [
        ("/v1/responses", json!({"model": "m", "stream": true, "input": "SLOW"})),
        ("/v1/messages", json!({"model": "m", "stream": true, "messages": [{"role": "user", "content": "SLOW"}]})),
        (
            "/v1beta/models/m:streamGenerateContent?alt=sse",
            json!({"contents": [{"role": "user", "parts": [{"text": "SLOW"}]}]}),
        ),
    ];
    for (i, (target, body)) in requests.iter().enumerate() {
        let mut stream = endpoint.connect();
        send(&mut stream, "POST", target, Some(&body.to_string()));
        let mut raw = Vec::new();
        let mut buf = [0u8; 4096];
        while !String::from_utf8_lossy(&raw).contains("slow ") {
            let n = stream.read(&mut buf).unwrap();
            assert!(n > 0);
            raw.extend_from_slice(&buf[..n]);
        }
        drop(stream);
        endpoint.wait_for_log(&format!("#{} client disconnected", i + 1), Duration::from_secs(5));
    }
}

#[test]
fn slow_whole_answer_stops_when_the_client_leaves() {
    let endpoint = Endpoint::start();
    let mut stream = endpoint.connect();
    let body = json!({"model": "m", "messages": [{"role": "user", "content": "SLOW"}]});
    send(&mut stream, "POST", "/v1/chat/completions", Some(&body.to_string()));
    endpoint.wait_for_log("#1 prompt \"SLOW\"", WAIT);
    drop(stream);
    endpoint.wait_for_log("#1 client disconnected before the answer", Duration::from_secs(5));
}

// --- Binding ----------------------------------------------------------------

#[test]
fn non_loopback_bind_is_refused() {
    for addr in ["0.0.0.0", "::", "192.0.2.1"] {
        let output = Command::new(env!("CARGO_BIN_EXE_panehost-model-endpoint"))
            .args(["--port", "0", "--bind", addr])
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{addr}");
        assert!(output.stdout.is_empty(), "nothing listens: {}", String::from_utf8_lossy(&output.stdout));
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(&format!("refusing to bind {addr}: not a loopback address")), "{stderr}");
    }
}

#[test]
fn explicit_loopback_bind_and_port() {
    // Find a free port, then ask for it explicitly.
    let port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let endpoint = Endpoint::start_with(&["--bind", "127.0.0.1", "--port", &port.to_string()]);
    assert_eq!(endpoint.port, port);
    assert_eq!(endpoint.get("/v1/models").status, 200);
}
