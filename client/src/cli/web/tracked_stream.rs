//! A client's TCP stream as the server reads and writes it: it notes when a
//! byte last moved, for the idle timeout, and holds the connection's place
//! in the table until the socket is dropped.

use super::connection_table::ConnectionSlot;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio::time::Instant;

/// When a byte last moved on a connection, either way.
#[derive(Debug, Clone)]
pub(super) struct Activity {
    since: Instant,
    /// Milliseconds from `since` to the last byte moved.
    last_ms: Arc<AtomicU64>,
}

impl Activity {
    /// Activity starting now.
    pub(super) fn new() -> Activity {
        Activity { since: Instant::now(), last_ms: Arc::new(AtomicU64::new(0)) }
    }

    /// Notes that a byte moved now.
    fn touch(&self) {
        let elapsed = u64::try_from(self.since.elapsed().as_millis()).unwrap_or(u64::MAX);
        self.last_ms.store(elapsed, Ordering::Relaxed);
    }

    /// When a byte last moved (or the connection began).
    pub(super) fn last(&self) -> Instant {
        self.since + std::time::Duration::from_millis(self.last_ms.load(Ordering::Relaxed))
    }
}

/// A TCP stream that notes its activity and holds its connection's place.
#[derive(Debug)]
pub(super) struct TrackedStream {
    stream: TcpStream,
    activity: Activity,
    /// Dropped with the stream: the place goes back to the table.
    _slot: ConnectionSlot,
}

impl TrackedStream {
    /// Wraps `stream`, noting its activity in `activity`.
    pub(super) fn new(stream: TcpStream, activity: Activity, slot: ConnectionSlot) -> TrackedStream {
        TrackedStream { stream, activity, _slot: slot }
    }
}

impl AsyncRead for TrackedStream {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let before = buf.filled().len();
        let result = Pin::new(&mut this.stream).poll_read(cx, buf);
        if matches!(result, Poll::Ready(Ok(()))) && buf.filled().len() > before {
            this.activity.touch();
        }
        result
    }
}

impl AsyncWrite for TrackedStream {
    fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.stream).poll_write(cx, buf);
        if matches!(result, Poll::Ready(Ok(written)) if written > 0) {
            this.activity.touch();
        }
        result
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        let result = Pin::new(&mut this.stream).poll_write_vectored(cx, bufs);
        if matches!(result, Poll::Ready(Ok(written)) if written > 0) {
            this.activity.touch();
        }
        result
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}
