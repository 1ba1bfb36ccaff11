//! Serving the host: one connection at a time, the greeting with the master
//! fd, the exit report, and `release`.

use crate::protocol::{self, ExitReport, Request, RequestReader};
use crate::socket::{self, Accepted};
use rustix::event::{PollFd, PollFlags};
use std::io::{self, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;
use std::sync::{Arc, Mutex, MutexGuard};

/// What the reaper thread and the serve loop share.
#[derive(Default)]
pub struct Shared {
    /// The child's exit, once reaped.
    exit: Option<ExitReport>,
    /// The connected host, if any; the reaper reports the exit on it.
    connection: Option<Arc<UnixStream>>,
}

/// The state shared between the reaper and the serve loop.
pub type SharedState = Arc<Mutex<Shared>>;

/// Records the child's exit and tells the connected host, if there is one.
/// Called once, by the reaper thread.
pub fn record_exit(shared: &SharedState, report: ExitReport) {
    let mut state = lock(shared);
    if let Some(connection) = &state.connection {
        // A failed send means the host has gone; the serve loop notices.
        let _ = socket::send_line(connection, protocol::exited(&report).as_bytes());
    }
    state.exit = Some(report);
}

/// Everything the serve loop needs.
pub struct Keeper {
    /// The keeper's own copy of the PTY master, open for the keeper's life.
    pub master: OwnedFd,
    /// The child's pid, which is also its process group id.
    pub child_pid: u32,
    /// The socket file, removed on release.
    pub socket_path: PathBuf,
    /// The non-blocking listener.
    pub listener: UnixListener,
    /// Shared with the reaper.
    pub shared: SharedState,
}

/// The connection being served and its partial request line.
struct Current {
    stream: Arc<UnixStream>,
    requests: RequestReader,
}

impl Keeper {
    /// Serves hosts until one releases the exited pane; then removes the
    /// socket file and exits 0.
    pub fn serve(self) -> ! {
        let mut current: Option<Current> = None;
        let mut buffer = [0_u8; 512];
        loop {
            let (listener_ready, connection_ready) = self.wait_for_events(current.as_ref());
            if connection_ready {
                if let Some(connection) = current.as_mut() {
                    if !self.read_requests(connection, &mut buffer) {
                        self.forget(&connection.stream);
                        current = None;
                    }
                }
            }
            if listener_ready {
                while let Some(stream) = self.accept() {
                    if let Some(accepted) = self.greet(stream) {
                        // The previous connection, if any, is replaced and closed.
                        current = Some(Current { stream: accepted, requests: RequestReader::default() });
                    }
                }
            }
        }
    }

    /// Blocks until the listener or the connection has something; returns
    /// which.
    fn wait_for_events(&self, current: Option<&Current>) -> (bool, bool) {
        let readable = PollFlags::IN;
        let mut fds = Vec::with_capacity(2);
        fds.push(PollFd::new(&self.listener, readable));
        if let Some(connection) = current {
            fds.push(PollFd::from_borrowed_fd(connection.stream.as_fd(), readable));
        }
        loop {
            match rustix::event::poll(&mut fds, None) {
                Ok(_) => break,
                Err(rustix::io::Errno::INTR) => {}
                // poll fails only for reasons that retrying cannot fix.
                Err(_) => std::process::exit(1),
            }
        }
        let listener_ready = !fds[0].revents().is_empty();
        let connection_ready = fds.get(1).is_some_and(|fd| !fd.revents().is_empty());
        (listener_ready, connection_ready)
    }

    /// Accepts the next pending connection from the keeper's own user;
    /// `None` when nothing more is pending.
    fn accept(&self) -> Option<UnixStream> {
        loop {
            match socket::accept(&self.listener) {
                Ok(Accepted::Owner(stream)) => return Some(stream),
                // Closed already: look at the next one.
                Ok(Accepted::Foreign) => {}
                // Nothing pending; or a connection that failed between
                // connect and accept, or no fd to spare: poll reports
                // anything still pending.
                Ok(Accepted::NonePending) | Err(_) => return None,
            }
        }
    }

    /// Sends the greeting with the master fd and makes the connection the
    /// current one. Under the lock, so the exit is reported exactly once on
    /// it: in the greeting, or by the reaper afterwards.
    fn greet(&self, stream: UnixStream) -> Option<Arc<UnixStream>> {
        let mut state = lock(&self.shared);
        let greeting = protocol::greeting(self.child_pid, state.exit.as_ref());
        socket::send_with_fd(&stream, greeting.as_bytes(), self.master.as_fd()).ok()?;
        let stream = Arc::new(stream);
        state.connection = Some(Arc::clone(&stream));
        Some(stream)
    }

    /// Reads what the host sent and acts on it. `false` when the connection
    /// is over (closed, failed, or sent a line that is too long).
    fn read_requests(&self, connection: &mut Current, buffer: &mut [u8]) -> bool {
        let read = match (&*connection.stream).read(buffer) {
            Ok(0) => return false,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => return true,
            Err(_) => return false,
        };
        let Ok(requests) = connection.requests.feed(&buffer[..read]) else {
            return false;
        };
        for request in requests {
            if request == Request::Release {
                self.release();
            }
        }
        true
    }

    /// `release`: once the child has exited, the keeper's job is done.
    /// While it runs, the request is ignored.
    fn release(&self) {
        let state = lock(&self.shared);
        if state.exit.is_some() {
            let _ = std::fs::remove_file(&self.socket_path);
            std::process::exit(0);
        }
    }

    /// Drops `stream` as the current connection (if it still is).
    fn forget(&self, stream: &Arc<UnixStream>) {
        let mut state = lock(&self.shared);
        if state.connection.as_ref().is_some_and(|current| Arc::ptr_eq(current, stream)) {
            state.connection = None;
        }
    }
}

fn lock(shared: &SharedState) -> MutexGuard<'_, Shared> {
    // Neither side panics while holding the lock; recover the state anyway.
    shared.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}
