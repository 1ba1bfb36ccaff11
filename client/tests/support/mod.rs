//! A scripted stand-in for the host: it listens on a real socket, speaks the
//! wire contract through `panehost_ipc`, and lets each test play the host's
//! side of a conversation step by step.

#![allow(dead_code)]

use futures_util::{SinkExt, StreamExt};
use panehost_client::{Client, ClientOptions};
use panehost_ipc::{
    decode, decode_request, encode, Encoding, ErrorBody, Event, FrameCodecs, HandshakeReply, Hello, PaneId, Request,
    RequestFrame, Response, ServerMessage, StreamStart, Subscription, Welcome, PROTOCOL_REVISION, PROTOCOL_VERSION,
};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::net::{UnixListener, UnixStream};
use tokio_util::bytes::Bytes;
use tokio_util::codec::{Framed, LengthDelimitedCodec};

/// Every wait in these tests is bounded by this.
pub const STEP_TIMEOUT: Duration = Duration::from_secs(10);

/// Awaits `future`, failing the test after [`STEP_TIMEOUT`].
pub async fn within<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(STEP_TIMEOUT, future).await.expect("step timed out")
}

/// A socket path of its own for each test, in a private directory (a
/// client refuses a socket in a directory others can write to), removed
/// on drop.
#[derive(Debug)]
pub struct SocketPath(pub PathBuf);

impl SocketPath {
    pub fn new() -> SocketPath {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("panehost-client-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::os::unix::fs::DirBuilderExt::mode(&mut std::fs::DirBuilder::new(), 0o700)
            .create(&dir)
            .expect("a private directory for the socket");
        SocketPath(dir.join("host.sock"))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for SocketPath {
    fn drop(&mut self) {
        if let Some(dir) = self.0.parent() {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The listening fake host.
#[derive(Debug)]
pub struct FakeHost {
    listener: UnixListener,
}

impl FakeHost {
    pub fn bind(path: &Path) -> FakeHost {
        let _ = std::fs::remove_file(path);
        FakeHost { listener: UnixListener::bind(path).expect("bind the fake host") }
    }

    /// Accepts one connection and completes its handshake.
    pub async fn accept(&self) -> HostConn {
        let mut conn = self.accept_raw().await;
        let hello = conn.read_hello().await;
        conn.welcome(hello.encoding).await;
        conn
    }

    /// Accepts one connection without handshaking.
    pub async fn accept_raw(&self) -> HostConn {
        let (stream, _) = within(self.listener.accept()).await.expect("accept");
        HostConn { framed: Framed::new(stream, FrameCodecs::with_max(16 * 1024 * 1024)), encoding: Encoding::Json }
    }
}

/// The host's end of one connection.
#[derive(Debug)]
pub struct HostConn {
    framed: Framed<UnixStream, LengthDelimitedCodec>,
    pub encoding: Encoding,
}

impl HostConn {
    pub async fn read_hello(&mut self) -> Hello {
        let frame = within(self.framed.next()).await.expect("a hello frame").expect("read");
        let hello: Hello = decode(Encoding::Json, &frame).expect("hello is JSON");
        assert_eq!(hello.protocol, PROTOCOL_VERSION);
        hello
    }

    pub async fn welcome(&mut self, encoding: Encoding) {
        self.encoding = encoding;
        let reply = HandshakeReply::Welcome(Welcome {
            protocol: PROTOCOL_VERSION,
            revision: PROTOCOL_REVISION,
            host: "fake 0".into(),
            encoding,
        });
        self.send_json(&reply).await;
    }

    pub async fn send_json(&mut self, reply: &HandshakeReply) {
        self.send_raw(encode(Encoding::Json, reply).unwrap()).await;
    }

    pub async fn send_raw(&mut self, payload: Vec<u8>) {
        self.framed.send(Bytes::from(payload)).await.expect("write");
    }

    /// The next request; panics on anything else.
    pub async fn request(&mut self) -> RequestFrame {
        let frame = within(self.framed.next()).await.expect("a request frame").expect("read");
        decode_request(self.encoding, &frame).expect("a well-formed request")
    }

    /// The next frame's raw payload, or `None` at end of stream.
    pub async fn next_payload(&mut self) -> Option<Vec<u8>> {
        within(self.framed.next()).await.map(|frame| frame.expect("read").to_vec())
    }

    pub async fn send(&mut self, message: ServerMessage) {
        let payload = encode(self.encoding, &message).unwrap();
        self.framed.send(Bytes::from(payload)).await.expect("write");
    }

    /// Queues several messages and flushes them together, in one write.
    pub async fn send_all(&mut self, messages: Vec<ServerMessage>) {
        for message in messages {
            let payload = encode(self.encoding, &message).unwrap();
            SinkExt::<Bytes>::feed(&mut self.framed, Bytes::from(payload)).await.expect("write");
        }
        SinkExt::<Bytes>::flush(&mut self.framed).await.expect("flush");
    }

    pub async fn respond(&mut self, id: u64, body: Response) {
        self.send(ServerMessage::Response { id, body }).await;
    }

    pub async fn fail(&mut self, id: Option<u64>, error: ErrorBody) {
        self.send(ServerMessage::Error { id, error }).await;
    }
}

/// A client connected to `host`, and the host's end of its connection.
pub async fn pair(host: &FakeHost, path: &Path, options: &ClientOptions) -> (Client, HostConn) {
    let (client, conn) = tokio::join!(Client::connect(path, options), host.accept());
    (client.expect("connect"), conn)
}

/// A `subscribed` answer.
pub fn subscribed(id: u64, subscription: u64, pane: &str, generation: u64, start: StreamStart) -> ServerMessage {
    ServerMessage::Response {
        id,
        body: Response::Subscribed(Subscription { subscription, pane: PaneId::from(pane), generation, start }),
    }
}

/// An event of a subscription.
pub fn event(subscription: u64, event: Event) -> ServerMessage {
    ServerMessage::Event { subscription, event }
}

/// An output event.
pub fn output(subscription: u64, offset: u64, data: &str) -> ServerMessage {
    event(subscription, Event::Output { offset, data: data.into() })
}

/// The request's id, asserting what it asks.
pub fn expect_request(frame: &RequestFrame, expected: &Request) -> u64 {
    assert_eq!(&frame.request, expected);
    frame.id
}
