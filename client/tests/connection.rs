//! `Client` and `EventStream` against a scripted host on a real socket.

mod support;

use panehost_client::{Client, ClientError, ClientOptions, RawConnection};
use panehost_ipc::{
    Encoding, ErrorBody, ErrorCode, Event, ExitStatus, HandshakeReply, PaneId, PaneState, PaneSummary, Request,
    Response, Size, StreamStart,
};
use std::time::Duration;
use support::{event, expect_request, output, pair, subscribed, within, FakeHost, SocketPath};

fn summary(id: &str) -> PaneSummary {
    PaneSummary {
        id: PaneId::from(id),
        runtime: "shell".into(),
        generation: 1,
        state: PaneState::Running,
        pid: 100,
        size: Size::DEFAULT,
        offset: 0,
        cwd: "/".into(),
        title: String::new(),
        created_at_ms: 1,
        activity: "idle".into(),
        completion: "screen_heuristic".into(),
        restored_by: "started".into(),
        labels: Default::default(),
    }
}

#[tokio::test]
async fn typed_requests_in_both_encodings() {
    for encoding in [Encoding::Bincode, Encoding::Json] {
        let socket = SocketPath::new();
        let host = FakeHost::bind(socket.path());
        let options = ClientOptions::with_encoding(encoding);
        let (client, mut conn) = pair(&host, socket.path(), &options).await;
        assert_eq!(client.welcome().host, "fake 0");
        assert_eq!(conn.encoding, encoding);

        let serve = async {
            let first = conn.request().await;
            expect_request(&first, &Request::List { labels: Default::default() });
            conn.respond(first.id, Response::Panes { panes: vec![summary("p1")] }).await;
            let second = conn.request().await;
            assert!(second.id > first.id, "ids grow");
            expect_request(&second, &Request::Close { pane: PaneId::from("p1") });
            let status = ExitStatus { code: 143, signal: Some("SIGTERM".into()) };
            conn.respond(second.id, Response::Closed { pane: PaneId::from("p1"), status, sweep: None }).await;
        };
        let run = async {
            let panes = client.list().await.unwrap();
            assert_eq!(panes, vec![summary("p1")]);
            let status = client.close(&PaneId::from("p1")).await.unwrap();
            assert_eq!(status.code, 143);
        };
        within(async { tokio::join!(serve, run) }).await;
    }
}

#[tokio::test]
async fn answers_reach_their_requests_in_any_order() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let (client, mut conn) = pair(&host, socket.path(), &ClientOptions::default()).await;
    let serve = async {
        let a = conn.request().await;
        let b = conn.request().await;
        // Answer the later one first.
        for frame in [b, a] {
            let Request::Inspect { .. } = &frame.request else { panic!("unexpected {frame:?}") };
            let size = Size { cols: frame.id as u16, rows: 1 };
            conn.respond(frame.id, Response::Resized { pane: PaneId::from("x"), size }).await;
        }
    };
    let ask = |client: Client| async move {
        let answer = client.request(Request::Inspect { pane: PaneId::from("x") }).await.unwrap();
        answer
    };
    let (_, first, second) = within(async { tokio::join!(serve, ask(client.clone()), ask(client.clone())) }).await;
    let (Response::Resized { size: first, .. }, Response::Resized { size: second, .. }) = (first, second) else {
        panic!("unexpected answers")
    };
    assert_ne!(first.cols, second.cols, "each request got its own answer");
}

#[tokio::test]
async fn host_errors_and_wrong_answers_are_typed() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let (client, mut conn) = pair(&host, socket.path(), &ClientOptions::default()).await;
    let serve = async {
        let frame = conn.request().await;
        conn.fail(Some(frame.id), ErrorBody::new(ErrorCode::UnknownPane, "no pane p9")).await;
        let frame = conn.request().await;
        conn.respond(frame.id, Response::Panes { panes: vec![] }).await;
    };
    let run = async {
        match client.inspect(&PaneId::from("p9")).await {
            Err(ClientError::Host(body)) => assert_eq!(body.code, "UNKNOWN_PANE"),
            other => panic!("expected a host error, got {other:?}"),
        }
        match client.runtimes().await {
            Err(ClientError::UnexpectedResponse { expected: "runtimes", got: "panes" }) => {}
            other => panic!("expected a wrong-answer error, got {other:?}"),
        }
    };
    within(async { tokio::join!(serve, run) }).await;
}

#[tokio::test]
async fn a_refused_handshake_is_an_error_with_the_code() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let serve = async {
        let mut conn = host.accept_raw().await;
        conn.read_hello().await;
        let refusal =
            HandshakeReply::Refused { code: "PROTOCOL_MISMATCH".into(), message: "speak 2".into(), protocol: 2 };
        conn.send_json(&refusal).await;
    };
    let options = ClientOptions::default();
    let (result, ()) = within(async { tokio::join!(Client::connect(socket.path(), &options), serve) }).await;
    match result {
        Err(ClientError::Refused { code, protocol: 2, .. }) => assert_eq!(code, "PROTOCOL_MISMATCH"),
        other => panic!("expected a refusal, got {other:?}"),
    }
}

#[tokio::test]
async fn no_socket_is_unreachable() {
    let socket = SocketPath::new();
    let error = Client::connect(socket.path(), &ClientOptions::default()).await.unwrap_err();
    assert!(error.is_unreachable(), "{error:?}");
}

#[tokio::test]
async fn a_silent_host_times_out() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let options = ClientOptions { request_timeout: Some(Duration::from_millis(100)), ..ClientOptions::default() };
    let (client, mut conn) = pair(&host, socket.path(), &options).await;
    let result = within(client.list()).await;
    assert!(matches!(result, Err(ClientError::Timeout { .. })), "{result:?}");
    // The late answer is discarded and the connection stays usable.
    let late = conn.request().await;
    conn.respond(late.id, Response::Panes { panes: vec![] }).await;
    let serve = async {
        let frame = conn.request().await;
        conn.respond(frame.id, Response::Panes { panes: vec![summary("p2")] }).await;
    };
    let (_, panes) = within(async { tokio::join!(serve, client.list()) }).await;
    assert_eq!(panes.unwrap().len(), 1);
}

#[tokio::test]
async fn an_error_without_id_fails_waiting_requests_and_the_connection_goes_on() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let (client, mut conn) = pair(&host, socket.path(), &ClientOptions::default()).await;
    let serve = async {
        conn.request().await;
        conn.fail(None, ErrorBody::new(ErrorCode::MalformedRequest, "unreadable")).await;
    };
    let (_, result) = within(async { tokio::join!(serve, client.list()) }).await;
    match result {
        Err(ClientError::ConnectionError(body)) => assert_eq!(body.code, "MALFORMED_REQUEST"),
        other => panic!("expected a connection error, got {other:?}"),
    }
    assert!(!client.is_closed());
    let serve = async {
        let frame = conn.request().await;
        conn.respond(frame.id, Response::Panes { panes: vec![] }).await;
    };
    let (_, result) = within(async { tokio::join!(serve, client.list()) }).await;
    assert_eq!(result.unwrap(), vec![]);
}

#[tokio::test]
async fn an_error_without_id_then_close_explains_later_failures() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let (client, mut conn) = pair(&host, socket.path(), &ClientOptions::default()).await;
    let serve = async move {
        conn.request().await;
        conn.fail(None, ErrorBody::new(ErrorCode::FrameTooLarge, "too big")).await;
        drop(conn);
    };
    let (_, result) = within(async { tokio::join!(serve, client.list()) }).await;
    assert!(matches!(result, Err(ClientError::ConnectionError(_))), "{result:?}");
    within(async {
        while !client.is_closed() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    match client.list().await {
        Err(ClientError::ConnectionError(body)) => assert_eq!(body.code, "FRAME_TOO_LARGE"),
        other => panic!("expected the host's reason, got {other:?}"),
    }
}

#[tokio::test]
async fn a_closed_socket_fails_waiting_requests() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let (client, mut conn) = pair(&host, socket.path(), &ClientOptions::default()).await;
    let serve = async move {
        conn.request().await;
        drop(conn);
    };
    let (_, result) = within(async { tokio::join!(serve, client.list()) }).await;
    assert!(matches!(result, Err(ClientError::ConnectionClosed)), "{result:?}");
    assert!(result.unwrap_err().is_connection_lost());
}

#[tokio::test]
async fn events_that_follow_the_answer_at_once_are_not_lost() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let (client, mut conn) = pair(&host, socket.path(), &ClientOptions::default()).await;
    let serve = async {
        let frame = conn.request().await;
        let id = expect_request(&frame, &Request::Events { pane: PaneId::from("p1"), from: Some(0) });
        // The answer and the first events leave in one write.
        conn.send_all(vec![
            subscribed(id, 9, "p1", 1, StreamStart::Replay { from: 0 }),
            output(9, 0, "hello "),
            output(9, 6, "world"),
            event(9, Event::Exited { status: ExitStatus { code: 0, signal: None }, offset: 11 }),
            event(9, Event::Ended { reason: "exited".into() }),
        ])
        .await;
    };
    let run = async {
        let mut stream = client.subscribe(&PaneId::from("p1"), Some(0)).await.unwrap();
        assert_eq!(stream.id(), 9);
        assert_eq!(stream.start(), &StreamStart::Replay { from: 0 });
        let mut events = Vec::new();
        while let Some(event) = stream.next().await {
            events.push(event);
        }
        assert!(stream.is_ended());
        events
    };
    let (_, events) = within(async { tokio::join!(serve, run) }).await;
    assert_eq!(events.len(), 4);
    assert_eq!(events[0], Event::Output { offset: 0, data: "hello ".into() });
    assert!(matches!(events[3], Event::Ended { .. }));
}

#[tokio::test]
async fn a_slow_subscriber_loses_nothing() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let options = ClientOptions { event_buffer: 2, ..ClientOptions::default() };
    let (client, mut conn) = pair(&host, socket.path(), &options).await;
    let serve = async {
        let frame = conn.request().await;
        conn.respond(
            frame.id,
            Response::Subscribed(panehost_ipc::Subscription {
                subscription: 1,
                pane: PaneId::from("p1"),
                generation: 1,
                start: StreamStart::Replay { from: 0 },
            }),
        )
        .await;
        let mut messages: Vec<_> = (0..200u64).map(|n| output(1, n, "x")).collect();
        messages.push(event(1, Event::Ended { reason: "closed".into() }));
        conn.send_all(messages).await;
        conn
    };
    let run = async {
        let mut stream = client.subscribe(&PaneId::from("p1"), None).await.unwrap();
        let mut offsets = Vec::new();
        while let Some(event) = stream.next().await {
            if let Event::Output { offset, .. } = event {
                offsets.push(offset);
                tokio::task::yield_now().await;
            }
        }
        offsets
    };
    let (_conn, offsets) = within(async { tokio::join!(serve, run) }).await;
    assert_eq!(offsets, (0..200).collect::<Vec<_>>());
}

#[tokio::test]
async fn dropping_a_stream_unsubscribes() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let (client, mut conn) = pair(&host, socket.path(), &ClientOptions::default()).await;
    let serve = async {
        let frame = conn.request().await;
        conn.send(subscribed(frame.id, 4, "p1", 1, StreamStart::Replay { from: 0 })).await;
        conn.request().await
    };
    let run = async {
        let stream = client.subscribe(&PaneId::from("p1"), Some(0)).await.unwrap();
        drop(stream);
    };
    let (unsubscribe, ()) = within(async { tokio::join!(serve, run) }).await;
    assert_eq!(unsubscribe.request, Request::Unsubscribe { subscription: 4 });
}

#[tokio::test]
async fn a_raw_subscribe_request_ends_the_subscription_it_opened() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let (client, mut conn) = pair(&host, socket.path(), &ClientOptions::default()).await;
    let serve = async {
        let frame = conn.request().await;
        conn.send(subscribed(frame.id, 6, "p1", 1, StreamStart::Replay { from: 0 })).await;
        conn.request().await
    };
    let request = Request::Events { pane: PaneId::from("p1"), from: Some(0) };
    let (unsubscribe, answer) = within(async { tokio::join!(serve, client.request(request)) }).await;
    assert!(matches!(answer, Ok(Response::Subscribed(_))));
    assert_eq!(unsubscribe.request, Request::Unsubscribe { subscription: 6 });
}

#[tokio::test]
async fn the_last_handle_closes_the_connection() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let (client, mut conn) = pair(&host, socket.path(), &ClientOptions::default()).await;
    let clone = client.clone();
    drop(client);
    drop(clone);
    assert_eq!(conn.next_payload().await, None);
}

#[tokio::test]
async fn send_input_splits_large_input_and_presses_enter_last() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let (client, mut conn) = pair(&host, socket.path(), &ClientOptions::default()).await;
    let input = vec![b'a'; panehost_client::INPUT_CHUNK_LEN * 2 + 10];
    let serve = async {
        let mut received = Vec::new();
        let mut enters = Vec::new();
        while received.len() < input.len() {
            let frame = conn.request().await;
            let Request::Send(params) = frame.request else { panic!("expected send") };
            assert!(params.bytes.len() <= panehost_client::INPUT_CHUNK_LEN);
            received.extend_from_slice(params.bytes.as_slice());
            enters.push(params.enter);
            let bytes = params.input_bytes().len() as u64;
            conn.respond(frame.id, Response::Sent { pane: params.pane, bytes }).await;
        }
        (received, enters)
    };
    let pane = PaneId::from("p1");
    let (served, written) = within(async { tokio::join!(serve, client.send_input(&pane, &input, true)) }).await;
    let (received, enters) = served;
    assert_eq!(received, input);
    assert_eq!(enters, [false, false, true]);
    assert_eq!(written.unwrap(), input.len() as u64 + 1);
}

#[tokio::test]
async fn a_raw_connection_passes_frames_through() {
    use futures_util::{SinkExt, StreamExt};
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let options = ClientOptions::with_encoding(Encoding::Json);
    let (raw, mut conn) = tokio::join!(RawConnection::connect(socket.path(), &options), host.accept());
    let mut framed = raw.unwrap().into_framed();
    let line = br#"{"id":5,"request":{"list":{}}}"#;
    framed.send(tokio_util::bytes::Bytes::from_static(line)).await.unwrap();
    assert_eq!(conn.next_payload().await.unwrap(), line);
    conn.send_raw(br#"{"response":{"id":5,"body":{"panes":{"panes":[]}}}}"#.to_vec()).await;
    let answer = within(framed.next()).await.unwrap().unwrap();
    assert_eq!(&answer[..], br#"{"response":{"id":5,"body":{"panes":{"panes":[]}}}}"#);
}
