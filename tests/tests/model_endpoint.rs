//! The model endpoint fixture (`panehost-model-endpoint`) on its own: each
//! API dialect streamed and whole, the scripted answers, tool calls of the
//! client's own writing tool and the answer to their results, the model
//! lists, errors, stopping when a client leaves, and the loopback-only bind.
//!
//! Requests go over a plain `TcpStream` with `Connection: close`; responses
//! are parsed here, chunked transfer encoding included.

use serde_json::{json, Value};
use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(20);

/// A running fixture, killed by pid when dropped.
struct Endpoint {
    child: Child,
    port: u16,
    stderr: Arc<Mutex<Vec<String>>>,
}

impl Endpoint {
    fn start() -> Endpoint {
        Endpoint::start_with(&[])
    }

    fn start_with(args: &[&str]) -> Endpoint {
        let mut child = Command::new(env!("CARGO_BIN_EXE_panehost-model-endpoint"))
            .args(["--port", "0"])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = Arc::new(Mutex::new(Vec::new()));
        let lines = stderr.clone();
        let err = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                lines.lock().unwrap().push(line);
            }
        });
        let mut first = String::new();
        BufReader::new(child.stdout.take().unwrap()).read_line(&mut first).unwrap();
        let port = first
            .trim_end()
            .strip_prefix("listening on http://127.0.0.1:")
            .unwrap_or_else(|| panic!("unexpected first line {first:?}"))
            .parse()
            .unwrap();
        Endpoint { child, port, stderr }
    }

    fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(("127.0.0.1", self.port)).unwrap();
        stream.set_read_timeout(Some(WAIT)).unwrap();
        stream
    }

    fn request(&self, method: &str, target: &str, body: Option<&Value>) -> Reply {
        let mut stream = self.connect();
        send(&mut stream, method, target, body.map(|b| b.to_string()).as_deref());
        let mut raw = Vec::new();
        stream.read_to_end(&mut raw).unwrap();
        Reply::parse(&raw)
    }

    fn post(&self, target: &str, body: &Value) -> Reply {
        self.request("POST", target, Some(body))
    }

    fn get(&self, target: &str) -> Reply {
        self.request("GET", target, None)
    }

    /// Waits until some stderr line contains `text`, and returns it.
    fn wait_for_log(&self, text: &str, within: Duration) -> String {
        let deadline = Instant::now() + within;
        loop {
            if let Some(line) = self.stderr.lock().unwrap().iter().find(|l| l.contains(text)) {
                return line.clone();
            }
            assert!(Instant::now() < deadline, "no stderr line with {text:?} in {:#?}", self.stderr.lock().unwrap());
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Endpoint {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn send(stream: &mut TcpStream, method: &str, target: &str, body: Option<&str>) {
    let mut request = format!("{method} {target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n");
    if let Some(body) = body {
        request.push_str(&format!("Content-Type: application/json\r\nContent-Length: {}\r\n", body.len()));
    }
    request.push_str("\r\n");
    request.push_str(body.unwrap_or(""));
    stream.write_all(request.as_bytes()).unwrap();
}

/// A parsed HTTP/1.1 response.
#[derive(Debug)]
struct Reply {
    status: u16,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Reply {
    fn parse(raw: &[u8]) -> Reply {
        let end = raw.windows(4).position(|w| w == b"\r\n\r\n").expect("no end of headers");
        let head = std::str::from_utf8(&raw[..end]).unwrap();
        let mut lines = head.split("\r\n");
        let status_line = lines.next().unwrap();
        let mut words = status_line.split(' ');
        assert_eq!(words.next(), Some("HTTP/1.1"), "{status_line}");
        let status = words.next().unwrap().parse().unwrap();
        let headers: Vec<(String, String)> = lines
            .map(|line| {
                let (name, value) = line.split_once(':').unwrap();
                (name.trim().to_ascii_lowercase(), value.trim().to_string())
            })
            .collect();
        let rest = &raw[end + 4..];
        let chunked = headers.iter().any(|(n, v)| n == "transfer-encoding" && v.eq_ignore_ascii_case("chunked"));
        let body = if chunked { dechunk(rest) } else { rest.to_vec() };
        if let Some(length) = headers.iter().find(|(n, _)| n == "content-length") {
            assert_eq!(body.len(), length.1.parse::<usize>().unwrap());
        }
        Reply { status, headers, body }
    }

    fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n == name).map(|(_, v)| v.as_str())
    }

    fn is_chunked(&self) -> bool {
        self.header("transfer-encoding") == Some("chunked")
    }

    fn json(&self) -> Value {
        assert!(self.header("content-type").unwrap_or("").starts_with("application/json"), "{:?}", self.headers);
        serde_json::from_slice(&self.body).unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&self.body)))
    }

    /// The body as server-sent events: (event name, data) in order.
    fn events(&self) -> Vec<(Option<String>, String)> {
        assert_eq!(self.status, 200, "{}", String::from_utf8_lossy(&self.body));
        assert_eq!(self.header("content-type"), Some("text/event-stream"));
        assert!(self.is_chunked(), "a stream is sent chunked: {:?}", self.headers);
        let text = std::str::from_utf8(&self.body).unwrap();
        assert!(text.ends_with("\n\n"), "{text:?}");
        text.split("\n\n")
            .filter(|frame| !frame.is_empty())
            .map(|frame| {
                let mut name = None;
                let mut data = None;
                for line in frame.lines() {
                    if let Some(v) = line.strip_prefix("event: ") {
                        name = Some(v.to_string());
                    } else if let Some(v) = line.strip_prefix("data: ") {
                        assert!(data.is_none(), "one data line per event: {frame:?}");
                        data = Some(v.to_string());
                    } else {
                        panic!("unexpected line {line:?}");
                    }
                }
                (name, data.expect("an event has data"))
            })
            .collect()
    }
}

/// Decodes a chunked transfer-encoded body.
fn dechunk(mut raw: &[u8]) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let line_end = raw.windows(2).position(|w| w == b"\r\n").expect("chunk size line");
        let size_text = std::str::from_utf8(&raw[..line_end]).unwrap();
        let size = usize::from_str_radix(size_text.split(';').next().unwrap().trim(), 16).unwrap();
        raw = &raw[line_end + 2..];
        if size == 0 {
            return body;
        }
        body.extend_from_slice(&raw[..size]);
        assert_eq!(&raw[size..size + 2], b"\r\n", "chunk ends in CRLF");
        raw = &raw[size + 2..];
    }
}

#[test]
fn dechunk_decodes() {
    assert_eq!(dechunk(b"4\r\nWiki\r\n6;x=y\r\npedia \r\n0\r\n\r\n"), b"Wikipedia ");
}

fn data_json(events: &[(Option<String>, String)]) -> Vec<Value> {
    events.iter().map(|(_, data)| serde_json::from_str(data).unwrap()).collect()
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

// --- Tool calls --------------------------------------------------------------

/// A fixture whose `WRITE-PROBE` entry asks for a call of the client's own
/// writing tool (`prefer` says which kind first).
fn probe_endpoint(prefer: &str) -> (tempfile::TempDir, Endpoint) {
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("script.json");
    let entry = json!([{
        "match": "WRITE-PROBE",
        "answer": "probe done.",
        "tool_call": {"path": "/w/probe.txt", "content": "probe", "prefer": prefer},
    }]);
    std::fs::write(&script, entry.to_string()).unwrap();
    let endpoint = Endpoint::start_with(&["--script", script.to_str().unwrap()]);
    (dir, endpoint)
}

/// The `type` of each event's data.
fn types(data: &[Value]) -> Vec<&str> {
    data.iter().map(|d| d["type"].as_str().unwrap()).collect()
}

const PROBE_SHELL: &str = "printf '%s\\n' 'probe' > '/w/probe.txt'";

fn anthropic_tools() -> Value {
    json!([
        {"name": "Read", "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}}}},
        {"name": "Write", "input_schema": {"type": "object",
            "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["file_path", "content"]}},
    ])
}

#[test]
fn anthropic_tool_call_and_its_result() {
    let (_dir, endpoint) = probe_endpoint("write");
    let prompt = json!({"role": "user", "content": [{"type": "text", "text": "WRITE-PROBE please"}]});
    let request = |stream: bool, messages: Value| json!({"model": "m", "max_tokens": 100, "stream": stream, "tools": anthropic_tools(), "messages": messages});
    let data = data_json(&endpoint.post("/v1/messages", &request(true, json!([prompt.clone()]))).events());
    assert_eq!(
        types(&data),
        [
            "message_start",
            "content_block_start",
            "content_block_delta",
            "content_block_stop",
            "message_delta",
            "message_stop"
        ]
    );
    let block = &data[1]["content_block"];
    assert_eq!((block["type"].as_str(), block["name"].as_str()), (Some("tool_use"), Some("Write")));
    assert_eq!(block["input"], json!({}));
    assert_eq!(data[2]["delta"]["type"], "input_json_delta");
    let input: Value = serde_json::from_str(data[2]["delta"]["partial_json"].as_str().unwrap()).unwrap();
    assert_eq!(input, json!({"file_path": "/w/probe.txt", "content": "probe"}));
    assert_eq!(data[4]["delta"]["stop_reason"], "tool_use");
    endpoint.wait_for_log("tool call Write (write)", WAIT);

    let whole = endpoint.post("/v1/messages", &request(false, json!([prompt.clone()]))).json();
    assert_eq!(whole["stop_reason"], "tool_use");
    assert_eq!(whole["content"][0]["input"], input);
    let id = whole["content"][0]["id"].clone();

    let result = json!({"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": id, "is_error": true,
         "content": [{"type": "text", "text": "Permission to use Write has been denied."}]},
        {"type": "text", "text": "<system-reminder>note</system-reminder>"},
    ]});
    let answered = json!([prompt, {"role": "assistant", "content": whole["content"].clone()}, result]);
    let data = data_json(&endpoint.post("/v1/messages", &request(true, answered)).events());
    let text: String = data.iter().filter_map(|d| d["delta"]["text"].as_str()).collect();
    assert_eq!(text, "probe done. TOOL-RESULT Write (marked as an error): Permission to use Write has been denied.");
    assert_eq!(data[data.len() - 2]["delta"]["stop_reason"], "end_turn");
    endpoint.wait_for_log("tool result (marked as an error) from Write", WAIT);
}

#[test]
fn chat_tool_call_and_its_result() {
    let (_dir, endpoint) = probe_endpoint("shell");
    let tools = json!([
        {"type": "function", "function": {"name": "write_file", "parameters": {"type": "object",
            "properties": {"file_path": {"type": "string"}, "content": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "run_shell_command", "parameters": {"type": "object",
            "properties": {"command": {"type": "string"}, "description": {"type": "string"}},
            "required": ["command", "description"]}}},
    ]);
    let prompt = json!({"role": "user", "content": "WRITE-PROBE"});
    let request =
        |stream: bool, messages: Value| json!({"model": "m", "stream": stream, "tools": tools, "messages": messages});
    let events = endpoint.post("/v1/chat/completions", &request(true, json!([prompt.clone()]))).events();
    assert_eq!(events.last().unwrap().1, "[DONE]");
    let chunks = data_json(&events[..events.len() - 1]);
    let first = &chunks[0]["choices"][0]["delta"]["tool_calls"][0];
    assert_eq!(
        (first["function"]["name"].as_str(), first["type"].as_str()),
        (Some("run_shell_command"), Some("function"))
    );
    let arguments: String = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str())
        .collect();
    let arguments: Value = serde_json::from_str(&arguments).unwrap();
    assert_eq!(arguments["command"], PROBE_SHELL);
    assert!(arguments["description"].is_string(), "required properties are filled: {arguments}");
    assert_eq!(chunks.last().unwrap()["choices"][0]["finish_reason"], "tool_calls");

    let whole = endpoint.post("/v1/chat/completions", &request(false, json!([prompt.clone()]))).json();
    let choice = &whole["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    let call = &choice["message"]["tool_calls"][0];
    assert_eq!(serde_json::from_str::<Value>(call["function"]["arguments"].as_str().unwrap()).unwrap(), arguments);

    let answered = json!([
        prompt,
        choice["message"],
        {"role": "tool", "tool_call_id": call["id"], "content": "Error: operation denied by the sandbox"},
    ]);
    let whole = endpoint.post("/v1/chat/completions", &request(false, answered)).json();
    assert_eq!(whole["choices"][0]["finish_reason"], "stop");
    assert_eq!(
        whole["choices"][0]["message"]["content"],
        "probe done. TOOL-RESULT run_shell_command: Error: operation denied by the sandbox"
    );
}

#[test]
fn responses_tool_call_and_its_result() {
    let (_dir, endpoint) = probe_endpoint("shell");
    let tools = json!([
        {"type": "custom", "name": "apply_patch", "format": {"type": "grammar"}},
        {"type": "function", "name": "shell", "parameters": {"type": "object",
            "properties": {"command": {"type": "array", "items": {"type": "string"}}, "workdir": {"type": "string"}},
            "required": ["command"]}},
    ]);
    let prompt = json!({"type": "message", "role": "user", "content": [{"type": "input_text", "text": "WRITE-PROBE"}]});
    let request = |stream: bool, input: Value| json!({"model": "m", "stream": stream, "tools": tools, "input": input});
    let data = data_json(&endpoint.post("/v1/responses", &request(true, json!([prompt.clone()]))).events());
    assert_eq!(
        types(&data),
        [
            "response.created",
            "response.output_item.added",
            "response.function_call_arguments.delta",
            "response.function_call_arguments.done",
            "response.output_item.done",
            "response.completed"
        ]
    );
    let sequence: Vec<u64> = data.iter().map(|d| d["sequence_number"].as_u64().unwrap()).collect();
    assert_eq!(sequence, [0, 1, 2, 3, 4, 5]);
    let item = &data[4]["item"];
    assert_eq!((item["type"].as_str(), item["name"].as_str()), (Some("function_call"), Some("shell")));
    let arguments: Value = serde_json::from_str(item["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(arguments, json!({"command": ["bash", "-lc", PROBE_SHELL]}));
    assert_eq!(data[2]["delta"], item["arguments"]);
    assert_eq!(data[5]["response"]["output"][0], *item);

    let whole = endpoint.post("/v1/responses", &request(false, json!([prompt.clone()]))).json();
    let call = whole["output"][0].clone();
    assert_eq!((call["type"].as_str(), call["status"].as_str()), (Some("function_call"), Some("completed")));

    let output =
        json!({"type": "function_call_output", "call_id": call["call_id"], "output": "exit 1: Read-only file system"});
    let data = data_json(&endpoint.post("/v1/responses", &request(true, json!([prompt, call, output]))).events());
    let text: String = data.iter().filter_map(|d| d["delta"].as_str()).collect();
    assert_eq!(text, "probe done. TOOL-RESULT shell: exit 1: Read-only file system");
}

#[test]
fn gemini_tool_call_and_its_result() {
    let (_dir, endpoint) = probe_endpoint("write");
    let tools = json!([{"functionDeclarations": [
        {"name": "read_file", "parametersJsonSchema": {"type": "object", "properties": {"absolute_path": {"type": "string"}}}},
        {"name": "write_file", "parameters": {"type": "OBJECT",
            "properties": {"file_path": {"type": "STRING"}, "content": {"type": "STRING"}}}},
    ]}]);
    let prompt = json!({"role": "user", "parts": [{"text": "WRITE-PROBE"}]});
    let request = |contents: Value| json!({"tools": tools, "contents": contents});
    let stream = "/v1beta/models/g:streamGenerateContent?alt=sse";
    let data = data_json(&endpoint.post(stream, &request(json!([prompt.clone()]))).events());
    assert_eq!(data.len(), 1, "one event holds the call");
    let candidate = &data[0]["candidates"][0];
    assert_eq!(candidate["finishReason"], "STOP");
    let call = &candidate["content"]["parts"][0]["functionCall"];
    assert_eq!(call["name"], "write_file");
    assert_eq!(call["args"], json!({"file_path": "/w/probe.txt", "content": "probe"}));

    let whole = endpoint.post("/v1beta/models/g:generateContent", &request(json!([prompt.clone()]))).json();
    let whole_call = &whole["candidates"][0]["content"]["parts"][0]["functionCall"];
    assert_eq!((&whole_call["name"], &whole_call["args"]), (&call["name"], &call["args"]));
    assert_ne!(whole_call["id"], call["id"], "each call has its own id");

    let answered = json!([
        prompt,
        {"role": "model", "parts": [{"functionCall": call}]},
        {"role": "user", "parts": [{"functionResponse": {"id": call["id"], "name": "write_file",
            "response": {"error": "Tool execution denied by policy."}}}]},
    ]);
    let whole = endpoint.post("/v1beta/models/g:generateContent", &request(answered)).json();
    assert_eq!(
        whole["candidates"][0]["content"]["parts"][0]["text"],
        "probe done. TOOL-RESULT write_file (marked as an error): Tool execution denied by policy."
    );
}

#[test]
fn no_writing_tool_declared_is_said_in_text() {
    let (_dir, endpoint) = probe_endpoint("write");
    let tools = json!([{"name": "Read", "input_schema": {"properties": {"file_path": {}}}}]);
    let body = json!({"model": "m", "max_tokens": 9, "tools": tools,
        "messages": [{"role": "user", "content": "WRITE-PROBE"}]});
    let whole = endpoint.post("/v1/messages", &body).json();
    assert_eq!(whole["stop_reason"], "end_turn");
    assert_eq!(whole["content"][0]["text"], "NO-WRITE-TOOL declared tools: [Read]");
    endpoint.wait_for_log("no tool that writes among [Read]", WAIT);
    // Without the entry's word, the same request is an ordinary turn.
    let plain =
        json!({"model": "m", "max_tokens": 9, "tools": tools, "messages": [{"role": "user", "content": "PING"}]});
    assert_eq!(endpoint.post("/v1/messages", &plain).json()["content"][0]["text"], "PONG");
}
