//! One pane the keeper holds: its PTY master, its child, its socket and the
//! host connection being served. Starting it, greeting each connection
//! with the master fd, reporting the child's exit, and `release`.

use super::child::{self, Running};
use super::pty;
use super::socket::{self, Accepted};
use crate::keeper_wire::pane_lines::{self, ExitReport, Request, RequestReader};
use crate::keeper_wire::pane_request::PaneRequest;
use rustix::event::{PollFd, PollFlags, Timespec};
use std::io::{self, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::PathBuf;

/// The child, as the keeper knows it.
enum ChildState {
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

/// The connection being served and its partial request line.
struct Current {
    stream: UnixStream,
    requests: RequestReader,
}

impl Current {
    /// Whether the connection has something to read, or has closed, now.
    fn has_news(&self) -> bool {
        let mut fds = [PollFd::from_borrowed_fd(self.stream.as_fd(), PollFlags::IN)];
        let now = Timespec { tv_sec: 0, tv_nsec: 0 };
        matches!(rustix::event::poll(&mut fds, Some(&now)), Ok(ready) if ready > 0)
    }
}

/// A pane held by the keeper.
pub(super) struct Pane {
    /// The keeper's own copy of the PTY master, open as long as the pane.
    master: OwnedFd,
    /// The child's pid, which is also its process group id.
    child_pid: u32,
    child: ChildState,
    /// The socket file, removed on release.
    socket_path: PathBuf,
    /// The non-blocking listener.
    listener: UnixListener,
    /// The host connection being served; while it is open, another is
    /// closed at once, unanswered.
    current: Option<Current>,
}

/// Where a pane's descriptors sit in the keeper's `poll` set.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct PollSlots {
    listener: usize,
    connection: Option<usize>,
    child: Option<usize>,
    /// The child runs without a pidfd: every wake-up is a chance to check.
    child_unwatched: bool,
}

/// What `poll` reported for one pane.
#[derive(Debug, Default, Clone, Copy)]
pub(super) struct Ready {
    listener: bool,
    connection: bool,
    /// The child may have exited: its pidfd is readable, or (without a
    /// pidfd) the keeper woke up.
    child: bool,
}

impl PollSlots {
    /// What the polled descriptors say about this pane.
    pub(super) fn ready(&self, fds: &[PollFd<'_>]) -> Ready {
        let is_ready = |index: Option<usize>| index.is_some_and(|index| !fds[index].revents().is_empty());
        Ready {
            listener: is_ready(Some(self.listener)),
            connection: is_ready(self.connection),
            child: is_ready(self.child) || self.child_unwatched,
        }
    }
}

/// After serving: whether the host released the pane.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Outcome {
    /// The pane stays.
    Kept,
    /// The host released the exited pane; its socket file is removed and
    /// the pane is to be dropped.
    Released,
}

impl Pane {
    /// Opens the PTY, spawns the child in it and listens on the socket. The
    /// error is the message for the `error` answer.
    pub(super) fn start(request: PaneRequest) -> Result<Self, String> {
        let pty::Pty { master, slave } =
            pty::open(request.cols, request.rows).map_err(|error| format!("opening a PTY: {error}"))?;
        let child = child::spawn(&request, slave.as_ref()).map_err(|error| {
            format!("starting {} in {}: {error}", request.program.to_string_lossy(), request.cwd.display())
        })?;
        drop(slave);
        let child_pid = child.id();
        let listener = match socket::bind(&request.socket) {
            Ok(listener) => listener,
            Err(error) => {
                child::kill_and_reap(child);
                return Err(format!("listening on {}: {error}", request.socket.display()));
            }
        };
        Ok(Self {
            master,
            child_pid,
            child: ChildState::Running(Running::watch(child)),
            socket_path: request.socket,
            listener,
            current: None,
        })
    }

    /// The child's pid, for the `ready` answer.
    pub(super) fn child_pid(&self) -> u32 {
        self.child_pid
    }

    /// Whether `pid` is this pane's child and not reaped yet (the pane
    /// reaps it, and reports how it ended).
    pub(super) fn holds_unreaped_child(&self, pid: u32) -> bool {
        self.child_pid == pid && matches!(self.child, ChildState::Running(_))
    }

    /// Ends a pane whose `ready` answer could not be given: nobody will ever
    /// connect to it.
    pub(super) fn abandon(self) {
        if let ChildState::Running(running) = self.child {
            running.kill_and_reap();
        }
        let _ = std::fs::remove_file(&self.socket_path);
    }

    /// Adds the pane's descriptors to the `poll` set.
    pub(super) fn poll_fds<'a>(&'a self, fds: &mut Vec<PollFd<'a>>) -> PollSlots {
        let readable = PollFlags::IN;
        let mut push = |fd| {
            fds.push(PollFd::from_borrowed_fd(fd, readable));
            fds.len() - 1
        };
        let listener = push(self.listener.as_fd());
        let connection = self.current.as_ref().map(|current| push(current.stream.as_fd()));
        let (child, child_unwatched) = match &self.child {
            ChildState::Running(running) => match running.exit_fd() {
                Some(fd) => (Some(push(fd)), false),
                None => (None, true),
            },
            ChildState::Exited(_) => (None, false),
        };
        PollSlots { listener, connection, child, child_unwatched }
    }

    /// How long `poll` may block for this pane's sake.
    pub(super) fn poll_timeout(&self) -> Option<&'static Timespec> {
        match &self.child {
            ChildState::Running(running) => running.poll_timeout(),
            ChildState::Exited(_) => None,
        }
    }

    /// Acts on what `poll` reported: the connection first, then the child,
    /// then new connections.
    ///
    /// What the connection sent before this wake-up is read before the
    /// child is reaped: a `release` the host sent while the child ran is
    /// judged as of then, and ignored, even when the child exits before
    /// the keeper gets to read it. A host releases a pane only after the
    /// keeper has told it of the exit, which was reaped in an earlier
    /// wake-up, so its `release` always finds the exit.
    ///
    /// The exit is reported exactly once per connection: a connection
    /// greeted before the child is reaped gets the `exited` line when it is
    /// (if it is still the current one), and one greeted after gets the
    /// exit in its greeting. Both happen on the keeper's one thread, so
    /// nothing can fall between them.
    pub(super) fn serve(&mut self, ready: Ready, buffer: &mut [u8]) -> Outcome {
        if ready.connection && self.read_current(buffer) == Reading::Released {
            return self.release();
        }
        if ready.child {
            self.reap_child();
        }
        if ready.listener {
            while let Some(stream) = self.accept() {
                // A host that went away after this wake-up's `poll` (and
                // the one that follows it at once) is seen gone now,
                // rather than taken for the host that holds the pane.
                if self.current.as_ref().is_some_and(Current::has_news)
                    && self.read_current(buffer) == Reading::Released
                {
                    return self.release();
                }
                if self.current.is_some() {
                    // One host at a time: a second connection would take
                    // the pane from the host that holds it, whose `release`
                    // would then never arrive. Dropping it closes it.
                    continue;
                }
                if let Some(greeted) = self.greet(stream) {
                    self.current = Some(Current { stream: greeted, requests: RequestReader::default() });
                }
            }
        }
        Outcome::Kept
    }

    /// Reaps the child if it has exited, and reports the exit on the
    /// current connection, if there is one.
    fn reap_child(&mut self) {
        let ChildState::Running(running) = &mut self.child else {
            return;
        };
        let Some(report) = running.try_reap() else {
            return;
        };
        if let Some(current) = &self.current {
            // A failed send means the host has gone; reading notices.
            let _ = socket::send_line(&current.stream, pane_lines::exited(&report).as_bytes());
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
        let greeting = pane_lines::greeting(self.child_pid, self.child.exit());
        socket::send_with_fd(&stream, greeting.as_bytes(), self.master.as_fd()).ok()?;
        Some(stream)
    }

    /// Reads what the current connection sent (it is readable); it is
    /// dropped when it has closed. After a `release` it is kept until the
    /// pane is dropped, so that the host sees it close only once the
    /// socket file is gone.
    fn read_current(&mut self, buffer: &mut [u8]) -> Reading {
        let Some(mut current) = self.current.take() else {
            return Reading::Closed;
        };
        let reading = self.read_requests(&mut current, buffer);
        if reading != Reading::Closed {
            self.current = Some(current);
        }
        reading
    }

    /// Reads what the host sent and acts on it.
    fn read_requests(&self, current: &mut Current, buffer: &mut [u8]) -> Reading {
        let read = match (&current.stream).read(buffer) {
            Ok(0) => return Reading::Closed,
            Ok(read) => read,
            Err(error) if error.kind() == io::ErrorKind::Interrupted => return Reading::Open,
            Err(_) => return Reading::Closed,
        };
        let Ok(requests) = current.requests.feed(&buffer[..read]) else {
            return Reading::Closed;
        };
        // While the child runs, `release` is ignored: the host ends the
        // child itself, by signalling its process group.
        let released = self.child.exit().is_some() && requests.contains(&Request::Release);
        if released {
            Reading::Released
        } else {
            Reading::Open
        }
    }

    /// `release` of an exited pane: its socket file goes; dropping the pane
    /// closes its descriptors.
    fn release(&self) -> Outcome {
        let _ = std::fs::remove_file(&self.socket_path);
        Outcome::Released
    }
}

/// What reading a connection came to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Reading {
    /// Still open.
    Open,
    /// Closed, failed, or sent a line that is too long.
    Closed,
    /// The host released the exited pane.
    Released,
}
