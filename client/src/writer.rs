//! The write half of a connection: requests write their frames themselves
//! when the socket takes them at once, and a writer task writes the rest.
//!
//! A request that finds the socket free and ready writes its frame in the
//! caller's own task, without waiting and without waking another task:
//! that hand-off was a large part of a keystroke's round trip. Whatever
//! cannot go out at once (the write half is busy, the socket is full, or
//! the caller is not async, like the `unsubscribe` a dropped stream sends)
//! is queued for the writer task. No write is ever awaited in a caller's
//! task, so a cancelled request never leaves a frame half written: a frame
//! is either wholly in the codec's buffer, with the writer task told to
//! flush it, or not written at all.

use crate::router::{CloseReason, Shared};
use futures_util::task::noop_waker_ref;
use futures_util::{Sink, SinkExt};
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::sync::{mpsc, Mutex};
use tokio_util::bytes::Bytes;

/// Frames waiting for the writer task, at most; a request finding the queue
/// full waits for room.
const QUEUE_FRAMES: usize = 64;

/// The write half of the socket, framed.
pub(crate) type FrameSink = Pin<Box<dyn Sink<Bytes, Error = io::Error> + Send>>;

/// What the writer task is asked to do.
#[derive(Debug)]
enum Queued {
    /// Write this frame.
    Frame(Bytes),
    /// Finish writing what a caller left in the codec's buffer.
    Flush,
}

/// Shared by every clone of a client, the reader task and the writer task.
pub(crate) struct FrameWriter {
    sink: Mutex<FrameSink>,
    queue: mpsc::Sender<Queued>,
    /// Frames queued and not yet in the codec. While any are, frames queue
    /// behind them: frames go out in the order they were written.
    queued_frames: AtomicUsize,
    shared: Arc<Shared>,
}

impl FrameWriter {
    /// A writer over `sink`, and the task that writes what is queued. The
    /// task ends once every [`FrameWriter`] handle is dropped.
    pub(crate) fn start(sink: FrameSink, shared: Arc<Shared>) -> Arc<FrameWriter> {
        let (queue, queued) = mpsc::channel(QUEUE_FRAMES);
        let writer =
            Arc::new(FrameWriter { sink: Mutex::new(sink), queue, queued_frames: AtomicUsize::new(0), shared });
        tokio::spawn(write_queued(Arc::downgrade(&writer), queued));
        writer
    }

    /// Writes a frame now if the socket takes it, else queues it.
    pub(crate) async fn write(&self, frame: Bytes) -> Result<(), crate::ClientError> {
        let Err(frame) = self.write_now(frame) else { return Ok(()) };
        self.queued_frames.fetch_add(1, Ordering::SeqCst);
        if self.queue.send(Queued::Frame(frame)).await.is_err() {
            self.queued_frames.fetch_sub(1, Ordering::SeqCst);
            return Err(crate::ClientError::ConnectionClosed);
        }
        Ok(())
    }

    /// Writes a frame now if the socket takes it, else queues it if there
    /// is room; for callers that cannot wait. False when it was dropped.
    pub(crate) fn write_or_queue(&self, frame: Bytes) -> bool {
        let Err(frame) = self.write_now(frame) else { return true };
        self.queued_frames.fetch_add(1, Ordering::SeqCst);
        if self.queue.try_send(Queued::Frame(frame)).is_err() {
            self.queued_frames.fetch_sub(1, Ordering::SeqCst);
            return false;
        }
        true
    }

    /// Puts the frame in the codec and flushes as much as the socket takes
    /// without waiting. Gives the frame back when the write half is in use
    /// or the codec cannot take it yet.
    fn write_now(&self, frame: Bytes) -> Result<(), Bytes> {
        let Ok(mut sink) = self.sink.try_lock() else {
            return Err(frame);
        };
        if self.queued_frames.load(Ordering::SeqCst) > 0 {
            return Err(frame);
        }
        // Nothing waits on this context: whatever is left pending is
        // handed to the writer task, which polls with its own.
        let mut context = Context::from_waker(noop_waker_ref());
        if !matches!(sink.as_mut().poll_ready(&mut context), Poll::Ready(Ok(()))) {
            return Err(frame);
        }
        if let Err(error) = sink.as_mut().start_send(frame) {
            self.failed(&error);
            return Ok(());
        }
        match sink.as_mut().poll_flush(&mut context) {
            Poll::Ready(Ok(())) => {}
            Poll::Ready(Err(error)) => self.failed(&error),
            Poll::Pending => {
                // A full queue means the writer task has frames to write,
                // and it flushes after them.
                let _ = self.queue.try_send(Queued::Flush);
            }
        }
        Ok(())
    }

    fn failed(&self, error: &io::Error) {
        tracing::warn!(%error, "writing to the host failed");
        self.shared.close(CloseReason::Closed);
    }
}

/// Writes queued frames, flushing after each batch, until the writer is
/// dropped (the socket closes with it) or a write fails.
async fn write_queued(writer: std::sync::Weak<FrameWriter>, mut queued: mpsc::Receiver<Queued>) {
    loop {
        let Some(first) = queued.recv().await else { return };
        let Some(writer) = writer.upgrade() else { return };
        let mut sink = writer.sink.lock().await;
        let mut result = feed(&writer, &mut sink, first).await;
        while result.is_ok() {
            match queued.try_recv() {
                Ok(next) => result = feed(&writer, &mut sink, next).await,
                Err(_) => break,
            }
        }
        if result.is_ok() {
            result = sink.flush().await;
        }
        if let Err(error) = result {
            writer.failed(&error);
            return;
        }
    }
}

async fn feed(writer: &FrameWriter, sink: &mut FrameSink, queued: Queued) -> io::Result<()> {
    match queued {
        Queued::Frame(frame) => {
            let fed = sink.feed(frame).await;
            writer.queued_frames.fetch_sub(1, Ordering::SeqCst);
            fed
        }
        Queued::Flush => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use futures_util::StreamExt;
    use panehost_ipc::{Encoding, FrameCodecs};
    use tokio_util::codec::{FramedRead, FramedWrite};

    /// Frames far larger than the pipe: each write returns at once (part
    /// of it in the pipe, the rest left to the writer task), and the other
    /// end still reads every frame whole and in order.
    #[tokio::test]
    async fn frames_a_full_socket_cannot_take_arrive_whole_and_in_order() {
        let (near, far) = tokio::io::duplex(64);
        let shared = Arc::new(Shared::new(Encoding::Json));
        let writer = FrameWriter::start(Box::pin(FramedWrite::new(near, FrameCodecs::client())), shared);
        let frames: Vec<Bytes> = (0..40_u8).map(|n| Bytes::from(vec![n; 1000 + usize::from(n)])).collect();
        let reading = tokio::spawn(async move {
            let mut reader = FramedRead::new(far, FrameCodecs::with_max(1 << 20));
            let mut got = Vec::new();
            while got.len() < 40 {
                got.push(reader.next().await.expect("a frame").expect("a whole frame").freeze());
            }
            got
        });
        for (n, frame) in frames.iter().enumerate() {
            if n % 2 == 0 {
                writer.write(frame.clone()).await.expect("written or queued");
            } else {
                assert!(writer.write_or_queue(frame.clone()), "queued");
            }
        }
        let got = tokio::time::timeout(std::time::Duration::from_secs(10), reading).await.expect("in time").unwrap();
        assert_eq!(got, frames);
    }
}
