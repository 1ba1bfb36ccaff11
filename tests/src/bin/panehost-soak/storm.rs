//! Hostile traffic: connections that send half a frame and drop, garbage
//! after a valid hello, length prefixes over the limits, hellos that are
//! not JSON or name another version, bincode frames whose inner lengths
//! claim huge sizes, and pipelines dropped unread. Each answer the host
//! owes is checked against the protocol, and a connection that was
//! answered with a malformed-request error must still serve a `list`.

use crate::ledger::Verdict;
use crate::raw::{self, Read};
use crate::world::World;
use panehost_ipc::{Encoding, HandshakeReply, Request, Response, ServerMessage, MAX_CLIENT_FRAME_LEN};
use panehost_tests::rng::Rng;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::UnixStream;

/// How long one hostile exchange may take.
const ACTION_TIMEOUT: Duration = Duration::from_secs(40);
/// The id of the `list` that proves a connection still serves: one that
/// garbage is unlikely to begin with.
const PROOF_ID: u64 = 0x00DE_AD00_BEEF;

/// Bincode payloads whose inner lengths claim far more than the frame
/// holds: a decoder that believed them would allocate exabytes.
const HUGE_CLAIMS: [&[u8]; 6] = [
    // start: runtime string of 2^62 bytes.
    &[0x01, 0x00, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0x40],
    // send to "p": text of 2^40 bytes.
    &[0x01, 0x01, 0x01, b'p', 0xfd, 0, 0, 0, 0, 0, 0x01, 0, 0],
    // inspect: pane id of 2^32 - 1 bytes.
    &[0x01, 0x03, 0xfc, 0xff, 0xff, 0xff, 0xff],
    // ask p1: text of 2^64 - 1 bytes.
    &[0x01, 0x0c, 0x02, b'p', b'1', 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff],
    // history p1: lines over u32.
    &[0x01, 0x0f, 0x02, b'p', b'1', 0x01, 0xfd, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f],
    // start shell: a command of 2^60 arguments.
    &[0x01, 0x00, 0x05, b's', b'h', b'e', b'l', b'l', 0x00, 0x00, 0xfd, 0, 0, 0, 0, 0, 0, 0, 0x10],
];

/// One kind of hostile exchange.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Action {
    HalfHello,
    HalfRequest,
    GarbageJson,
    GarbageBincode,
    UnknownOperation,
    OversizedPrefix,
    OversizedHello,
    NotJsonHello,
    WrongVersion,
    HugeInnerLength,
    PipelineDropped,
    ConnectAndDrop,
}

impl Action {
    const ALL: [Action; 12] = [
        Action::HalfHello,
        Action::HalfRequest,
        Action::GarbageJson,
        Action::GarbageBincode,
        Action::UnknownOperation,
        Action::OversizedPrefix,
        Action::OversizedHello,
        Action::NotJsonHello,
        Action::WrongVersion,
        Action::HugeInnerLength,
        Action::PipelineDropped,
        Action::ConnectAndDrop,
    ];

    fn label(self) -> &'static str {
        match self {
            Action::HalfHello => "storm: half a hello",
            Action::HalfRequest => "storm: half a request",
            Action::GarbageJson => "storm: garbage frame (json)",
            Action::GarbageBincode => "storm: garbage frame (bincode)",
            Action::UnknownOperation => "storm: unknown operation",
            Action::OversizedPrefix => "storm: oversized length prefix",
            Action::OversizedHello => "storm: oversized hello prefix",
            Action::NotJsonHello => "storm: hello not JSON",
            Action::WrongVersion => "storm: hello of protocol 99",
            Action::HugeInnerLength => "storm: huge inner length (bincode)",
            Action::PipelineDropped => "storm: pipeline dropped unread",
            Action::ConnectAndDrop => "storm: connect and drop",
        }
    }
}

/// Runs one storm task until the world stops.
pub async fn run(world: Arc<World>, index: u64) {
    let mut rng = Rng::new(world.settings.seed, 3000 + index);
    while !world.stopping() {
        if !world.life.wait_up(crate::link::HOST_BACK_TIMEOUT).await {
            world.ledger.fail("storm", "the host was not back up");
            break;
        }
        let action = Action::ALL[rng.index(Action::ALL.len())];
        let epoch = world.life.kills();
        let _open = world.life.hold_connection();
        let outcome = tokio::time::timeout(ACTION_TIMEOUT, exchange(&world, action, &mut rng)).await;
        let killed_meanwhile = world.life.kills() != epoch || !world.life.is_up();
        let verdict = match outcome {
            Ok(Ok(())) => Verdict::Ok,
            Ok(Err(_)) | Err(_) if killed_meanwhile => Verdict::LostToRestart,
            Ok(Err(problem)) => Verdict::Failed(problem),
            Err(_) => Verdict::Failed(format!("no end within {ACTION_TIMEOUT:?}")),
        };
        world.ledger.record(action.label(), verdict);
        if world.pause(Duration::from_millis(rng.range(0, 20))).await {
            break;
        }
    }
}

async fn connect(world: &World) -> Result<UnixStream, String> {
    UnixStream::connect(&world.life.socket).await.map_err(|e| format!("cannot connect: {e}"))
}

async fn exchange(world: &World, action: Action, rng: &mut Rng) -> Result<(), String> {
    let mut stream = connect(world).await?;
    let io = |e: std::io::Error| format!("writing failed: {e}");
    match action {
        Action::HalfHello => {
            raw::write_raw(&mut stream, &100u32.to_be_bytes()).await.map_err(io)?;
            raw::write_raw(&mut stream, &br#"{"protocol":1,"encoding":"json","client":"half"#[..]).await.map_err(io)?;
            Ok(())
        }
        Action::HalfRequest => {
            raw::handshake(&mut stream, Encoding::Json, "panehost-soak storm").await?;
            raw::write_raw(&mut stream, &200u32.to_be_bytes()).await.map_err(io)?;
            raw::write_raw(&mut stream, br#"{"id":1,"re"#).await.map_err(io)?;
            Ok(())
        }
        Action::GarbageJson => {
            raw::handshake(&mut stream, Encoding::Json, "panehost-soak storm").await?;
            let len = rng.range(0, 512) as usize;
            let mut garbage = rng.bytes(len);
            if let Some(first) = garbage.first_mut() {
                // Never an object, so no id can be read from it.
                if *first == b'{' {
                    *first = b'!';
                }
            }
            raw::write_frame(&mut stream, &garbage).await.map_err(io)?;
            expect_malformed(&mut stream, Encoding::Json, None).await?;
            prove_serving(&mut stream, Encoding::Json).await
        }
        Action::GarbageBincode => {
            raw::handshake(&mut stream, Encoding::Bincode, "panehost-soak storm").await?;
            // Half the time a plausible id and operation, then noise.
            let len = rng.range(0, 64) as usize;
            let mut garbage = Vec::new();
            if rng.percent(50) {
                garbage.push(rng.range(0, 250) as u8);
                garbage.push(rng.range(0, 15) as u8);
            }
            garbage.extend(rng.bytes(len));
            raw::write_frame(&mut stream, &garbage).await.map_err(io)?;
            // Garbage may decode as some request; any answer will do but
            // INTERNAL, as long as the connection then serves a `list`.
            raw::send_request(&mut stream, Encoding::Bincode, PROOF_ID, Request::List { labels: Default::default() })
                .await?;
            loop {
                match raw::read_message(&mut stream, Encoding::Bincode).await? {
                    Some(ServerMessage::Response { id: PROOF_ID, body: Response::Panes { .. } }) => return Ok(()),
                    Some(ServerMessage::Error { error, .. }) if error.code == "INTERNAL" => {
                        return Err(format!("garbage {garbage:02x?} was answered {error}"))
                    }
                    Some(ServerMessage::Error { id: Some(PROOF_ID), error }) => {
                        return Err(format!("the list after garbage {garbage:02x?} was answered {error}"))
                    }
                    Some(_) => {}
                    None => return Err(format!("the host closed the connection after garbage {garbage:02x?}")),
                }
            }
        }
        Action::UnknownOperation => {
            raw::handshake(&mut stream, Encoding::Json, "panehost-soak storm").await?;
            raw::write_frame(&mut stream, br#"{"id":5,"request":{"teleport":{"to":"mars"}}}"#).await.map_err(io)?;
            expect_malformed(&mut stream, Encoding::Json, Some(5)).await?;
            prove_serving(&mut stream, Encoding::Json).await
        }
        Action::OversizedPrefix => {
            let encoding = if rng.percent(50) { Encoding::Json } else { Encoding::Bincode };
            raw::handshake(&mut stream, encoding, "panehost-soak storm").await?;
            let claimed = rng.range(MAX_CLIENT_FRAME_LEN as u64 + 1, u64::from(u32::MAX)) as u32;
            raw::write_raw(&mut stream, &claimed.to_be_bytes()).await.map_err(io)?;
            let _ = raw::write_raw(&mut stream, &rng.bytes(64)).await;
            match raw::read_message(&mut stream, encoding).await? {
                Some(ServerMessage::Error { id: None, error }) if error.code == "FRAME_TOO_LARGE" => {}
                other => return Err(format!("a {claimed}-byte prefix was answered {other:?}, not FRAME_TOO_LARGE")),
            }
            expect_closed(&mut stream, "after FRAME_TOO_LARGE").await
        }
        Action::OversizedHello => {
            let claimed = rng.range(panehost_ipc::MAX_HANDSHAKE_FRAME_LEN as u64 + 1, u64::from(u32::MAX)) as u32;
            raw::write_raw(&mut stream, &claimed.to_be_bytes()).await.map_err(io)?;
            expect_refused(&mut stream, "FRAME_TOO_LARGE", &format!("a first frame of {claimed} bytes")).await
        }
        Action::NotJsonHello => {
            let len = rng.range(1, 300) as usize;
            let mut garbage = rng.bytes(len);
            if garbage[0] == b'{' {
                garbage[0] = b'#';
            }
            raw::write_frame(&mut stream, &garbage).await.map_err(io)?;
            expect_refused(&mut stream, "HANDSHAKE_REQUIRED", "a first frame that is not JSON").await
        }
        Action::WrongVersion => {
            raw::write_frame(&mut stream, br#"{"protocol":99,"encoding":"json","client":"from the future"}"#)
                .await
                .map_err(io)?;
            expect_refused(&mut stream, "PROTOCOL_MISMATCH", "a hello of protocol 99").await
        }
        Action::HugeInnerLength => {
            raw::handshake(&mut stream, Encoding::Bincode, "panehost-soak storm").await?;
            let payload = HUGE_CLAIMS[rng.index(HUGE_CLAIMS.len())];
            raw::write_frame(&mut stream, payload).await.map_err(io)?;
            expect_malformed(&mut stream, Encoding::Bincode, Some(1))
                .await
                .map_err(|problem| format!("payload {payload:02x?}: {problem}"))?;
            prove_serving(&mut stream, Encoding::Bincode).await
        }
        Action::PipelineDropped => {
            raw::handshake(&mut stream, Encoding::Bincode, "panehost-soak storm").await?;
            let mut frames = Vec::new();
            for id in 1..=500u64 {
                let payload = panehost_ipc::encode(
                    Encoding::Bincode,
                    &panehost_ipc::RequestFrame { id, request: Request::List { labels: Default::default() } },
                )
                .map_err(|e| e.to_string())?;
                frames.extend_from_slice(&(payload.len() as u32).to_be_bytes());
                frames.extend_from_slice(&payload);
            }
            raw::write_raw(&mut stream, &frames).await.map_err(io)?;
            Ok(())
        }
        Action::ConnectAndDrop => Ok(()),
    }
}

/// Reads the answer to a malformed frame: `MALFORMED_REQUEST`, with `id`.
async fn expect_malformed(stream: &mut UnixStream, encoding: Encoding, id: Option<u64>) -> Result<(), String> {
    match raw::read_message(stream, encoding).await? {
        Some(ServerMessage::Error { id: answered, error }) if error.code == "MALFORMED_REQUEST" => {
            if id.is_some() && answered != id {
                return Err(format!("MALFORMED_REQUEST carried id {answered:?}, not {id:?}"));
            }
            Ok(())
        }
        other => Err(format!("a malformed frame was answered {other:?}, not MALFORMED_REQUEST")),
    }
}

/// Sends a `list` and expects its answer: the connection still serves.
async fn prove_serving(stream: &mut UnixStream, encoding: Encoding) -> Result<(), String> {
    raw::send_request(stream, encoding, PROOF_ID, Request::List { labels: Default::default() }).await?;
    match raw::read_message(stream, encoding).await? {
        Some(ServerMessage::Response { id: PROOF_ID, body: Response::Panes { .. } }) => Ok(()),
        other => Err(format!("a list after a malformed frame was answered {other:?}")),
    }
}

/// Reads a `refused` handshake reply with `code`, then the close.
async fn expect_refused(stream: &mut UnixStream, code: &str, what: &str) -> Result<(), String> {
    match raw::read_handshake(stream).await? {
        Some(HandshakeReply::Refused { code: refused, .. }) if refused == code => {}
        other => return Err(format!("{what} was answered {other:?}, not refused with {code}")),
    }
    expect_closed(stream, &format!("after refusing {what}")).await
}

/// Expects the host to close the connection.
async fn expect_closed(stream: &mut UnixStream, when: &str) -> Result<(), String> {
    match raw::read_frame(stream).await? {
        Read::Closed => Ok(()),
        Read::Frame(payload) => Err(format!("{when} the host sent {} more bytes instead of closing", payload.len())),
    }
}
