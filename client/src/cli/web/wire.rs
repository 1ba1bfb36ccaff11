//! The JSON text messages of the `/ws` WebSocket.
//!
//! From the server, one object per message, each with a `type`:
//!
//! ```text
//! {"type":"start","kind":"replay","pane":"p1","generation":1,"offset":120}
//! {"type":"start","kind":"snapshot","pane":"p1","generation":1,"offset":9000,"skipped_from":120,
//!  "data":"<base64>","size":{"cols":80,"rows":24},"title":""}        (skipped_from null for a new viewer)
//! {"type":"start","kind":"generation_changed","pane":"p1","generation":2,"previous":1,"offset":0,
//!  "data":"<base64>","size":{...},"title":""}
//! {"type":"output","offset":120,"data":"<base64>"}
//! {"type":"resync","skipped_from":130,"offset":9000,"data":"<base64>","size":{...},"title":""}
//! {"type":"resized","size":{"cols":100,"rows":30}}
//! {"type":"exited","code":0,"signal":null,"offset":9100}
//! {"type":"ended","reason":"exited"}
//! {"type":"turn_started"|"turn_completed"|"awaiting_input"|"approval_requested","offset":..,"source":..,...}
//! {"type":"interrupted","outcome":"turn_cancelled","steps":[{"action":"keys","detail":"\\x03","at_ms":0},...]}
//! {"type":"error","code":"UNKNOWN_PANE","message":"...","fatal":true}
//! ```
//!
//! `data` of a start or a resync is the snapshot's `formatted` bytes: they
//! redraw the screen on a reset terminal of `size`. `offset` always says
//! where the output continues (for `output`, where its bytes begin).
//!
//! From the page: `{"input":"<base64>"}` (keystrokes, paste),
//! `{"resize":{"cols":C,"rows":R}}`, `{"interrupt":true}`.

use crate::ClientError;
use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use panehost_ipc::{Event, InterruptReport, ScreenSnapshot, Size, StreamStart};
use serde_json::{json, Map, Value};

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

fn size_json(size: Size) -> Value {
    json!({"cols": size.cols, "rows": size.rows})
}

/// The snapshot's fields a page needs to redraw: its bytes, size, title.
fn add_screen(object: &mut Map<String, Value>, snapshot: &ScreenSnapshot) {
    object.insert("offset".into(), json!(snapshot.offset));
    object.insert("data".into(), json!(STANDARD.encode(snapshot.formatted.as_slice())));
    object.insert("size".into(), size_json(snapshot.size));
    object.insert("title".into(), json!(snapshot.title));
}

/// A stream start.
pub(super) fn start(pane: &str, generation: u64, start: &StreamStart) -> Value {
    let mut object = Map::new();
    object.insert("type".into(), json!("start"));
    object.insert("pane".into(), json!(pane));
    object.insert("generation".into(), json!(generation));
    match start {
        StreamStart::Replay { from } => {
            object.insert("kind".into(), json!("replay"));
            object.insert("offset".into(), json!(from));
        }
        StreamStart::Snapshot { snapshot, skipped_from } => {
            object.insert("kind".into(), json!("snapshot"));
            object.insert("skipped_from".into(), json!(skipped_from));
            add_screen(&mut object, snapshot);
        }
        StreamStart::GenerationChanged { previous, snapshot } => {
            object.insert("kind".into(), json!("generation_changed"));
            object.insert("previous".into(), json!(previous));
            add_screen(&mut object, snapshot);
        }
    }
    Value::Object(object)
}

/// An event of the pane.
pub(super) fn event(event: &Event) -> Value {
    match event {
        Event::Output { offset, data } => {
            json!({"type": "output", "offset": offset, "data": STANDARD.encode(data.as_slice())})
        }
        Event::Resync { skipped_from, snapshot } => {
            let mut object = Map::new();
            object.insert("type".into(), json!("resync"));
            object.insert("skipped_from".into(), json!(skipped_from));
            add_screen(&mut object, snapshot);
            Value::Object(object)
        }
        Event::Resized { size } => json!({"type": "resized", "size": size_json(*size)}),
        Event::Exited { status, offset } => {
            json!({"type": "exited", "code": status.code, "signal": status.signal, "offset": offset})
        }
        Event::Ended { reason } => json!({"type": "ended", "reason": reason}),
        Event::TurnStarted { offset, source } => json!({"type": "turn_started", "offset": offset, "source": source}),
        Event::TurnCompleted { offset, source, usage, exit_code } => json!({
            "type": "turn_completed", "offset": offset, "source": source, "exit_code": exit_code,
            "usage": super::super::json::usage_json(usage),
        }),
        Event::AwaitingInput { offset, source, detail } => {
            json!({"type": "awaiting_input", "offset": offset, "source": source, "detail": detail})
        }
        Event::ApprovalRequested { offset, source, detail } => {
            json!({"type": "approval_requested", "offset": offset, "source": source, "detail": detail})
        }
        // Host-wide news, which a pane's stream never carries: the
        // protocol's own JSON.
        other @ (Event::PaneStarted { .. }
        | Event::PaneActivity { .. }
        | Event::PaneExited { .. }
        | Event::PaneEnded { .. }
        | Event::PaneList { .. }) => serde_json::to_value(other).unwrap_or(Value::Null),
    }
}

/// What an interrupt did.
pub(super) fn interrupted(report: &InterruptReport) -> Value {
    let steps: Vec<Value> = report
        .steps
        .iter()
        .map(|step| json!({"action": step.action, "detail": step.detail, "at_ms": step.at_ms}))
        .collect();
    json!({"type": "interrupted", "outcome": report.outcome, "steps": steps})
}

/// `{"code", "message"}` of a failure: the host's code when the host
/// answered, else `HOST_UNREACHABLE`.
pub(super) fn error_body(error: &ClientError) -> Value {
    match error.host_error() {
        Some(body) => json!({"code": body.code, "message": body.message}),
        None => json!({"code": code::HOST_UNREACHABLE, "message": error.to_string()}),
    }
}

/// An error message; `fatal` when the bridge closes the socket after it.
pub(super) fn error(body: Value, fatal: bool) -> Value {
    let mut object = Map::new();
    object.insert("type".into(), json!("error"));
    if let Value::Object(fields) = body {
        object.extend(fields);
    }
    object.insert("fatal".into(), json!(fatal));
    Value::Object(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use panehost_ipc::{ByteBuf, Cursor, ErrorBody, ErrorCode, ExitStatus, InputModes, InterruptStep};

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
    fn starts_say_where_output_continues() {
        assert_eq!(
            start("p1", 3, &StreamStart::Replay { from: 120 }),
            json!({"type": "start", "kind": "replay", "pane": "p1", "generation": 3, "offset": 120})
        );
        assert_eq!(
            start("p1", 3, &StreamStart::Snapshot { snapshot: snapshot(), skipped_from: Some(120) }),
            json!({"type": "start", "kind": "snapshot", "pane": "p1", "generation": 3, "offset": 900,
                   "skipped_from": 120, "data": "G1tIJCA=", "size": {"cols": 100, "rows": 30}, "title": "sh"})
        );
        let changed = start("p1", 4, &StreamStart::GenerationChanged { previous: 3, snapshot: snapshot() });
        assert_eq!(changed["kind"], "generation_changed");
        assert_eq!((changed["previous"].as_u64(), changed["offset"].as_u64()), (Some(3), Some(900)));
    }

    #[test]
    fn events_carry_offsets_and_base64() {
        assert_eq!(
            event(&Event::Output { offset: 7, data: ByteBuf(vec![b'h', 0xff]) }),
            json!({"type": "output", "offset": 7, "data": "aP8="})
        );
        let resync = event(&Event::Resync { skipped_from: 10, snapshot: snapshot() });
        assert_eq!((resync["skipped_from"].as_u64(), resync["offset"].as_u64()), (Some(10), Some(900)));
        assert_eq!(
            event(&Event::Exited { status: ExitStatus { code: 129, signal: Some("SIGHUP".into()) }, offset: 5 }),
            json!({"type": "exited", "code": 129, "signal": "SIGHUP", "offset": 5})
        );
        assert_eq!(event(&Event::Ended { reason: "closed".into() }), json!({"type": "ended", "reason": "closed"}));
    }

    #[test]
    fn interrupt_reports_and_errors() {
        let report = InterruptReport {
            pane: "p1".into(),
            outcome: "turn_cancelled".into(),
            steps: vec![InterruptStep { action: "keys".into(), detail: "\\x03".into(), at_ms: 0 }],
        };
        assert_eq!(
            interrupted(&report),
            json!({"type": "interrupted", "outcome": "turn_cancelled",
                   "steps": [{"action": "keys", "detail": "\\x03", "at_ms": 0}]})
        );
        let unknown = ClientError::Host(ErrorBody::new(ErrorCode::UnknownPane, "no pane has the id p9"));
        assert_eq!(
            error(error_body(&unknown), true),
            json!({"type": "error", "code": "UNKNOWN_PANE", "message": "no pane has the id p9", "fatal": true})
        );
        assert_eq!(error_body(&ClientError::ConnectionClosed)["code"], "HOST_UNREACHABLE");
    }
}
