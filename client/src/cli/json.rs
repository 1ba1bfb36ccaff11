//! The JSON shapes the command prints (`--json`).
//!
//! A pane (`start`, `ls`, `inspect`):
//!
//! ```text
//! {"id": "p1", "runtime": "shell", "generation": 1,
//!  "state": "running" | "exited", "exit_code": 0, "signal": null,   (exit_code and signal only when exited)
//!  "pid": 4242, "size": {"cols": 80, "rows": 24}, "offset": 1234,
//!  "cwd": "/home/u", "title": "", "created_at_ms": 1764482092000}
//! ```
//!
//! `inspect` adds `"screen": {"text", "cols", "rows", "cursor": {"row",
//! "col", "visible"}, "title", "offset", "alternate_screen", "modes",
//! "formatted_base64"}`.
//!
//! Event lines (`events --json`), one object per line, each with `type`:
//!
//! ```text
//! {"type":"start","kind":"replay","generation":1,"offset":100}
//! {"type":"start","kind":"snapshot","generation":1,"offset":100,"skipped_from":null,"screen":{...}}
//! {"type":"start","kind":"generation_changed","generation":2,"previous":1,"offset":0,"screen":{...}}
//! {"type":"output","offset":100,"data":"hi\r\n","data_base64":"aGkNCg=="}
//! {"type":"resync","skipped_from":100,"offset":9000,"screen":{...}}
//! {"type":"resized","size":{"cols":120,"rows":40}}
//! {"type":"exited","exit_code":0,"signal":null,"offset":9100}
//! {"type":"ended","reason":"exited"}
//! ```
//!
//! Key order is not significant. `offset` always says where output continues (for output, where its data
//! begins). `data` is the output as UTF-8 with invalid sequences replaced
//! (a character split across two events is replaced in both);
//! `data_base64` holds the exact bytes.

use panehost_ipc::{ByteBuf, Event, PaneState, PaneSummary, ScreenSnapshot, Size, StreamStart};
use serde_json::{json, Map, Value};

/// A size as `{"cols", "rows"}`.
pub(crate) fn size(size: Size) -> Value {
    json!({"cols": size.cols, "rows": size.rows})
}

/// Bytes as a standard base64 string.
fn base64(bytes: &ByteBuf) -> Value {
    // ByteBuf serializes to base64 in JSON.
    serde_json::to_value(bytes).unwrap_or(Value::Null)
}

/// A pane summary.
pub(crate) fn pane(summary: &PaneSummary) -> Value {
    let mut object = Map::new();
    object.insert("id".into(), json!(summary.id.as_str()));
    object.insert("runtime".into(), json!(summary.runtime));
    object.insert("generation".into(), json!(summary.generation));
    match &summary.state {
        PaneState::Running => {
            object.insert("state".into(), json!("running"));
        }
        PaneState::Exited(status) => {
            object.insert("state".into(), json!("exited"));
            object.insert("exit_code".into(), json!(status.code));
            object.insert("signal".into(), json!(status.signal));
        }
    }
    object.insert("pid".into(), json!(summary.pid));
    object.insert("size".into(), size(summary.size));
    object.insert("offset".into(), json!(summary.offset));
    object.insert("cwd".into(), json!(summary.cwd));
    object.insert("title".into(), json!(summary.title));
    object.insert("created_at_ms".into(), json!(summary.created_at_ms));
    object.insert("activity".into(), json!(summary.activity));
    object.insert("completion".into(), json!(summary.completion));
    object.insert("restored_by".into(), json!(summary.restored_by));
    object.insert("labels".into(), json!(summary.labels));
    Value::Object(object)
}

/// A screen snapshot.
pub(crate) fn screen(snapshot: &ScreenSnapshot) -> Value {
    json!({
        "text": snapshot.text,
        "cols": snapshot.size.cols,
        "rows": snapshot.size.rows,
        "cursor": {"row": snapshot.cursor.row, "col": snapshot.cursor.col, "visible": snapshot.cursor.visible},
        "title": snapshot.title,
        "offset": snapshot.offset,
        "alternate_screen": snapshot.alternate_screen,
        "modes": {
            "bracketed_paste": snapshot.modes.bracketed_paste,
            "mouse": snapshot.modes.mouse,
            "application_keypad": snapshot.modes.application_keypad,
            "application_cursor": snapshot.modes.application_cursor,
        },
        "formatted_base64": base64(&snapshot.formatted),
    })
}

/// A pane with its screen, as `inspect --json` prints it.
pub(crate) fn pane_detail(summary: &PaneSummary, snapshot: &ScreenSnapshot) -> Value {
    let mut value = pane(summary);
    if let Value::Object(object) = &mut value {
        object.insert("screen".into(), screen(snapshot));
    }
    value
}

/// The line for a stream start.
pub(crate) fn start_line(generation: u64, start: &StreamStart) -> Value {
    match start {
        StreamStart::Replay { from } => {
            json!({"type": "start", "kind": "replay", "generation": generation, "offset": from})
        }
        StreamStart::Snapshot { snapshot, skipped_from } => json!({
            "type": "start", "kind": "snapshot", "generation": generation,
            "offset": snapshot.offset, "skipped_from": skipped_from, "screen": screen(snapshot),
        }),
        StreamStart::GenerationChanged { previous, snapshot } => json!({
            "type": "start", "kind": "generation_changed", "generation": generation,
            "previous": previous, "offset": snapshot.offset, "screen": screen(snapshot),
        }),
    }
}

/// The line for an event.
pub(crate) fn event_line(event: &Event) -> Value {
    match event {
        Event::Output { offset, data } => json!({
            "type": "output",
            "offset": offset,
            "data": String::from_utf8_lossy(data.as_slice()),
            "data_base64": base64(data),
        }),
        Event::Resync { skipped_from, snapshot } => json!({
            "type": "resync", "skipped_from": skipped_from, "offset": snapshot.offset, "screen": screen(snapshot),
        }),
        Event::Resized { size: new_size } => json!({"type": "resized", "size": size(*new_size)}),
        Event::Exited { status, offset } => {
            json!({"type": "exited", "exit_code": status.code, "signal": status.signal, "offset": offset})
        }
        Event::Ended { reason } => json!({"type": "ended", "reason": reason}),
        Event::TurnStarted { offset, source } => json!({"type": "turn_started", "offset": offset, "source": source}),
        Event::TurnCompleted { offset, source, usage, exit_code } => json!({
            "type": "turn_completed", "offset": offset, "source": source, "exit_code": exit_code, "usage": usage_json(usage),
        }),
        Event::AwaitingInput { offset, source, detail } => {
            json!({"type": "awaiting_input", "offset": offset, "source": source, "detail": detail})
        }
        Event::ApprovalRequested { offset, source, detail } => {
            json!({"type": "approval_requested", "offset": offset, "source": source, "detail": detail})
        }
        Event::PaneStarted { pane: summary } => json!({"type": "pane_started", "pane": pane(summary)}),
        Event::PaneActivity { pane, activity } => {
            json!({"type": "pane_activity", "pane": pane.as_str(), "activity": activity})
        }
        Event::PaneExited { pane, status } => {
            json!({"type": "pane_exited", "pane": pane.as_str(), "exit_code": status.code, "signal": status.signal})
        }
        Event::PaneEnded { pane, reason } => json!({"type": "pane_ended", "pane": pane.as_str(), "reason": reason}),
        Event::PaneList { panes, missed } => {
            json!({"type": "pane_list", "panes": panes.iter().map(pane).collect::<Vec<_>>(), "missed": missed})
        }
    }
}

/// A turn's usage as JSON.
pub(crate) fn usage_json(usage: &panehost_ipc::Usage) -> Value {
    json!({
        "kind": usage.kind, "input_tokens": usage.input_tokens,
        "output_tokens": usage.output_tokens, "cost_micro_usd": usage.cost_micro_usd,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use panehost_ipc::{Cursor, ExitStatus, InputModes, PaneId};

    fn snapshot() -> ScreenSnapshot {
        ScreenSnapshot {
            offset: 100,
            size: Size { cols: 80, rows: 24 },
            text: "$ ls".into(),
            formatted: "$ ls".into(),
            cursor: Cursor { row: 0, col: 4, visible: true },
            title: "sh".into(),
            alternate_screen: false,
            modes: InputModes::default(),
        }
    }

    fn summary(state: PaneState) -> PaneSummary {
        PaneSummary {
            id: PaneId::from("p1"),
            runtime: "shell".into(),
            generation: 1,
            state,
            pid: 42,
            size: Size { cols: 80, rows: 24 },
            offset: 120,
            cwd: "/home/u".into(),
            title: "sh".into(),
            created_at_ms: 5,
            activity: "idle".into(),
            completion: "screen_heuristic".into(),
            restored_by: "started".into(),
            labels: Default::default(),
        }
    }

    #[test]
    fn output_line_has_lossy_text_and_exact_base64() {
        let event = Event::Output { offset: 7, data: ByteBuf(vec![b'h', b'i', 0xff, b'\n']) };
        assert_eq!(
            event_line(&event),
            json!({"type": "output", "offset": 7, "data": "hi\u{fffd}\n", "data_base64": "aGn/Cg=="})
        );
    }

    #[test]
    fn lifecycle_lines() {
        let exited = Event::Exited { status: ExitStatus { code: 130, signal: Some("SIGINT".into()) }, offset: 9 };
        assert_eq!(event_line(&exited), json!({"type": "exited", "exit_code": 130, "signal": "SIGINT", "offset": 9}));
        assert_eq!(event_line(&Event::Ended { reason: "exited".into() }), json!({"type": "ended", "reason": "exited"}));
        assert_eq!(
            event_line(&Event::Resized { size: Size { cols: 120, rows: 40 } }),
            json!({"type": "resized", "size": {"cols": 120, "rows": 40}})
        );
        let resync = event_line(&Event::Resync { skipped_from: 3, snapshot: snapshot() });
        assert_eq!(resync["type"], "resync");
        assert_eq!(resync["skipped_from"], 3);
        assert_eq!(resync["offset"], 100);
    }

    #[test]
    fn start_lines_say_where_output_continues() {
        assert_eq!(
            start_line(2, &StreamStart::Replay { from: 50 }),
            json!({"type": "start", "kind": "replay", "generation": 2, "offset": 50})
        );
        let line = start_line(2, &StreamStart::Snapshot { snapshot: snapshot(), skipped_from: Some(10) });
        assert_eq!(line["kind"], "snapshot");
        assert_eq!(line["offset"], 100);
        assert_eq!(line["skipped_from"], 10);
        assert_eq!(line["screen"]["text"], "$ ls");
        assert_eq!(line["screen"]["formatted_base64"], "JCBscw==");
        let line = start_line(3, &StreamStart::GenerationChanged { previous: 2, snapshot: snapshot() });
        assert_eq!((line["kind"].as_str(), line["previous"].as_u64()), (Some("generation_changed"), Some(2)));
    }

    #[test]
    fn pane_shapes() {
        let running = pane(&summary(PaneState::Running));
        assert_eq!(running["state"], "running");
        assert!(running.get("exit_code").is_none());
        assert_eq!(running["size"], json!({"cols": 80, "rows": 24}));
        let exited = pane(&summary(PaneState::Exited(ExitStatus { code: 3, signal: None })));
        assert_eq!((exited["state"].as_str(), exited["exit_code"].as_u64()), (Some("exited"), Some(3)));
        let detail = pane_detail(&summary(PaneState::Running), &snapshot());
        assert_eq!(detail["screen"]["cursor"], json!({"row": 0, "col": 4, "visible": true}));
        assert_eq!(detail["screen"]["cols"], 80);
        assert_eq!(detail["screen"]["title"], "sh");
        assert_eq!(detail["offset"], 120);
        assert_eq!(detail["screen"]["offset"], 100);
    }
}
