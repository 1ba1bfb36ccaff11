//! `PaneFollower` across lost connections, against a scripted host.

mod support;

use panehost_client::{ClientError, FollowItem, FollowOptions, PaneFollower, ReconnectPolicy};
use panehost_ipc::{
    ByteBuf, Cursor, ErrorBody, ErrorCode, Event, ExitStatus, InputModes, PaneId, Request, ScreenSnapshot, Size,
    StreamStart,
};
use std::time::Duration;
use support::{event, expect_request, output, subscribed, within, FakeHost, SocketPath};

fn snapshot(offset: u64, text: &str) -> ScreenSnapshot {
    ScreenSnapshot {
        offset,
        size: Size::DEFAULT,
        text: text.into(),
        formatted: ByteBuf::from(text),
        cursor: Cursor { row: 0, col: 0, visible: true },
        title: String::new(),
        alternate_screen: false,
        modes: InputModes::default(),
        trimmed: false,
    }
}

fn options() -> FollowOptions {
    FollowOptions {
        reconnect: ReconnectPolicy {
            initial_backoff: Duration::from_millis(10),
            max_backoff: Duration::from_millis(50),
            max_total: Duration::from_secs(5),
        },
        ..FollowOptions::default()
    }
}

fn pane() -> PaneId {
    PaneId::from("p1")
}

fn out(offset: u64, data: &str) -> FollowItem {
    FollowItem::Event(Event::Output { offset, data: data.into() })
}

/// Collects items until the follower ends.
async fn drain(follower: &mut PaneFollower) -> Vec<FollowItem> {
    let mut items = Vec::new();
    while let Some(item) = within(follower.next()).await.unwrap() {
        items.push(item);
    }
    items
}

#[tokio::test]
async fn resumes_exactly_after_the_last_output_handed_on() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let first_start = StreamStart::Snapshot { snapshot: snapshot(100, "$ "), skipped_from: None };

    let serve = async {
        // First connection: a snapshot start, two outputs, then the host goes away.
        let mut conn = host.accept().await;
        let frame = conn.request().await;
        let id = expect_request(&frame, &Request::Events { pane: pane(), from: None });
        conn.send_all(vec![
            subscribed(id, 1, "p1", 7, first_start.clone()),
            output(1, 100, "hello"),
            output(1, 105, " world"),
        ])
        .await;
        drop(conn);

        // Second connection: the client must ask to resume from 111.
        let mut conn = host.accept().await;
        let frame = conn.request().await;
        let id = expect_request(&frame, &Request::Reconnect { pane: pane(), generation: 7, offset: 111 });
        conn.send_all(vec![
            subscribed(id, 2, "p1", 7, StreamStart::Replay { from: 111 }),
            // A host that replays a little too much: the overlap is trimmed.
            output(2, 108, "rld!"),
            output(2, 112, "?"),
            event(2, Event::Exited { status: ExitStatus { code: 0, signal: None }, offset: 113 }),
            event(2, Event::Ended { reason: "exited".into() }),
        ])
        .await;
        conn
    };
    let follow = async {
        let mut follower = PaneFollower::connect(socket.path(), &options(), pane(), None).await.unwrap();
        let mut items = Vec::new();
        for _ in 0..3 {
            items.push(within(follower.next()).await.unwrap().unwrap());
        }
        assert_eq!(follower.offset(), Some(111));
        items.extend(drain(&mut follower).await);
        (items, follower)
    };
    let (_conn, (items, follower)) = within(async { tokio::join!(serve, follow) }).await;
    assert_eq!(
        items,
        vec![
            FollowItem::Start(first_start),
            out(100, "hello"),
            out(105, " world"),
            FollowItem::Start(StreamStart::Replay { from: 111 }),
            out(111, "!"),
            out(112, "?"),
            FollowItem::Event(Event::Exited { status: ExitStatus { code: 0, signal: None }, offset: 113 }),
            FollowItem::Event(Event::Ended { reason: "exited".into() }),
        ]
    );
    assert_eq!(follower.offset(), Some(113));
    assert_eq!(follower.generation(), Some(7));
}

#[tokio::test]
async fn output_buffered_before_the_loss_is_handed_on_first() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let serve = async {
        let mut conn = host.accept().await;
        let frame = conn.request().await;
        let id = expect_request(&frame, &Request::Events { pane: pane(), from: Some(40) });
        conn.send_all(vec![
            subscribed(id, 1, "p1", 2, StreamStart::Replay { from: 40 }),
            output(1, 40, "abc"),
            output(1, 43, "def"),
        ])
        .await;
        drop(conn);
        // "def" arrived before the loss: the resume starts after it.
        let mut conn = host.accept().await;
        let frame = conn.request().await;
        let id = expect_request(&frame, &Request::Reconnect { pane: pane(), generation: 2, offset: 46 });
        conn.send_all(vec![
            subscribed(id, 5, "p1", 2, StreamStart::Replay { from: 46 }),
            output(5, 46, "ghi"),
            event(5, Event::Ended { reason: "closed".into() }),
        ])
        .await;
        conn
    };
    let follow = async {
        let mut follower = PaneFollower::connect(socket.path(), &options(), pane(), Some(40)).await.unwrap();
        let mut items = vec![within(follower.next()).await.unwrap().unwrap()];
        // Read on only once the connection is gone, with "def" still buffered.
        within(async {
            while !follower.client().is_some_and(|client| client.is_closed()) {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        })
        .await;
        items.extend(drain(&mut follower).await);
        items
    };
    let (_conn, items) = within(async { tokio::join!(serve, follow) }).await;
    let outputs: Vec<_> = items.iter().filter(|item| matches!(item, FollowItem::Event(Event::Output { .. }))).collect();
    assert_eq!(outputs, vec![&out(40, "abc"), &out(43, "def"), &out(46, "ghi")]);
}

#[tokio::test]
async fn a_snapshot_start_after_reconnect_is_handed_on() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let later = StreamStart::Snapshot { snapshot: snapshot(9000, "later"), skipped_from: Some(5) };
    let changed = StreamStart::GenerationChanged { previous: 1, snapshot: snapshot(0, "new") };
    let serve = async {
        let mut conn = host.accept().await;
        let frame = conn.request().await;
        conn.send_all(vec![subscribed(frame.id, 1, "p1", 1, StreamStart::Replay { from: 0 }), output(1, 0, "hello")])
            .await;
        drop(conn);
        let mut conn = host.accept().await;
        let frame = conn.request().await;
        let id = expect_request(&frame, &Request::Reconnect { pane: pane(), generation: 1, offset: 5 });
        conn.send(subscribed(id, 2, "p1", 1, later.clone())).await;
        drop(conn);
        let mut conn = host.accept().await;
        let frame = conn.request().await;
        let id = expect_request(&frame, &Request::Reconnect { pane: pane(), generation: 1, offset: 9000 });
        conn.send_all(vec![
            subscribed(id, 3, "p1", 2, changed.clone()),
            event(3, Event::Ended { reason: "closed".into() }),
        ])
        .await;
        conn
    };
    let follow = async {
        let mut follower = PaneFollower::connect(socket.path(), &options(), pane(), Some(0)).await.unwrap();
        let items = drain(&mut follower).await;
        (items, follower.generation())
    };
    let (_conn, (items, generation)) = within(async { tokio::join!(serve, follow) }).await;
    assert_eq!(
        items,
        vec![
            FollowItem::Start(StreamStart::Replay { from: 0 }),
            out(0, "hello"),
            FollowItem::Start(later),
            FollowItem::Start(changed),
            FollowItem::Event(Event::Ended { reason: "closed".into() }),
        ]
    );
    assert_eq!(generation, Some(2));
}

#[tokio::test]
async fn gives_up_when_no_host_comes_back() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let serve = async {
        let mut conn = host.accept().await;
        let frame = conn.request().await;
        conn.send(subscribed(frame.id, 1, "p1", 1, StreamStart::Replay { from: 0 })).await;
        conn
    };
    let mut options = options();
    options.reconnect.max_total = Duration::from_millis(200);
    let (conn, follower) =
        within(async { tokio::join!(serve, PaneFollower::connect(socket.path(), &options, pane(), Some(0))) }).await;
    let mut follower = follower.unwrap();
    assert!(matches!(within(follower.next()).await, Ok(Some(FollowItem::Start(_)))));
    drop(conn);
    drop(host);
    let _ = std::fs::remove_file(socket.path());
    let error = within(follower.next()).await.unwrap_err();
    assert!(error.is_connection_lost(), "{error:?}");
}

#[tokio::test]
async fn a_refused_resume_is_reported() {
    let socket = SocketPath::new();
    let host = FakeHost::bind(socket.path());
    let serve = async {
        let mut conn = host.accept().await;
        let frame = conn.request().await;
        conn.send(subscribed(frame.id, 1, "p1", 1, StreamStart::Replay { from: 0 })).await;
        drop(conn);
        let mut conn = host.accept().await;
        let frame = conn.request().await;
        conn.fail(Some(frame.id), ErrorBody::new(ErrorCode::UnknownPane, "no pane p1")).await;
        conn
    };
    let follow = async {
        let mut follower = PaneFollower::connect(socket.path(), &options(), pane(), Some(0)).await.unwrap();
        assert!(matches!(within(follower.next()).await, Ok(Some(FollowItem::Start(_)))));
        within(follower.next()).await
    };
    let (_conn, result) = within(async { tokio::join!(serve, follow) }).await;
    match result {
        Err(ClientError::Host(body)) => assert_eq!(body.code, "UNKNOWN_PANE"),
        other => panic!("expected UNKNOWN_PANE, got {other:?}"),
    }
}
