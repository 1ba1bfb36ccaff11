//! Requests on one connection run concurrently: a request that waits (an
//! `ask` for its turn, an `interrupt` for its confirmation) holds up no
//! other; answers come in any order, matched by id; input still reaches a
//! pane in the order the host read the requests, and one submission at a
//! time.

mod support;

use panehost_ipc::{Encoding, ErrorCode, PaneId, Request, Response, SendParams, ServerMessage};
use std::collections::HashMap;
use support::*;

fn ask(pane: &PaneId, text: &str) -> Request {
    Request::Ask { pane: pane.clone(), text: text.into(), timeout_ms: Some(60_000) }
}

fn raw(pane: &PaneId, text: &str) -> Request {
    Request::Send(SendParams { pane: pane.clone(), text: text.into(), ..SendParams::default() })
}

fn submit(pane: &PaneId, text: &str) -> Request {
    Request::Send(SendParams { pane: pane.clone(), text: text.into(), enter: true, ..SendParams::default() })
}

/// Reads answers until every one of `ids` has one: the answers, and the
/// ids in the order they were answered.
fn answers_to(
    conn: &mut Connection,
    ids: &[u64],
) -> (HashMap<u64, Result<Response, panehost_ipc::ErrorBody>>, Vec<u64>) {
    let mut answers = HashMap::new();
    let mut order = Vec::new();
    while !ids.iter().all(|id| answers.contains_key(id)) {
        let (id, answer) = conn.next_answer();
        order.push(id);
        answers.insert(id, answer);
    }
    (answers, order)
}

/// A shell pane whose prompt has been drawn.
fn shell_at_prompt(conn: &mut Connection) -> PaneId {
    let pane = conn.start(start_params("shell", &[])).id;
    let subscription = conn.subscribe(&pane, Some(0)).subscription;
    conn.follow_until(subscription, &mut Transcript::from(0), |t| !t.bytes.is_empty());
    conn.ok(Request::Unsubscribe { subscription });
    pane
}

fn an_ask_that_waits_holds_up_nothing_else_on_its_connection(encoding: Encoding) {
    let host = TestHost::start();
    let mut conn = host.connect(encoding);
    let shell = shell_at_prompt(&mut conn);
    let agent = conn.start(start_params("fixture", &[])).id;
    let (subscription, mut transcript) = conn.follow_from_start_until(&agent, "fixture> ");
    // Its turns now work for a minute.
    conn.type_raw(&agent, "/delay 60000\r");
    conn.follow_until_text(subscription, &mut transcript, "delay: 60000");

    let asked = conn.send(ask(&agent, "slow question"));
    let inspected = conn.send(Request::Inspect { pane: agent.clone() });
    let sent = conn.send(raw(&shell, "echo b\r"));
    // Until the turn works (an interrupt before the program has read the
    // prompt would cancel the prompt instead), reading answers and events.
    let mut answers = HashMap::new();
    let mut order = Vec::new();
    while !(answers.contains_key(&inspected)
        && answers.contains_key(&sent)
        && transcript.text().contains("working: slow question"))
    {
        match conn.read() {
            ServerMessage::Event { subscription: id, event } if id == subscription => transcript.record(event),
            ServerMessage::Event { .. } => {}
            ServerMessage::Response { id, body } => {
                order.push(id);
                answers.insert(id, Ok(body));
            }
            ServerMessage::Error { id: Some(id), error } => {
                order.push(id);
                answers.insert(id, Err(error));
            }
            other => panic!("{other:?}"),
        }
    }
    assert!(!answers.contains_key(&asked), "the ask was answered before its turn ended: {:?}", answers[&asked]);
    assert!(matches!(answers[&inspected], Ok(Response::Inspected(_))), "{:?}", answers[&inspected]);
    assert!(matches!(answers[&sent], Ok(Response::Sent { bytes: 7, .. })), "{:?}", answers[&sent]);

    let interrupted = conn.send(Request::Interrupt { pane: agent.clone(), terminate: false });
    let (mut rest, _) = answers_to(&mut conn, &[asked, interrupted]);
    // The interrupt stopped the turn the ask was waiting on: it was
    // handled while the ask waited.
    match rest.remove(&interrupted).unwrap() {
        Ok(Response::Interrupted(report)) => assert_eq!(report.outcome, "turn_cancelled", "{report:?}"),
        other => panic!("{other:?}"),
    }
    match rest.remove(&asked).unwrap() {
        Ok(Response::Answered(report)) => assert!(report.completed_offset > report.started_offset, "{report:?}"),
        other => panic!("{other:?}"),
    }
    conn.follow_until_text(subscription, &mut transcript, "interrupted");
    conn.ok(Request::Close { pane: agent });
    conn.ok(Request::Close { pane: shell });
    host.stop();
}

#[test]
fn an_ask_that_waits_holds_up_nothing_else_on_a_json_connection() {
    an_ask_that_waits_holds_up_nothing_else_on_its_connection(Encoding::Json);
}

#[test]
fn an_ask_that_waits_holds_up_nothing_else_on_a_bincode_connection() {
    an_ask_that_waits_holds_up_nothing_else_on_its_connection(Encoding::Bincode);
}

#[test]
fn two_asks_at_once_on_one_pane_start_one_turn_and_refuse_the_other() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    let pane = shell_at_prompt(&mut conn);

    let first = conn.send(ask(&pane, "echo first-$((1+1))"));
    let second = conn.send(ask(&pane, "echo second-$((2+2))"));
    let (answers, _) = answers_to(&mut conn, &[first, second]);
    match &answers[&first] {
        Ok(Response::Answered(report)) => assert!(report.added_text.contains("first-2"), "{report:?}"),
        other => panic!("the first in line is answered: {other:?}"),
    }
    match &answers[&second] {
        Err(error) => assert_eq!(error.code, ErrorCode::TurnInProgress.as_str(), "{error:?}"),
        other => panic!("the second is refused: {other:?}"),
    }

    // The same from two connections at once: one turn, one refusal,
    // whichever the host read first.
    let mut other = host.connect(Encoding::Bincode);
    let mine = conn.send(ask(&pane, "echo mine-$((3+3))"));
    let theirs = other.send(ask(&pane, "echo theirs-$((4+4))"));
    let mine = answers_to(&mut conn, &[mine]).0.remove(&mine).unwrap();
    let theirs = answers_to(&mut other, &[theirs]).0.remove(&theirs).unwrap();
    let outcomes = [mine, theirs];
    let answered: Vec<_> = outcomes.iter().filter_map(|outcome| outcome.as_ref().ok()).collect();
    let refused: Vec<_> = outcomes.iter().filter_map(|outcome| outcome.as_ref().err()).collect();
    assert_eq!((answered.len(), refused.len()), (1, 1), "{outcomes:?}");
    assert_eq!(refused[0].code, ErrorCode::TurnInProgress.as_str());

    let screen = match conn.ok(Request::Inspect { pane: pane.clone() }) {
        Response::Inspected(detail) => detail.screen.text,
        other => panic!("{other:?}"),
    };
    for merged in ["first-$((1+1))echo", "mine-$((3+3))echo", "theirs-$((4+4))echo"] {
        assert!(!screen.contains(merged), "two submissions were typed as one line:\n{screen}");
    }
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn input_reaches_the_pane_in_the_order_the_requests_were_read() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Json);
    // No echo: what comes out is what cat read, line by line.
    let pane = conn.start(start_params("shell", &["sh", "-c", "stty -echo; echo ready; exec cat"])).id;
    let (subscription, mut transcript) = conn.follow_from_start_until(&pane, "ready");

    // The submission waits for an echo that never comes before its Enter;
    // the raw input read after it must not slip into that wait.
    let ids = [conn.send(raw(&pane, "one\r")), conn.send(submit(&pane, "two")), conn.send(raw(&pane, "three\r"))];
    let (answers, _) = answers_to(&mut conn, &ids);
    for id in ids {
        assert!(matches!(answers[&id], Ok(Response::Sent { .. })), "{:?}", answers[&id]);
    }
    conn.follow_until_text(subscription, &mut transcript, "three\r\n");
    assert!(transcript.text().ends_with("one\r\ntwo\r\nthree\r\n"), "{:?}", transcript.text());
    conn.ok(Request::Close { pane });
    host.stop();
}

#[test]
fn more_requests_than_run_at_once_are_all_answered() {
    let host = TestHost::start();
    let mut conn = host.connect(Encoding::Bincode);
    let pane = shell_at_prompt(&mut conn);
    // The first submits (the echo and its settling take a while); the
    // others wait in the pane's input line meanwhile, more of them than a
    // connection runs at once, and are refused once the turn is open.
    let ids: Vec<u64> = (0..300).map(|n| conn.send(ask(&pane, &format!("echo many-{n}")))).collect();
    let (answers, _) = answers_to(&mut conn, &ids);
    assert!(matches!(answers[&ids[0]], Ok(Response::Answered(_))), "{:?}", answers[&ids[0]]);
    for id in &ids[1..] {
        match &answers[id] {
            Err(error) => assert_eq!(error.code, ErrorCode::TurnInProgress.as_str()),
            other => panic!("{other:?}"),
        }
    }
    conn.ok(Request::Close { pane });
    host.stop();
}
