//! Serving the host: one connection at a time, the greeting with the master
//! fd, the exit report, and `release`. All on the keeper's one thread: a
//! single `poll` waits for the listener, the connection and the child.

use crate::child::Running;
use crate::protocol::{self, ExitReport, Request, RequestReader};
use crate::socket::{self, Accepted};
use rustix::event::{PollFd, PollFlags};
use std::io::{self, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;

/// The child, as the serve loop knows it.
pub enum ChildState {
    /// Not reaped yet; watched for its exit.
    Running(Running),
    /// Reaped; its exit is kept for every later greeting.
    Exited(ExitReport),
}

impl ChildState {
    fn exit(&self) -> Option<&ExitReport> {
        match self {
            Self::Running(_) => None,
            Self::Exited(report) => Some(report),
        }
    }
}

/// Everything the serve loop needs.
pub struct Keeper {
    /// The keeper's own copy of the PTY master, open for the keeper's life.
    pub master: OwnedFd,
    /// The child's pid, which is also its process group id.
    pub child_pid: u32,
    /// The child: running, or its exit.
    pub child: ChildState,
    /// The socket file, removed on release.
    pub socket_path: PathBuf,
    /// The non-blocking listener.
    pub listener: UnixListener,
}

/// The connection being served and its partial request line.
struct Current {
    stream: UnixStream,
    requests: RequestReader,
}

/// What `poll` reported ready.
struct Ready {
    listener: bool,
    connection: bool,
    /// The child may have exited: its pidfd is readable, or (without a
    /// pidfd) the check interval has passed.
    child: bool,
}

impl Keeper {
    /// Serves hosts until one releases the exited pane; then removes the
    /// socket file and exits 0.
    ///
    /// The exit is reported exactly once per connection: a connection
    /// greeted before the child is reaped gets the `exited` line when it is
    /// (if it is still the current one), and one greeted after gets the
    /// exit in its greeting. Both happen on this thread, so nothing can
    /// fall between them.
    pub fn serve(mut self) -> ! {
        let mut current: Option<Current> = None;
        let mut buffer = [0_u8; 512];
        loop {
            let ready = self.wait_for_events(current.as_ref());
            // The child first, so a `release` read below sees its exit.
            if ready.child {
                self.reap_child(current.as_ref());
            }
            if ready.connection {
                if let Some(connection) = current.as_mut() {
                    if !self.read_requests(connection, &mut buffer) {
                        current = None;
                    }
                }
            }
            if ready.listener {
                while let Some(stream) = self.accept() {
                    if let Some(greeted) = self.greet(stream) {
                        // The previous connection, if any, is replaced and closed.
                        current = Some(Current { stream: greeted, requests: RequestReader::default() });
                    }
                }
            }
        }
    }

    /// Blocks until the listener, the connection or the child has
    /// something; returns which.
    fn wait_for_events(&self, current: Option<&Current>) -> Ready {
        let readable = PollFlags::IN;
        let mut fds = Vec::with_capacity(3);
        fds.push(PollFd::new(&self.listener, readable));
        let (exit_fd, timeout) = match &self.child {
            ChildState::Running(running) => (running.exit_fd(), running.poll_timeout()),
            ChildState::Exited(_) => (None, None),
        };
        let child_index = exit_fd.map(|fd| {
            fds.push(PollFd::from_borrowed_fd(fd, readable));
            fds.len() - 1
        });
        let connection_index = current.map(|connection| {
            fds.push(PollFd::from_borrowed_fd(connection.stream.as_fd(), readable));
            fds.len() - 1
        });
        loop {
            match rustix::event::poll(&mut fds, timeout) {
                Ok(_) => break,
                Err(rustix::io::Errno::INTR) => {}
                // poll fails only for reasons that retrying cannot fix.
                Err(_) => std::process::exit(1),
            }
        }
        let is_ready = |index: Option<usize>| index.is_some_and(|index| !fds[index].revents().is_empty());
        Ready {
            listener: is_ready(Some(0)),
            connection: is_ready(connection_index),
            // Without a pidfd, every wake-up is a chance to check.
            child: is_ready(child_index) || timeout.is_some(),
        }
    }

    /// Reaps the child if it has exited, and reports the exit on the
    /// current connection, if there is one.
    fn reap_child(&mut self, current: Option<&Current>) {
        let ChildState::Running(running) = &mut self.child else {
            return;
        };
        let Some(report) = running.try_reap() else {
            return;
        };
        if let Some(connection) = current {
            // A failed send means the host has gone; reading notices.
            let _ = socket::send_line(&connection.stream, protocol::exited(&report).as_bytes());
        }
        // Dropping the watch closes the pidfd, which would stay readable.
        self.child = ChildState::Exited(report);
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

    /// Sends the greeting, with the master fd and the exit if the child has
    /// been reaped; `None` if the connection failed.
    fn greet(&self, stream: UnixStream) -> Option<UnixStream> {
        let greeting = protocol::greeting(self.child_pid, self.child.exit());
        socket::send_with_fd(&stream, greeting.as_bytes(), self.master.as_fd()).ok()?;
        Some(stream)
    }

    /// Reads what the host sent and acts on it. `false` when the connection
    /// is over (closed, failed, or sent a line that is too long).
    fn read_requests(&self, connection: &mut Current, buffer: &mut [u8]) -> bool {
        let read = match (&connection.stream).read(buffer) {
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
        if self.child.exit().is_some() {
            let _ = std::fs::remove_file(&self.socket_path);
            std::process::exit(0);
        }
    }
}
