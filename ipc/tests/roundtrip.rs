//! Every message round-trips through both encodings, and malformed request
//! frames keep their id when it can be read.

use panehost_ipc::*;

fn snapshot() -> ScreenSnapshot {
    ScreenSnapshot {
        offset: 42,
        size: Size { cols: 80, rows: 24 },
        text: "$ ls\nfile".into(),
        formatted: ByteBuf::from(&b"\x1b[H$ ls\r\nfile\xff"[..]),
        cursor: Cursor { row: 1, col: 4, visible: true },
        title: "t".into(),
        alternate_screen: false,
        modes: InputModes { bracketed_paste: true, ..InputModes::default() },
        trimmed: false,
    }
}

fn summary() -> PaneSummary {
    PaneSummary {
        id: PaneId::from("p1"),
        runtime: "shell".into(),
        generation: 1,
        state: PaneState::Exited(ExitStatus { code: 130, signal: Some("SIGINT".into()) }),
        pid: 1234,
        size: Size::DEFAULT,
        offset: 99,
        cwd: "/".into(),
        title: String::new(),
        created_at_ms: 1,
        activity: "idle".into(),
        completion: "terminal_notification".into(),
        restored_by: "started".into(),
        labels: Default::default(),
    }
}

fn receipt() -> Receipt {
    Receipt {
        runtime: "claude".into(),
        passed: false,
        detail: "the answer carried another value".into(),
        path: "/usr/bin/claude".into(),
        version: Some("2.1.197".into()),
        sha256: "cd".repeat(32),
        fingerprint: Some("ef".repeat(32)),
        taken_at_ms: 1_700_000_000_000,
        elapsed_ms: 4_000,
        read_only_enforced: true,
    }
}

fn every_request() -> Vec<Request> {
    let pane = PaneId::from("p1");
    vec![
        Request::Start(StartParams {
            runtime: "shell".into(),
            cwd: Some("/tmp".into()),
            size: Some(Size { cols: 100, rows: 30 }),
            command: vec!["sh".into(), "-c".into(), "echo hi".into()],
            model: None,
            resume: Some(ResumeRequest::Reference("abc".into())),
            max_wall_ms: Some(1000),
            permission_profile: Some("read_only".into()),
            accept_weaker_boundary: true,
            require_ready: true,
            rerun_after_host_loss: true,
            labels: [("owner".to_owned(), "ada".to_owned())].into(),
            env: [("TASK".to_owned(), "42".to_owned())].into(),
            allow_refused_version: true,
        }),
        Request::Start(StartParams { resume: Some(ResumeRequest::Latest), ..StartParams::default() }),
        Request::Send(SendParams {
            pane: pane.clone(),
            text: "ls".into(),
            bytes: ByteBuf::from(&[3u8, 0, 255][..]),
            enter: true,
        }),
        Request::Interrupt { pane: pane.clone(), terminate: true },
        Request::Ask { pane: pane.clone(), text: "hi".into(), timeout_ms: Some(5) },
        Request::Notify { pane: pane.clone(), token: "t".into(), event: "turn_completed".into(), payload: "{}".into() },
        Request::ProbeRuntime { runtime: "claude".into(), model: Some("m".into()), accept_weaker_boundary: false },
        Request::Inspect { pane: pane.clone() },
        Request::Events { pane: pane.clone(), from: Some(7) },
        Request::Events { pane: pane.clone(), from: None },
        Request::Reconnect { pane: pane.clone(), generation: 2, offset: 1 << 40 },
        Request::Unsubscribe { subscription: 3 },
        Request::Resize { pane: pane.clone(), size: Size { cols: 1, rows: 1 } },
        Request::List { labels: Default::default() },
        Request::Close { pane },
        Request::Runtimes {},
        Request::Login { runtime: "claude".into(), cwd: None, size: Some(Size::DEFAULT) },
    ]
}

fn every_server_message() -> Vec<ServerMessage> {
    let pane = PaneId::from("p1");
    let bodies = vec![
        Response::Started(summary()),
        Response::Sent { pane: pane.clone(), bytes: 3 },
        Response::Interrupted(InterruptReport {
            pane: pane.clone(),
            outcome: "keys_sent".into(),
            steps: vec![InterruptStep { action: "keys".into(), detail: "\\x03".into(), at_ms: 0 }],
            sweep: None,
        }),
        Response::Inspected(PaneDetail { pane: summary(), screen: snapshot() }),
        Response::Subscribed(Subscription {
            subscription: 1,
            pane: pane.clone(),
            generation: 1,
            start: StreamStart::Replay { from: 5 },
        }),
        Response::Subscribed(Subscription {
            subscription: 2,
            pane: pane.clone(),
            generation: 1,
            start: StreamStart::Snapshot { snapshot: snapshot(), skipped_from: Some(3) },
        }),
        Response::Subscribed(Subscription {
            subscription: 3,
            pane: pane.clone(),
            generation: 2,
            start: StreamStart::GenerationChanged { previous: 1, snapshot: snapshot() },
        }),
        Response::Unsubscribed { subscription: 1 },
        Response::Resized { pane: pane.clone(), size: Size::DEFAULT },
        Response::Panes { panes: vec![summary()] },
        Response::Closed {
            pane,
            status: ExitStatus { code: 0, signal: None },
            sweep: Some(PaneSweep { method: "process_tree".into(), ended: 3, survivors: vec![] }),
        },
        Response::Runtimes {
            runtimes: vec![RuntimeInfo {
                id: "shell".into(),
                display_name: "Shell".into(),
                supported: true,
                available: true,
                path: Some("/bin/sh".into()),
                version: None,
                unavailable_reason: None,
                resume_modes: vec!["UNSUPPORTED".into()],
                limitations: vec![limitation::COMPLETION_UNOBSERVED.into()],
                sha256: Some("ab".repeat(32)),
                version_floor: None,
                floor_status: Some("indeterminate".into()),
                readiness: "not_ready".into(),
                readiness_gate: Some("receipt".into()),
                readiness_reason: Some("no receipt taken".into()),
                sign_in: "not_required".into(),
                sign_in_detail: None,
                receipt: Some(receipt()),
                receipt_valid: false,
                completion: "unobserved".into(),
                login: "not_required".into(),
                evidence: "this_repository".into(),
                permission_profiles: vec!["read_only".into()],
                default_permission_profile: Some("workspace_write".into()),
                version_refused: Some(VersionRefusal { from: "1.52.0".into(), before: None, reason: "retired".into() }),
                package: Some("pypi kimi-cli 1.52.0".into()),
                fingerprint: Some("01".repeat(32)),
            }],
        },
    ];
    let mut bodies = bodies;
    bodies.push(Response::Answered(TurnReport {
        source: "hook".into(),
        started_offset: 1,
        completed_offset: 9,
        duration_ms: 3,
        added_text: "done".into(),
        usage: Usage { kind: "measured".into(), input_tokens: Some(3), output_tokens: Some(4), cost_micro_usd: None },
        exit_code: None,
    }));
    bodies.push(Response::Notified {});
    bodies.push(Response::Receipt(receipt()));
    let events = vec![
        Event::TurnStarted { offset: 1, source: "input".into() },
        Event::TurnCompleted { offset: 2, source: "heuristic".into(), usage: Usage::unavailable(), exit_code: None },
        Event::TurnCompleted {
            offset: 5,
            source: "shell_integration".into(),
            usage: Usage::unavailable(),
            exit_code: Some(130),
        },
        Event::AwaitingInput { offset: 3, source: "hook".into(), detail: "waiting".into() },
        Event::ApprovalRequested { offset: 4, source: "hook".into(), detail: "Bash".into() },
        Event::Output { offset: 0, data: ByteBuf::from(&b"\x1b[31mhi\xe2\x82"[..]) },
        Event::Resync { skipped_from: 1, snapshot: snapshot() },
        Event::Resized { size: Size::DEFAULT },
        Event::Exited { status: ExitStatus { code: 1, signal: None }, offset: 10 },
        Event::Ended { reason: "exited".into() },
        Event::PaneChanged { pane: PaneId("p2".into()), size: Size { cols: 1000, rows: 250 }, title: "é".repeat(3) },
    ];
    let mut messages: Vec<ServerMessage> =
        bodies.into_iter().enumerate().map(|(i, body)| ServerMessage::Response { id: i as u64, body }).collect();
    messages.extend(events.into_iter().map(|event| ServerMessage::Event { subscription: 9, event }));
    messages.push(ServerMessage::Error { id: Some(4), error: ErrorBody::new(ErrorCode::UnknownPane, "no pane p9") });
    messages.push(ServerMessage::Error {
        id: None,
        error: ErrorBody::unsupported(limitation::NATIVE_RESUME_UNSUPPORTED, "x"),
    });
    messages
}

#[test]
fn requests_round_trip_in_both_encodings() {
    for encoding in [Encoding::Json, Encoding::Bincode] {
        for (id, request) in every_request().into_iter().enumerate() {
            let frame = RequestFrame { id: id as u64, request };
            let bytes = encode(encoding, &frame).unwrap();
            assert_eq!(decode_request(encoding, &bytes).unwrap(), frame, "{encoding:?}");
        }
    }
}

#[test]
fn server_messages_round_trip_in_both_encodings() {
    for encoding in [Encoding::Json, Encoding::Bincode] {
        for message in every_server_message() {
            let bytes = encode(encoding, &message).unwrap();
            assert_eq!(decode::<ServerMessage>(encoding, &bytes).unwrap(), message, "{encoding:?}");
        }
    }
}

#[test]
fn json_shapes_are_the_documented_ones() {
    let frame = RequestFrame { id: 7, request: Request::Inspect { pane: PaneId::from("p1") } };
    assert_eq!(
        String::from_utf8(encode(Encoding::Json, &frame).unwrap()).unwrap(),
        r#"{"id":7,"request":{"inspect":{"pane":"p1"}}}"#
    );
    let event = ServerMessage::Event { subscription: 2, event: Event::Output { offset: 5, data: ByteBuf::from("hi") } };
    assert_eq!(
        String::from_utf8(encode(Encoding::Json, &event).unwrap()).unwrap(),
        r#"{"event":{"subscription":2,"event":{"output":{"offset":5,"data":"aGk="}}}}"#
    );
}

#[test]
fn json_optional_fields_may_be_left_out() {
    let frame: RequestFrame = decode(Encoding::Json, br#"{"id":1,"request":{"start":{"runtime":"shell"}}}"#).unwrap();
    assert_eq!(frame.request, Request::Start(StartParams { runtime: "shell".into(), ..StartParams::default() }));
    let frame: RequestFrame =
        decode(Encoding::Json, br#"{"id":2,"request":{"send":{"pane":"p1","text":"ls","enter":true}}}"#).unwrap();
    match frame.request {
        Request::Send(params) => assert_eq!(params.input_bytes(), b"ls\r"),
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn unknown_operation_keeps_its_id_in_json() {
    let err = decode_request(Encoding::Json, br#"{"id":41,"request":{"teleport":{}}}"#).unwrap_err();
    assert_eq!(err.id, Some(41));
    let err = decode_request(Encoding::Json, b"{not json").unwrap_err();
    assert_eq!(err.id, None);
}

#[test]
fn unknown_operation_keeps_its_id_in_bincode() {
    // id 41 as a varint, then an operation index no request has.
    let err = decode_request(Encoding::Bincode, &[41, 200]).unwrap_err();
    assert_eq!(err.id, Some(41));
    assert!(decode_request(Encoding::Bincode, &[]).unwrap_err().id.is_none());
}

#[test]
fn bincode_trailing_bytes_are_refused() {
    let mut bytes =
        encode(Encoding::Bincode, &RequestFrame { id: 1, request: Request::List { labels: Default::default() } })
            .unwrap();
    bytes.push(0);
    assert!(matches!(decode_request(Encoding::Bincode, &bytes).unwrap_err().error, WireError::TrailingBytes(1)));
}

#[test]
fn hello_is_plain_json() {
    let hello: Hello = serde_json::from_str(r#"{"protocol":1,"encoding":"bincode"}"#).unwrap();
    assert_eq!(hello.encoding, Encoding::Bincode);
    let refused = HandshakeReply::Refused { code: "PROTOCOL_MISMATCH".into(), message: "m".into(), protocol: 1 };
    assert_eq!(
        serde_json::to_string(&refused).unwrap(),
        r#"{"refused":{"code":"PROTOCOL_MISMATCH","message":"m","protocol":1}}"#
    );
}

#[test]
fn error_codes_are_unique_and_parse_back() {
    let mut seen = std::collections::HashSet::new();
    for code in ErrorCode::ALL {
        assert!(seen.insert(code.as_str()));
        assert_eq!(ErrorCode::parse(code.as_str()), Some(*code));
    }
}
