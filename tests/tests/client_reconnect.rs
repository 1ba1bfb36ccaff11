//! The client library survives a dropped connection on its own: a
//! `PaneFollower` reconnects and resumes from the last offset it handed to
//! its caller, with no gap and no duplicate. The connection is dropped by a
//! proxy between the library and a real host.

mod support;

use panehost_client::{Client, ClientOptions, FollowItem, FollowOptions, PaneFollower};
use panehost_ipc::{Event, SendParams, StreamStart};
use panehost_tests::proxy::Proxy;
use support::*;

async fn next_item(follower: &mut PaneFollower) -> FollowItem {
    tokio::time::timeout(WAIT, follower.next())
        .await
        .expect("the follower went quiet")
        .expect("the follower failed")
        .expect("the follower ended")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_follower_resumes_exactly_after_its_connection_drops() {
    let host = TestHost::start();
    // Beside the host's own socket: a client talks only through a private directory.
    let proxy = Proxy::start(&host.socket.with_file_name("proxy.sock"), &host.socket).unwrap();
    let direct = Client::connect(&host.socket, &ClientOptions::default()).await.unwrap();
    let pane = direct.start(start_params("fixture", &[])).await.unwrap().id;

    // A small buffer, so the flood cannot all be waiting client-side when
    // the connection drops.
    let options = FollowOptions {
        client: ClientOptions { event_buffer: 4, ..ClientOptions::default() },
        ..FollowOptions::default()
    };
    let mut follower = PaneFollower::connect(&proxy.path, &options, pane.clone(), Some(0)).await.unwrap();
    let mut received = Vec::new();
    let mut starts = Vec::new();
    let mut severed = false;
    let mut typed = false;
    loop {
        match next_item(&mut follower).await {
            FollowItem::Start(start) => starts.push(start),
            FollowItem::Event(Event::Output { offset, data }) => {
                assert_eq!(offset, received.len() as u64, "output continues exactly where it left off");
                received.extend_from_slice(data.as_slice());
            }
            // Turn signals (the flood command was submitted as input).
            FollowItem::Event(Event::TurnStarted { .. } | Event::TurnCompleted { .. }) => {}
            FollowItem::Event(other) => panic!("unexpected event {other:?}"),
        }
        let text = String::from_utf8_lossy(&received);
        if !typed && text.contains("fixture> ") {
            typed = true;
            let flood =
                SendParams { pane: pane.clone(), text: "/flood 3000000".into(), enter: true, ..Default::default() };
            direct.send(flood).await.unwrap();
        }
        if typed && !severed && received.len() > 100_000 {
            severed = true;
            proxy.sever_all();
        }
        if text.ends_with("flood done\r\nfixture> ") {
            break;
        }
    }
    assert!(severed);
    assert!(starts.len() >= 2, "the follower reconnected: {starts:?}");
    assert!(starts[1..].iter().all(|start| matches!(start, StreamStart::Replay { .. })), "{starts:?}");

    // What the follower handed on is exactly the pane's output.
    let mut whole = direct.subscribe(&pane, Some(0)).await.unwrap();
    let mut expected = Vec::new();
    while expected.len() < received.len() {
        match tokio::time::timeout(WAIT, whole.next()).await.unwrap().unwrap() {
            Event::Output { data, .. } => expected.extend_from_slice(data.as_slice()),
            Event::TurnStarted { .. } | Event::TurnCompleted { .. } => {}
            other => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(received, expected[..received.len()]);
    direct.close(&pane).await.unwrap();
}
