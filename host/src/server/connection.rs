//! One client connection: peer check, handshake, then requests in, frames
//! out.

use crate::config::MAX_SUBSCRIPTIONS_ENV;
use crate::contained::{contained, contained_future};
use crate::limits;
use crate::limits::{HANDSHAKE_TIMEOUT, MAX_REQUESTS_IN_FLIGHT};
use crate::server::dispatch::{self, ConnectionContext, Handling, Reply};
use crate::server::host_state::HostState;
use crate::server::outbox::Outbox;
use crate::server::passed_descriptors::{DescriptorReader, PassedDescriptors};
use crate::server::peer_process::PeerProcess;
use bytes::Bytes;
use futures_util::{SinkExt, StreamExt};
use interprocess::local_socket::tokio::Stream;
use interprocess::local_socket::traits::StreamCommon as _;
use panehost_ipc::event::end_reason;
use panehost_ipc::{
    decode_request, Encoding, ErrorBody, ErrorCode, Event, FrameCodecs, HandshakeReply, Hello, Request, Response,
    Welcome, MAX_CLIENT_FRAME_LEN, MAX_HANDSHAKE_FRAME_LEN, MAX_SERVER_FRAME_LEN, PROTOCOL_REVISION, PROTOCOL_VERSION,
};
use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::sync::Arc;
use std::task::Poll;
use tokio::task::{JoinHandle, JoinSet};
use tokio_util::codec::length_delimited::LengthDelimitedCodecError;
use tokio_util::codec::{FramedRead, FramedWrite};
use tokio_util::sync::CancellationToken;

/// The host's name and version, as the welcome reports it.
pub(crate) const HOST_NAME: &str = concat!("panehost ", env!("CARGO_PKG_VERSION"));

/// Serves one connection to its end. Never panics on client input.
#[tracing::instrument(skip_all, fields(conn = connection_id))]
pub(crate) async fn serve(stream: Stream, host: Arc<HostState>, connection_id: u64) {
    let peer = stream.peer_creds().ok();
    let peer_uid = peer.as_ref().and_then(|creds| creds.euid());
    let peer_pid = peer.as_ref().and_then(|creds| creds.pid()).and_then(|pid| u32::try_from(pid).ok());
    // Held now, so that a pid given to another process later is not taken
    // for the one that connected.
    let peer_process = peer_pid.map(PeerProcess::of);
    // Independent halves let the writer task run beside the reader; the
    // reader receives the descriptors a client may pass.
    let (receive, send) = match into_unix_stream(stream) {
        Ok(stream) => stream.into_split(),
        Err(err) => {
            tracing::warn!(%err, "cannot take over an accepted connection");
            return;
        }
    };
    let passed = PassedDescriptors::new();
    let mut reader =
        FramedRead::new(DescriptorReader::new(receive, passed.clone()), FrameCodecs::with_max(MAX_HANDSHAKE_FRAME_LEN));
    let mut writer = FramedWrite::new(send, FrameCodecs::with_max(MAX_SERVER_FRAME_LEN));

    let own_uid = rustix::process::geteuid().as_raw();
    if peer_uid != Some(own_uid) {
        tracing::warn!(?peer_uid, "refusing a connection from another user");
        let reply = refused(ErrorCode::PeerRefused, format!("this host serves uid {own_uid} only"));
        let _ = writer.send(reply).await;
        return;
    }

    let hello = match tokio::time::timeout(HANDSHAKE_TIMEOUT, reader.next()).await {
        Err(_) => {
            let _ = writer
                .send(refused(ErrorCode::HandshakeRequired, "no hello within the handshake timeout".into()))
                .await;
            return;
        }
        Ok(None) => return,
        Ok(Some(Err(err))) => {
            let reply = if is_too_large(&err) {
                refused(ErrorCode::FrameTooLarge, format!("a hello is at most {MAX_HANDSHAKE_FRAME_LEN} bytes"))
            } else {
                refused(ErrorCode::HandshakeRequired, "the first frame was cut off".into())
            };
            let _ = writer.send(reply).await;
            return;
        }
        Ok(Some(Ok(frame))) => frame,
    };
    let hello: Hello = match serde_json::from_slice(&hello) {
        Ok(hello) => hello,
        Err(err) => {
            let _ = writer
                .send(refused(ErrorCode::HandshakeRequired, format!("the first frame must be a JSON hello: {err}")))
                .await;
            return;
        }
    };
    if hello.protocol != PROTOCOL_VERSION {
        let message = format!("client speaks protocol {}, this host speaks {PROTOCOL_VERSION}", hello.protocol);
        let _ = writer.send(refused(ErrorCode::ProtocolMismatch, message)).await;
        return;
    }
    // JSON names its fields, so JSON clients of any revision are served;
    // bincode lays them out by position, so its clients must match exactly.
    if hello.encoding == Encoding::Bincode && hello.revision != PROTOCOL_REVISION {
        let message = format!(
            "a bincode client must speak this host's revision exactly: the client speaks protocol \
             {PROTOCOL_VERSION} revision {}, this host revision {PROTOCOL_REVISION}; use a client of revision \
             {PROTOCOL_REVISION}, or the JSON encoding",
            hello.revision
        );
        let _ = writer.send(refused(ErrorCode::ProtocolMismatch, message)).await;
        return;
    }
    let welcome = HandshakeReply::Welcome(Welcome {
        protocol: PROTOCOL_VERSION,
        revision: PROTOCOL_REVISION,
        host: HOST_NAME.into(),
        encoding: hello.encoding,
    });
    if writer.send(json_frame(&welcome)).await.is_err() {
        return;
    }
    tracing::debug!(client = %hello.client, encoding = hello.encoding.as_str(), revision = hello.revision, "connection open");
    reader.decoder_mut().set_max_frame_length(MAX_CLIENT_FRAME_LEN);

    let outbox = Outbox::new(hello.encoding, Box::pin(writer));
    let requests_ended = CancellationToken::new();
    let mut context = ConnectionContext {
        outbox: outbox.clone(),
        next_subscription: 1,
        peer: peer_process,
        passed: Some(passed),
        requests_ended: requests_ended.clone(),
    };
    let mut subscriptions: HashMap<u64, JoinHandle<()>> = HashMap::new();
    let mut in_flight: JoinSet<()> = JoinSet::new();
    // Panes come back before any request is handled.
    host.wait_restored().await;

    loop {
        while in_flight.try_join_next().is_some() {}
        if in_flight.len() >= MAX_REQUESTS_IN_FLIGHT {
            // The client reads its answers slower than it sends requests:
            // read the next one once one of these is answered.
            in_flight.join_next().await;
            continue;
        }
        let frame = reader.next().await;
        let payload = match frame {
            None => break,
            Some(Ok(payload)) => payload,
            Some(Err(err)) => {
                if is_too_large(&err) {
                    let message = format!("frames to the host are limited to {MAX_CLIENT_FRAME_LEN} bytes");
                    outbox.error(None, ErrorBody::new(ErrorCode::FrameTooLarge, message)).await;
                } else {
                    tracing::debug!(%err, "connection ended inside a frame");
                }
                break;
            }
        };
        let request = match decode_request(hello.encoding, &payload) {
            Ok(request) => request,
            Err(err) => {
                let error = ErrorBody::new(ErrorCode::MalformedRequest, err.to_string());
                if !outbox.error(err.id, error).await {
                    break;
                }
                continue;
            }
        };
        subscriptions.retain(|_, task| !task.is_finished());
        if let Request::Unsubscribe { subscription } = request.request {
            let answered = match subscriptions.remove(&subscription) {
                Some(task) => {
                    task.abort();
                    // Once it has stopped, `ended` is its last event.
                    let _ = task.await;
                    outbox.event(subscription, Event::Ended { reason: end_reason::UNSUBSCRIBED.into() }).await;
                    outbox.response(request.id, Response::Unsubscribed { subscription }).await
                }
                None => {
                    let error = ErrorBody::new(
                        ErrorCode::UnknownSubscription,
                        format!("no subscription {subscription} on this connection"),
                    );
                    outbox.error(Some(request.id), error).await
                }
            };
            if !answered {
                break;
            }
            continue;
        }
        let subscribes =
            matches!(request.request, Request::Events { .. } | Request::Reconnect { .. } | Request::Watch {});
        if subscribes && subscriptions.len() >= host.count_limits.max_subscriptions {
            let message = format!(
                "this connection holds {} subscriptions, its limit ({} by default, {MAX_SUBSCRIPTIONS_ENV} sets it); \
                 unsubscribe first or open another connection",
                subscriptions.len(),
                crate::limits::MAX_SUBSCRIPTIONS_PER_CONNECTION
            );
            if !outbox.error(Some(request.id), ErrorBody::new(ErrorCode::LimitReached, message)).await {
                break;
            }
            continue;
        }
        // A handler's panic is a defect of the host, never the client's:
        // it answers INTERNAL, and the host and this connection go on.
        let expected_answer = request.request.answer();
        let handling = contained(HANDLER, || dispatch::handle(&host, &mut context, request.request))
            .unwrap_or_else(|| Handling::Now(Reply::from(Err(handler_failed()))));
        match handling {
            Handling::Now(reply) => {
                if !answer(&outbox, request.id, expected_answer, reply.result).await {
                    break;
                }
                if let Some(task) = reply.then {
                    subscriptions.insert(task.id(), tokio::spawn(task.run()));
                }
            }
            Handling::Later(work) => {
                let outbox = outbox.clone();
                let mut answering = Box::pin(async move {
                    let answered = contained_future(HANDLER, work)
                        .await
                        .unwrap_or_else(|| dispatch::Answered { result: Err(handler_failed()), held: None });
                    answer(&outbox, request.id, expected_answer, answered.result).await;
                    // What the answer held of the host's budget goes back
                    // once it is written.
                    drop(answered.held);
                });
                // Most work is done at its first step (a keystroke written
                // to a pane that takes it): done here, it costs no task.
                let first_step = std::future::poll_fn(|cx| Poll::Ready(answering.as_mut().poll(cx))).await;
                if first_step.is_pending() {
                    in_flight.spawn(answering);
                }
            }
        }
    }
    // Requests still running are answered for a client that still reads
    // (one that only closed its sending side); each ends within its own
    // limits, and one that waits for the client (a terminal attachment)
    // ends now.
    requests_ended.cancel();
    while in_flight.join_next().await.is_some() {}
    for task in subscriptions.values() {
        task.abort();
    }
    drop(context);
    // Every answer is written by now; let a client that still reads see
    // the end of the stream.
    outbox.close(limits::OUTBOX_CLOSE_WAIT).await;
    tracing::debug!("connection closed");
}

/// The accepted connection as tokio's own Unix stream, whose halves can
/// read with `recvmsg`.
fn into_unix_stream(stream: Stream) -> io::Result<tokio::net::UnixStream> {
    let Stream::UdSocket(stream) = stream;
    let descriptor = std::os::fd::OwnedFd::try_from(stream)?;
    tokio::net::UnixStream::from_std(std::os::unix::net::UnixStream::from(descriptor))
}

/// Writes a request's answer; false when the connection is gone. A
/// success is the answer the protocol names for the request
/// (`Request::answer`, the schema's `x-answer`); debug builds check it, so
/// every test against the host keeps that table true.
async fn answer(outbox: &Outbox, id: u64, expected: &'static str, result: Result<Response, ErrorBody>) -> bool {
    match result {
        Ok(body) => {
            debug_assert_eq!(body.name(), expected, "the answer of request {id} is not the one the protocol names");
            outbox.response(id, body).await
        }
        Err(error) => outbox.error(Some(id), error).await,
    }
}

/// What a handler is, in the log line of its panic.
const HANDLER: &str = "a request's handler";

/// The answer to a request whose handler panicked (the panic is logged).
fn handler_failed() -> ErrorBody {
    ErrorBody::new(
        ErrorCode::Internal,
        "the host failed on this request (a defect, in the host's log); the host and this connection go on",
    )
}

fn is_too_large(err: &io::Error) -> bool {
    err.get_ref().is_some_and(|inner| inner.is::<LengthDelimitedCodecError>())
}

fn refused(code: ErrorCode, message: String) -> Bytes {
    json_frame(&HandshakeReply::Refused { code: code.as_str().into(), message, protocol: PROTOCOL_VERSION })
}

fn json_frame(reply: &HandshakeReply) -> Bytes {
    Bytes::from(serde_json::to_vec(reply).unwrap_or_default())
}
