//! Accepting connections and serving each: a place in the table or a
//! prompt refusal, then HTTP/1 with a deadline for every request's head and
//! an idle timeout, until the connection ends, is chosen to make room, or
//! becomes a WebSocket (which then lives on its own, exempt from both).

use super::bounds::{ACCEPT_ERROR_PAUSE, HEADER_READ_TIMEOUT, IDLE_TIMEOUT, LISTEN_BACKLOG, MAX_REQUEST_HEAD};
use super::connection_table::{ConnectionHandle, ConnectionSlot, ConnectionTable, Refusal};
use super::tracked_stream::{Activity, TrackedStream};
use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::{service_fn, Service as _};
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::service::TowerToHyperService;
use std::net::SocketAddr;
use std::sync::Arc;
use tokio::net::{TcpListener, TcpSocket, TcpStream};

/// What a refused connection is sent before it is closed.
const REFUSAL: &[u8] = b"HTTP/1.1 503 Service Unavailable\r\n\
Connection: close\r\n\
Content-Type: text/plain; charset=utf-8\r\n\
Content-Security-Policy: default-src 'none'; frame-ancestors 'none'\r\n\
X-Content-Type-Options: nosniff\r\n\
X-Frame-Options: DENY\r\n\
Cache-Control: no-store\r\n\
Retry-After: 1\r\n\
Content-Length: 65\r\n\
\r\n\
503 Service Unavailable: this server holds its most connections.\n";

/// Listens on `address` with a backlog of [`LISTEN_BACKLOG`].
pub(super) fn listen(address: SocketAddr) -> std::io::Result<TcpListener> {
    let socket = if address.is_ipv4() { TcpSocket::new_v4()? } else { TcpSocket::new_v6()? };
    socket.set_reuseaddr(true)?;
    socket.bind(address)?;
    socket.listen(LISTEN_BACKLOG)
}

/// Accepts connections on `listener` and serves `router` on each, within
/// the caps of `table`. Runs until the task is dropped.
pub(super) async fn serve(listener: TcpListener, router: Router, table: Arc<ConnectionTable>) {
    loop {
        let (stream, peer) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(error) => {
                // Out of descriptors, or a connection reset before it was
                // accepted: the listener itself is fine.
                tracing::warn!(%error, "cannot accept a connection");
                tokio::time::sleep(ACCEPT_ERROR_PAUSE).await;
                continue;
            }
        };
        match table.admit(peer.ip()) {
            Ok(admitted) => {
                if admitted.made_room {
                    tracing::debug!(%peer, "closing the oldest connection without the token, for a new one");
                }
                tokio::spawn(serve_connection(stream, peer, admitted.slot, admitted.handle, router.clone()));
                if admitted.made_room {
                    // Let the connection that makes room close before the
                    // next accept, so that its descriptor is free again.
                    tokio::task::yield_now().await;
                }
            }
            Err(refusal) => refuse(stream, peer, refusal),
        }
    }
}

/// Answers 503 if the socket takes it at once, and closes it.
fn refuse(stream: TcpStream, peer: SocketAddr, refusal: Refusal) {
    tracing::info!(%peer, %refusal, "refused a connection");
    let _ = stream.try_write(REFUSAL);
}

/// Serves one connection until it ends, times out, or is chosen to make
/// room. A WebSocket leaves this task when it is upgraded; its place in
/// the table goes with it.
async fn serve_connection(
    stream: TcpStream,
    peer: SocketAddr,
    slot: ConnectionSlot,
    handle: ConnectionHandle,
    router: Router,
) {
    let activity = Activity::new();
    let io = TokioIo::new(TrackedStream::new(stream, activity.clone(), slot));
    let routes = TowerToHyperService::new(router);
    let request_handle = handle.clone();
    let service = service_fn(move |mut request: hyper::Request<Incoming>| {
        request.extensions_mut().insert(request_handle.clone());
        routes.call(request)
    });
    let connection = http1::Builder::new()
        .timer(TokioTimer::new())
        .header_read_timeout(HEADER_READ_TIMEOUT)
        .max_header_size(MAX_REQUEST_HEAD)
        .max_buf_size(MAX_REQUEST_HEAD)
        .serve_connection(io, service)
        .with_upgrades();
    tokio::pin!(connection);
    let evicted = handle.evicted();
    tokio::pin!(evicted);
    loop {
        let idle_until = activity.last() + IDLE_TIMEOUT;
        tokio::select! {
            result = &mut connection => {
                if let Err(error) = result {
                    tracing::debug!(%peer, %error, "connection ended");
                }
                return;
            }
            () = &mut evicted => {
                tracing::debug!(%peer, "closed to make room for a new connection");
                return;
            }
            () = tokio::time::sleep_until(idle_until) => {
                if activity.last() + IDLE_TIMEOUT <= tokio::time::Instant::now() {
                    tracing::debug!(%peer, "closed a connection idle for {IDLE_TIMEOUT:?}");
                    return;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_refusal_is_a_whole_http_answer() {
        let text = std::str::from_utf8(REFUSAL).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").expect("a head and a body");
        assert!(head.starts_with("HTTP/1.1 503 "), "{head}");
        let length = head.lines().find_map(|line| line.strip_prefix("Content-Length: ")).expect("a length");
        assert_eq!(length.parse::<usize>().unwrap(), body.len());
    }
}
