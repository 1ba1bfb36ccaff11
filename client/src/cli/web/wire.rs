//! The JSON text messages of the `/ws` WebSocket.
//!
//! From the server, one object per message, each with one key: the lines
//! `panehost events --json` prints (the `json` module), whose values are
//! the protocol's own JSON (docs/PROTOCOL.md, section 4), and two more:
//!
//! ```text
//! {"start":{"pane":"p1","generation":1,"start":{"replay":{"from":120}}}}
//! {"start":{"pane":"p1","generation":1,"start":{"snapshot":{"snapshot":{...},"skipped_from":120}}}}
//! {"event":{"output":{"offset":120,"data":"<base64>"}}}
//! {"event":{"exited":{"status":{"code":0,"signal":null},"offset":9100}}}
//! {"interrupted":{"pane":"p1","outcome":"turn_cancelled","steps":[{"action":"keys","detail":"\\x03","at_ms":0}]}}
//! {"error":{"error":{"code":"UNKNOWN_PANE","message":"...","limitation":null},"fatal":true}}
//! ```
//!
//! `interrupted` is the protocol's `interrupted` answer as the host writes
//! it; `error` holds the protocol's error body (the host's, or one with a
//! code of the bridge's own, below) and whether the bridge closes the
//! socket after it.
//!
//! From the page: `{"input":"<base64>"}` (keystrokes, paste),
//! `{"resize":{"cols":C,"rows":R}}`, `{"interrupt":true}`.

use crate::ClientError;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use panehost_ipc::{ErrorBody, InterruptReport, Response, Size};
use serde_json::{json, Value};

/// Codes of errors the bridge reports itself (the host's own codes pass
/// through unchanged).
pub(super) mod code {
    /// The host could not be reached, or the connection to it was lost and
    /// could not be reopened.
    pub(crate) const HOST_UNREACHABLE: &str = "HOST_UNREACHABLE";
    /// A message from the page that the bridge cannot read.
    pub(crate) const BAD_MESSAGE: &str = "BAD_MESSAGE";
    /// An interrupt while the page's last one is still being confirmed:
    /// a page has one interrupt in flight at a time.
    pub(crate) const INTERRUPT_IN_PROGRESS: &str = "INTERRUPT_IN_PROGRESS";
}

/// What the page may send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum PageMessage {
    /// Bytes for the pane's terminal.
    Input(Vec<u8>),
    /// The page's terminal has this size now.
    Resize(Size),
    /// Press the runtime's interrupt (the protocol's `interrupt`).
    Interrupt,
}

/// Reads one message of the page.
pub(super) fn parse_page_message(text: &str) -> Result<PageMessage, String> {
    let value: Value = serde_json::from_str(text).map_err(|error| format!("not JSON: {error}"))?;
    let object = value.as_object().ok_or("a message is a JSON object")?;
    if let Some(input) = object.get("input") {
        let input = input.as_str().ok_or("input is a base64 string")?;
        let bytes = STANDARD.decode(input).map_err(|error| format!("input is not base64: {error}"))?;
        return Ok(PageMessage::Input(bytes));
    }
    if let Some(resize) = object.get("resize") {
        let dimension = |name: &str| resize.get(name).and_then(Value::as_u64);
        let (Some(cols), Some(rows)) = (dimension("cols"), dimension("rows")) else {
            return Err("resize needs integer cols and rows".to_owned());
        };
        return size(cols, rows).map(PageMessage::Resize);
    }
    if object.get("interrupt").and_then(Value::as_bool) == Some(true) {
        return Ok(PageMessage::Interrupt);
    }
    Err("expected input, resize or interrupt".to_owned())
}

/// A size within the bounds of [`Size`].
fn size(cols: u64, rows: u64) -> Result<Size, String> {
    let dimension = |value: u64| u16::try_from(value).unwrap_or(u16::MAX);
    Size { cols: dimension(cols), rows: dimension(rows) }.check().map_err(|err| err.to_string())
}

pub(super) use super::super::json::{event_line as event, start_line as start};

/// What an interrupt did: the protocol's `interrupted` answer.
pub(super) fn interrupted(report: InterruptReport) -> Value {
    serde_json::to_value(Response::Interrupted(report)).unwrap_or_default()
}

/// The failure: the host's error when the host answered, else
/// `HOST_UNREACHABLE`.
pub(super) fn error_body(error: &ClientError) -> ErrorBody {
    match error.host_error() {
        Some(body) => body.clone(),
        None => own_error(code::HOST_UNREACHABLE, error.to_string()),
    }
}

/// An error of the bridge's own.
pub(super) fn own_error(code: &str, message: impl Into<String>) -> ErrorBody {
    ErrorBody { code: code.to_owned(), message: message.into(), limitation: None }
}

/// An error message; `fatal` when the bridge closes the socket after it.
pub(super) fn error(body: ErrorBody, fatal: bool) -> Value {
    json!({"error": {"error": body, "fatal": fatal}})
}

#[cfg(test)]
mod tests {
    use super::*;
    use panehost_ipc::{
        ByteBuf, Cursor, ErrorCode, Event, ExitStatus, InputModes, InterruptStep, PaneId, ScreenSnapshot,
        ServerMessage, StreamStart,
    };

    fn snapshot() -> ScreenSnapshot {
        ScreenSnapshot {
            offset: 900,
            size: Size { cols: 100, rows: 30 },
            text: "$".into(),
            formatted: ByteBuf(b"\x1b[H$ ".to_vec()),
            cursor: Cursor { row: 0, col: 2, visible: true },
            title: "sh".into(),
            alternate_screen: false,
            modes: InputModes::default(),
            trimmed: false,
        }
    }

    #[test]
    fn page_messages() {
        assert_eq!(parse_page_message(r#"{"input":"aGkNCg=="}"#), Ok(PageMessage::Input(b"hi\r\n".to_vec())));
        assert_eq!(
            parse_page_message(r#"{"resize":{"cols":120,"rows":40}}"#),
            Ok(PageMessage::Resize(Size { cols: 120, rows: 40 }))
        );
        assert_eq!(parse_page_message(r#"{"interrupt":true}"#), Ok(PageMessage::Interrupt));
        assert!(parse_page_message(r#"{"input":"***"}"#).is_err());
        assert!(parse_page_message(r#"{"resize":{"cols":0,"rows":40}}"#).is_err());
        assert!(parse_page_message(r#"{"resize":{"cols":70000,"rows":40}}"#).is_err());
        assert!(parse_page_message(r#"{"interrupt":false}"#).is_err());
        assert!(parse_page_message("[]").is_err());
        assert!(parse_page_message("nope").is_err());
    }

    #[test]
    fn the_stream_is_sent_in_the_protocols_json() {
        let pane = PaneId::from("p1");
        let start_snapshot = StreamStart::Snapshot { snapshot: snapshot(), skipped_from: Some(120) };
        let line = start(&pane, 3, &start_snapshot);
        assert_eq!(line["start"]["pane"], "p1");
        assert_eq!(line["start"]["generation"], 3);
        assert_eq!(line["start"]["start"], serde_json::to_value(&start_snapshot).unwrap());
        assert_eq!(line["start"]["start"]["snapshot"]["snapshot"]["formatted"], "G1tIJCA=");
        let output = Event::Output { offset: 7, data: ByteBuf(vec![b'h', 0xff]) };
        assert_eq!(event(&output), json!({"event": {"output": {"offset": 7, "data": "aP8="}}}));
        // An event's value is the host's own `event` of a server message.
        let exited = Event::Exited { status: ExitStatus { code: 129, signal: Some("SIGHUP".into()) }, offset: 5 };
        let from_host = serde_json::to_value(ServerMessage::Event { subscription: 1, event: exited.clone() }).unwrap();
        assert_eq!(event(&exited)["event"], from_host["event"]["event"]);
    }

    #[test]
    fn interrupt_reports_and_errors() {
        let report = InterruptReport {
            pane: "p1".into(),
            outcome: "turn_cancelled".into(),
            steps: vec![InterruptStep { action: "keys".into(), detail: "\\x03".into(), at_ms: 0 }],
            sweep: None,
        };
        assert_eq!(
            interrupted(report),
            json!({"interrupted": {"pane": "p1", "outcome": "turn_cancelled",
                   "steps": [{"action": "keys", "detail": "\\x03", "at_ms": 0}], "sweep": null}})
        );
        let unknown = ClientError::Host(ErrorBody::new(ErrorCode::UnknownPane, "no pane has the id p9"));
        assert_eq!(
            error(error_body(&unknown), true),
            json!({"error": {"error": {"code": "UNKNOWN_PANE", "message": "no pane has the id p9", "limitation": null},
                   "fatal": true}})
        );
        assert_eq!(error_body(&ClientError::ConnectionClosed).code, "HOST_UNREACHABLE");
        assert_eq!(
            error(own_error(code::BAD_MESSAGE, "not JSON"), false),
            json!({"error": {"error": {"code": "BAD_MESSAGE", "message": "not JSON", "limitation": null}, "fatal": false}})
        );
    }
}
