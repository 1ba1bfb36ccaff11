//! Descriptors a client passes over its connection (`SCM_RIGHTS`), for
//! `attach_terminal`.
//!
//! The connection's bytes are read with `recvmsg`, so descriptors that
//! travel with them are received rather than lost. Those that arrive before
//! or with the connection's first request belong to that request, at most
//! [`limits::MAX_PASSED_DESCRIPTORS`] of them (the kernel closes any beyond the
//! room given); the first request takes them, whatever it is, and any that
//! arrive later are closed at once. A client that passes descriptors it
//! should not costs the host nothing it keeps.

use crate::limits;
use std::io;
use std::mem::MaybeUninit;
use std::os::fd::{AsFd, OwnedFd};
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{ready, Context, Poll};
use tokio::io::{AsyncRead, Interest, ReadBuf};
use tokio::net::unix::OwnedReadHalf;

/// The descriptors a connection's first request brought. Cheap to clone;
/// every clone is the same slot.
#[derive(Debug, Clone)]
pub(crate) struct PassedDescriptors(Arc<Mutex<Slot>>);

#[derive(Debug)]
struct Slot {
    held: Vec<OwnedFd>,
    /// False once the first request has taken what came.
    open: bool,
}

impl PassedDescriptors {
    /// An empty slot that accepts descriptors until the first request.
    pub(crate) fn new() -> Self {
        PassedDescriptors(Arc::new(Mutex::new(Slot { held: Vec::new(), open: true })))
    }

    fn slot(&self) -> std::sync::MutexGuard<'_, Slot> {
        self.0.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    /// Keeps `received` for the first request (up to the limit), or closes
    /// them when it has been read already.
    fn receive(&self, received: impl Iterator<Item = OwnedFd>) {
        let mut slot = self.slot();
        for descriptor in received {
            if slot.open && slot.held.len() < limits::MAX_PASSED_DESCRIPTORS {
                slot.held.push(descriptor);
            }
        }
    }

    /// What came with the first request, for that request: from now on
    /// every descriptor received is closed.
    pub(crate) fn take_for_first_request(&self) -> Vec<OwnedFd> {
        let mut slot = self.slot();
        slot.open = false;
        std::mem::take(&mut slot.held)
    }
}

impl Default for PassedDescriptors {
    fn default() -> Self {
        Self::new()
    }
}

/// The receiving half of a connection, read with `recvmsg` so that the
/// descriptors passed with its bytes reach [`PassedDescriptors`].
#[derive(Debug)]
pub(crate) struct DescriptorReader {
    half: OwnedReadHalf,
    passed: PassedDescriptors,
    chunk: Box<[u8]>,
}

impl DescriptorReader {
    /// Reads `half`, keeping passed descriptors in `passed`.
    pub(crate) fn new(half: OwnedReadHalf, passed: PassedDescriptors) -> Self {
        DescriptorReader { half, passed, chunk: vec![0; limits::CONNECTION_READ_BYTES].into_boxed_slice() }
    }
}

impl AsyncRead for DescriptorReader {
    fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        let stream = this.half.as_ref();
        loop {
            ready!(stream.poll_read_ready(cx))?;
            let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(limits::MAX_PASSED_DESCRIPTORS))];
            let mut control = rustix::net::RecvAncillaryBuffer::new(&mut space);
            let room = buf.remaining().min(this.chunk.len());
            let chunk = &mut this.chunk[..room];
            let received = stream.try_io(Interest::READABLE, || {
                let mut slices = [io::IoSliceMut::new(chunk)];
                rustix::net::recvmsg(stream.as_fd(), &mut slices, &mut control, rustix::net::RecvFlags::CMSG_CLOEXEC)
                    .map_err(io::Error::from)
            });
            match received {
                Ok(message) => {
                    let descriptors = control.drain().flat_map(|message| match message {
                        rustix::net::RecvAncillaryMessage::ScmRights(descriptors) => descriptors.collect(),
                        _ => Vec::new(),
                    });
                    this.passed.receive(descriptors);
                    buf.put_slice(&this.chunk[..message.bytes]);
                    return Poll::Ready(Ok(()));
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => continue,
                Err(err) => return Poll::Ready(Err(err)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::IoSlice;
    use std::os::fd::BorrowedFd;
    use tokio::io::AsyncReadExt;

    fn send_with(socket: &std::os::unix::net::UnixStream, bytes: &[u8], descriptors: &[BorrowedFd<'_>]) {
        let mut space = vec![MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(descriptors.len()))];
        let mut control = rustix::net::SendAncillaryBuffer::new(&mut space);
        assert!(control.push(rustix::net::SendAncillaryMessage::ScmRights(descriptors)));
        let sent = rustix::net::sendmsg(socket, &[IoSlice::new(bytes)], &mut control, rustix::net::SendFlags::empty())
            .unwrap();
        assert_eq!(sent, bytes.len());
    }

    #[tokio::test]
    async fn the_first_request_keeps_at_most_two_and_later_ones_are_closed() {
        let (client, host) = std::os::unix::net::UnixStream::pair().unwrap();
        host.set_nonblocking(true).unwrap();
        let (read_half, _write_half) = tokio::net::UnixStream::from_std(host).unwrap().into_split();
        let passed = PassedDescriptors::new();
        let mut reader = DescriptorReader::new(read_half, passed.clone());
        let null = std::fs::File::open("/dev/null").unwrap();
        // Three passed: the kernel keeps two for the room given.
        send_with(&client, b"first", &[null.as_fd(), null.as_fd(), null.as_fd()]);
        let mut bytes = [0u8; 5];
        reader.read_exact(&mut bytes).await.unwrap();
        assert_eq!(&bytes, b"first");
        assert_eq!(passed.take_for_first_request().len(), 2);

        send_with(&client, b"later", &[null.as_fd()]);
        reader.read_exact(&mut bytes).await.unwrap();
        assert_eq!(&bytes, b"later");
        assert!(passed.take_for_first_request().is_empty(), "descriptors after the first request are closed");

        drop(client);
        assert_eq!(reader.read(&mut bytes).await.unwrap(), 0, "the end of the stream");
    }
}
