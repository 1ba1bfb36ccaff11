//! `panehost control`: a JSON-lines bridge for programs without a Rust
//! toolchain.
//!
//! Each line on standard input is one JSON request frame, such as
//! `{"id":1,"request":{"list":{}}}`, forwarded to the host as it is (the host
//! validates the request). Every frame from the host is printed as one
//! line, its JSON as the host sent it but for control characters, which
//! are written as JSON escapes ([`printable::json_line`]: a string holds
//! the same text, and a terminal showing the lines acts on none of what a
//! host wrote). A line the host could not
//! answer by its id (too large for a frame, not JSON, not an object, a key
//! named twice, no id or one that is not a non-negative integer) is
//! answered here with an error line in the host's shape, such as
//! `{"error":{"id":null,"error":{"code":"MALFORMED_REQUEST",...}}}`
//! ([`line_action`]). Lines are read a piece at a time; one longer than a
//! frame is never held whole ([`input_lines`]).
//!
//! Reading lines and relaying the host's frames run side by side, so a
//! host that waits for its answers to be read never stalls the requests.
//! The bridge exits when standard input has closed and every request sent
//! has been answered, or when the host closes the connection.

mod awaited;
mod input_lines;
mod line_action;
mod request_shape;

use super::context::Context;
use super::output::write_stdout;
use super::printable;
use anyhow::Context as _;
use awaited::Awaited;
use futures_util::{SinkExt, StreamExt};
use line_action::LineAction;
use std::cell::{Cell, RefCell};
use tokio::sync::Notify;
use tokio_util::bytes::Bytes;

/// How reading standard input ended.
enum InputEnd {
    /// At the end of input: the answers still due are waited for.
    Closed,
    /// Standard output closed: nothing more can be printed.
    OutputClosed,
}

/// Relays lines and frames until both sides are done.
pub(crate) async fn run(context: &Context) -> anyhow::Result<()> {
    let connection = context.connect_raw_json().await?;
    let (mut to_host, mut from_host) = connection.into_framed().split();
    let mut lines = input_lines::spawn(line_action::MAX_LINE_LEN).context("cannot read standard input")?;
    let awaited = RefCell::new(Awaited::default());
    let input_closed = Cell::new(false);
    let input_closed_signal = Notify::new();

    let forward = async {
        while let Some(line) = lines.recv().await {
            let line = line.context("cannot read standard input")?;
            match line_action::decide(line) {
                LineAction::Skip => {}
                LineAction::Forward { payload, id } => {
                    awaited.borrow_mut().sent(id);
                    to_host.send(Bytes::from(payload)).await.context("cannot write to the host")?;
                }
                LineAction::Answer(answer) => {
                    if !write_line(answer.as_bytes())? {
                        return Ok(InputEnd::OutputClosed);
                    }
                }
            }
        }
        input_closed.set(true);
        input_closed_signal.notify_one();
        anyhow::Ok(InputEnd::Closed)
    };

    let relay = async {
        loop {
            if input_closed.get() && awaited.borrow().is_empty() {
                return anyhow::Ok(());
            }
            tokio::select! {
                frame = from_host.next() => {
                    let Some(frame) = frame else {
                        tracing::debug!("the host closed the connection");
                        return Ok(());
                    };
                    let frame = frame.context("cannot read from the host")?;
                    if let Some(id) = answered_id(&frame) {
                        awaited.borrow_mut().answered(id);
                    }
                    if !write_line(printable::json_line(&String::from_utf8_lossy(&frame)).as_bytes())? {
                        return Ok(());
                    }
                }
                () = input_closed_signal.notified() => {}
            }
        }
    };

    tokio::pin!(forward, relay);
    tokio::select! {
        end = &mut forward => match end? {
            InputEnd::Closed => relay.await,
            InputEnd::OutputClosed => Ok(()),
        },
        result = &mut relay => result,
    }
}

/// Prints one line and flushes it; false once standard output is closed.
fn write_line(line: &[u8]) -> std::io::Result<bool> {
    let mut bytes = Vec::with_capacity(line.len() + 1);
    bytes.extend_from_slice(line);
    bytes.push(b'\n');
    write_stdout(&bytes)
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
    fn answers_are_matched_to_requests_and_events_are_not() {
        assert_eq!(answered_id(br#"{"response":{"id":3,"body":{"panes":{"panes":[]}}}}"#), Some(3));
        assert_eq!(answered_id(br#"{"error":{"id":4,"error":{"code":"UNKNOWN_PANE","message":"x"}}}"#), Some(4));
        assert_eq!(answered_id(br#"{"error":{"id":null,"error":{"code":"INTERNAL","message":"x"}}}"#), None);
        assert_eq!(answered_id(br#"{"event":{"subscription":1,"event":{"ended":{"reason":"exited"}}}}"#), None);
    }
}
