//! `panehost control`: a JSON-lines bridge for programs without a Rust
//! toolchain.
//!
//! Each line on standard input is one JSON request frame, such as
//! `{"id":1,"request":{"list":{}}}`, forwarded to the host as it is (the host
//! validates it). Every frame from the host is printed as one line, its
//! JSON exactly as the host sent it. A line that is not JSON at all, or too
//! large for a frame, is answered here with an error line in the host's
//! shape: `{"error":{"id":null,"error":{"code":"MALFORMED_REQUEST",...}}}`.
//!
//! The bridge exits when standard input has closed and every request sent
//! has been answered, or when the host closes the connection.

use super::context::Context;
use super::output::write_stdout;
use super::stdin_thread;
use anyhow::Context as _;
use futures_util::{SinkExt, StreamExt};
use panehost_ipc::{ErrorBody, ErrorCode, ServerMessage, MAX_CLIENT_FRAME_LEN};
use std::collections::HashSet;
use tokio_util::bytes::Bytes;

/// What to do with one input line.
#[derive(Debug, PartialEq, Eq)]
enum LineAction {
    /// Nothing (a blank line).
    Skip,
    /// Forward this payload; its answer will carry `id`, when readable.
    Forward { payload: Vec<u8>, id: Option<u64> },
    /// Print this line instead of forwarding.
    Answer(String),
}

/// Relays lines and frames until both sides are done.
pub(crate) async fn run(context: &Context) -> anyhow::Result<()> {
    let connection = context.connect_raw_json().await?;
    let (mut to_host, mut from_host) = connection.into_framed().split();
    let mut lines = stdin_thread::spawn_line_reader().context("cannot read standard input")?;
    let mut awaiting: HashSet<u64> = HashSet::new();
    let mut stdin_open = true;
    while stdin_open || !awaiting.is_empty() {
        tokio::select! {
            line = lines.recv(), if stdin_open => match line {
                None => stdin_open = false,
                Some(Err(error)) => return Err(error).context("cannot read standard input"),
                Some(Ok(line)) => match prepare_line(&line) {
                    LineAction::Skip => {}
                    LineAction::Forward { payload, id } => {
                        if let Some(id) = id {
                            awaiting.insert(id);
                        }
                        to_host.send(Bytes::from(payload)).await.context("cannot write to the host")?;
                    }
                    LineAction::Answer(answer) => {
                        if !write_line(answer.as_bytes())? {
                            break;
                        }
                    }
                },
            },
            frame = from_host.next() => match frame {
                None => {
                    tracing::debug!("the host closed the connection");
                    break;
                }
                Some(frame) => {
                    let frame = frame.context("cannot read from the host")?;
                    if let Some(id) = answered_id(&frame) {
                        awaiting.remove(&id);
                    }
                    if !write_line(&frame)? {
                        break;
                    }
                }
            },
        }
    }
    Ok(())
}

/// Prints one line and flushes it; false once standard output is closed.
fn write_line(line: &[u8]) -> std::io::Result<bool> {
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line);
    bytes.push(b'\n');
    write_stdout(&bytes)
}

/// Decides what to do with an input line.
fn prepare_line(line: &[u8]) -> LineAction {
    let line = line.trim_ascii();
    if line.is_empty() {
        return LineAction::Skip;
    }
    let value = match serde_json::from_slice::<serde_json::Value>(line) {
        Ok(value) => value,
        Err(error) => {
            return LineAction::Answer(local_error(None, ErrorCode::MalformedRequest, format!("not JSON: {error}")))
        }
    };
    let id = value.get("id").and_then(serde_json::Value::as_u64);
    if line.len() > MAX_CLIENT_FRAME_LEN {
        let message = format!("the request is {} bytes; a frame holds at most {MAX_CLIENT_FRAME_LEN}", line.len());
        return LineAction::Answer(local_error(id, ErrorCode::FrameTooLarge, message));
    }
    LineAction::Forward { payload: line.to_vec(), id }
}

/// An error line in the shape the host uses.
fn local_error(id: Option<u64>, code: ErrorCode, message: String) -> String {
    let message = ServerMessage::Error { id, error: ErrorBody::new(code, message) };
    serde_json::to_string(&message).unwrap_or_default()
}

/// The request id a host frame answers, if it answers one.
fn answered_id(frame: &[u8]) -> Option<u64> {
    if frame.starts_with(b"{\"event\"") {
        return None;
    }
    let value: serde_json::Value = serde_json::from_slice(frame).ok()?;
    let answer = value.get("response").or_else(|| value.get("error"))?;
    answer.get("id")?.as_u64()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_lines_are_forwarded_verbatim_with_their_id() {
        let line = b"  {\"id\":7,\"request\":{\"list\":{}}}\r\n";
        assert_eq!(
            prepare_line(line),
            LineAction::Forward { payload: br#"{"id":7,"request":{"list":{}}}"#.to_vec(), id: Some(7) }
        );
        // The host, not the bridge, judges whether a JSON value is a request.
        assert_eq!(prepare_line(b"[1,2]\n"), LineAction::Forward { payload: b"[1,2]".to_vec(), id: None });
        assert_eq!(prepare_line(b" \n"), LineAction::Skip);
    }

    #[test]
    fn a_line_that_is_not_json_is_answered_locally() {
        let LineAction::Answer(answer) = prepare_line(b"hello\n") else { panic!("expected a local answer") };
        let value: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(value["error"]["id"], serde_json::Value::Null);
        assert_eq!(value["error"]["error"]["code"], "MALFORMED_REQUEST");
    }

    #[test]
    fn answers_are_matched_to_requests_and_events_are_not() {
        assert_eq!(answered_id(br#"{"response":{"id":3,"body":{"panes":{"panes":[]}}}}"#), Some(3));
        assert_eq!(answered_id(br#"{"error":{"id":4,"error":{"code":"UNKNOWN_PANE","message":"x"}}}"#), Some(4));
        assert_eq!(answered_id(br#"{"error":{"id":null,"error":{"code":"INTERNAL","message":"x"}}}"#), None);
        assert_eq!(answered_id(br#"{"event":{"subscription":1,"event":{"ended":{"reason":"exited"}}}}"#), None);
    }
}
