//! The model endpoint fixture's tool calls: a script entry asks for a call
//! of the client's own writing (or shell) tool, found among the tools the
//! request declares, in each dialect, and the answer to the tool's result.

mod endpoint_client;

use endpoint_client::*;
use serde_json::{json, Value};

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
