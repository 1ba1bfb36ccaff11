//! What `--json` prints: the protocol's own JSON encoding, never a shape of
//! its own (docs/PROTOCOL.md, section 4, "JSON outside the socket"; the
//! schema is docs/protocol.schema.json).
//!
//! A command prints the host's answer as the encoding writes it, without
//! the answer's one key: `start` the `started` answer's pane summary,
//! `ls` the `panes` answer `{"panes": [...]}`, `inspect` the `inspected`
//! answer `{"pane": {...}, "screen": {...}}`, `close` the `closed` answer
//! `{"pane", "status": {"code", "signal"}}`, and so on.
//!
//! `events --json` prints one object per line, each with one key, as the
//! protocol's enums are written:
//!
//! ```text
//! {"start":{"pane":"p1","generation":1,"start":{"replay":{"from":100}}}}
//! {"event":{"output":{"offset":100,"data":"aGkNCg=="}}}
//! {"event":{"exited":{"status":{"code":0,"signal":null},"offset":104}}}
//! {"event":{"ended":{"reason":"exited"}}}
//! ```
//!
//! `start` comes first and again after every reconnect: the `subscribed`
//! answer's `pane`, `generation` and `start` (its `subscription` id belongs
//! to one connection, and is left out). `event` holds an `Event` as the
//! host sent it. The web gateway sends its page the same lines (web/wire.rs).

use panehost_ipc::{Event, PaneId, Response, StreamStart};
use serde_json::{json, Value};

/// The host's answer as `--json` prints it: the JSON encoding of `answer`,
/// less its one key.
pub(crate) fn answer(answer: Response) -> Value {
    match serde_json::to_value(answer) {
        Ok(Value::Object(mut tagged)) if tagged.len() == 1 => {
            tagged.values_mut().next().map(Value::take).unwrap_or_default()
        }
        // Every answer is written as an object with one key: the variant's
        // name.
        other => unreachable!("an answer that is not externally tagged: {other:?}"),
    }
}

/// The line of a stream (re)start.
pub(crate) fn start_line(pane: &PaneId, generation: u64, start: &StreamStart) -> Value {
    json!({"start": {"pane": pane, "generation": generation, "start": start}})
}

/// The line of an event.
pub(crate) fn event_line(event: &Event) -> Value {
    json!({"event": event})
}

#[cfg(test)]
mod tests {
    use super::*;
    use panehost_ipc::{
        ByteBuf, Cursor, ExitStatus, InputModes, PaneDetail, PaneState, PaneSummary, PaneSweep, ScreenSnapshot,
        ServerMessage, Size, Subscription,
    };

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
            trimmed: false,
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

    /// The value under the one key of `message`'s JSON encoding.
    fn untagged(message: &ServerMessage) -> Value {
        let Value::Object(tagged) = serde_json::to_value(message).unwrap() else { panic!("not an object") };
        let body = tagged["response"]["body"].as_object().expect("a response's body");
        body.values().next().unwrap().clone()
    }

    #[test]
    fn an_answer_is_printed_as_the_host_wrote_it_less_its_key() {
        let exited = PaneState::Exited(ExitStatus { code: 3, signal: None });
        let answers = [
            Response::Started(summary(PaneState::Running)),
            Response::Panes { panes: vec![summary(PaneState::Running), summary(exited.clone())] },
            Response::Inspected(PaneDetail { pane: summary(exited), screen: snapshot() }),
            Response::Closed {
                pane: PaneId::from("p1"),
                status: ExitStatus { code: 130, signal: Some("SIGINT".into()) },
                sweep: Some(PaneSweep { method: "process_tree".into(), ended: 2, survivors: vec![] }),
            },
        ];
        for body in answers {
            let message = ServerMessage::Response { id: 1, body: body.clone() };
            assert_eq!(answer(body), untagged(&message));
        }
        let pane = answer(Response::Started(summary(PaneState::Running)));
        assert_eq!(
            (&pane["id"], &pane["state"], &pane["size"]),
            (&json!("p1"), &json!("running"), &json!({"cols": 80, "rows": 24}))
        );
        let closed = answer(Response::Closed {
            pane: PaneId::from("p1"),
            status: ExitStatus { code: 4, signal: None },
            sweep: None,
        });
        assert_eq!(closed, json!({"pane": "p1", "status": {"code": 4, "signal": null}, "sweep": null}));
        let detail = answer(Response::Inspected(PaneDetail { pane: summary(PaneState::Running), screen: snapshot() }));
        assert_eq!(detail["pane"]["offset"], 120);
        assert_eq!(detail["screen"]["formatted"], "JCBscw==");
        assert_eq!(serde_json::from_value::<PaneDetail>(detail).unwrap().screen, snapshot());
    }

    #[test]
    fn stream_lines_hold_the_protocol_values() {
        let output = Event::Output { offset: 7, data: ByteBuf(vec![b'h', b'i', 0xff, b'\n']) };
        assert_eq!(event_line(&output), json!({"event": {"output": {"offset": 7, "data": "aGn/Cg=="}}}));
        let exited = Event::Exited { status: ExitStatus { code: 130, signal: Some("SIGINT".into()) }, offset: 9 };
        assert_eq!(
            event_line(&exited),
            json!({"event": {"exited": {"status": {"code": 130, "signal": "SIGINT"}, "offset": 9}}})
        );
        assert_eq!(serde_json::from_value::<Event>(event_line(&exited)["event"].take()).unwrap(), exited);

        let pane = PaneId::from("p1");
        assert_eq!(
            start_line(&pane, 2, &StreamStart::Replay { from: 50 }),
            json!({"start": {"pane": "p1", "generation": 2, "start": {"replay": {"from": 50}}}})
        );
        // A start line is the `subscribed` answer without its subscription id.
        let start = StreamStart::Snapshot { snapshot: snapshot(), skipped_from: Some(10) };
        let mut line = start_line(&pane, 2, &start);
        let mut subscribed = line["start"].take();
        subscribed["subscription"] = json!(0);
        let subscription: Subscription = serde_json::from_value(subscribed).unwrap();
        assert_eq!(subscription, Subscription { subscription: 0, pane, generation: 2, start });
    }
}
