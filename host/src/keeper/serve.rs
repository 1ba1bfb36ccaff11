//! The keeper's loop: pane requests on stdin, and every pane's listener,
//! connection and child, all on one thread around a single `poll`.

use super::orphans::Orphans;
use super::pane::{Outcome, Pane, PollSlots};
use super::stdio;
use crate::keeper_wire::answer::Answer;
use crate::keeper_wire::pane_request::{self, PaneRequest, PaneRequestReader, RequestTooLong};
use rustix::event::{PollFd, PollFlags};
use std::path::PathBuf;

/// The keeper: the panes it holds, and whether its host may still ask for
/// more.
pub(super) struct Keeper {
    /// The directory every pane's socket must be in.
    sockets: PathBuf,
    /// Pane requests in progress on stdin; `None` once stdin has ended (or
    /// the host could not be answered): the keeper takes no more panes.
    intake: Option<PaneRequestReader>,
    panes: Vec<Pane>,
    /// The processes the keeper adopted, reaped as they exit.
    orphans: Orphans,
}

impl Keeper {
    /// A keeper with no panes yet, reading pane requests on stdin.
    pub(super) fn new(sockets: PathBuf, orphans: Orphans) -> Self {
        Self { sockets, intake: Some(PaneRequestReader::default()), panes: Vec::new(), orphans }
    }

    /// Serves until the keeper takes no more panes and holds none; then
    /// exits 0.
    pub(super) fn serve(mut self) -> ! {
        let mut buffer = [0_u8; 512];
        loop {
            if self.intake.is_none() && self.panes.is_empty() {
                std::process::exit(0);
            }
            let (stdin_ready, ready) = self.wait_for_events();
            let mut ready = ready.into_iter();
            self.panes.retain_mut(|pane| pane.serve(ready.next().unwrap_or_default(), &mut buffer) == Outcome::Kept);
            // After the panes: each has reaped its own child if it ended.
            let panes = &self.panes;
            self.orphans.reap(|pid| panes.iter().any(|pane| pane.holds_unreaped_child(pid)));
            if stdin_ready {
                self.take_pane_requests();
            }
        }
    }

    /// Blocks until stdin or a pane has something; returns whether stdin is
    /// readable and what each pane has, in the panes' order.
    fn wait_for_events(&self) -> (bool, Vec<super::pane::Ready>) {
        let mut fds = Vec::with_capacity(1 + 3 * self.panes.len());
        if self.intake.is_some() {
            fds.push(PollFd::from_borrowed_fd(rustix::stdio::stdin(), PollFlags::IN));
        }
        let slots: Vec<PollSlots> = self.panes.iter().map(|pane| pane.poll_fds(&mut fds)).collect();
        // Only wakes the loop, which reaps the orphans on every round.
        fds.extend(self.orphans.wake_fd().map(|fd| PollFd::from_borrowed_fd(fd, PollFlags::IN)));
        let timeout = self.panes.iter().find_map(Pane::poll_timeout);
        loop {
            match rustix::event::poll(&mut fds, timeout) {
                Ok(_) => break,
                Err(rustix::io::Errno::INTR) => {}
                // poll fails only for reasons that retrying cannot fix.
                Err(_) => std::process::exit(1),
            }
        }
        let stdin_ready = self.intake.is_some() && !fds[0].revents().is_empty();
        (stdin_ready, slots.iter().map(|slots| slots.ready(&fds)).collect())
    }

    /// Reads stdin and starts the panes its complete requests ask for,
    /// answering each in order.
    fn take_pane_requests(&mut self) {
        let Some(intake) = self.intake.as_mut() else {
            return;
        };
        let mut chunk = [0_u8; 4096];
        let (bodies, too_long) = match stdio::read_stdin(&mut chunk) {
            // End of file: the host is gone, or will ask for nothing more.
            Ok(0) | Err(_) => return self.close_intake(),
            Ok(read) => intake.feed(&chunk[..read]),
        };
        for body in bodies {
            let started = pane_request::words(&body)
                .and_then(|words| PaneRequest::parse(words.into_iter(), &self.sockets))
                .and_then(Pane::start);
            let answered = match started {
                Ok(pane) => match stdio::write_stdout(Answer::Ready(pane.child_pid()).line().as_bytes()) {
                    Ok(()) => {
                        self.panes.push(pane);
                        Ok(())
                    }
                    Err(error) => {
                        pane.abandon();
                        Err(error)
                    }
                },
                Err(message) => answer_error(&message),
            };
            if answered.is_err() {
                // Nobody reads the answers: the host is gone.
                return self.close_intake();
            }
        }
        if let Some(RequestTooLong(length)) = too_long {
            let limit = pane_request::MAX_PANE_REQUEST;
            let _ = answer_error(&format!("a pane request of {length} bytes is over the limit of {limit}"));
            // The stream cannot be followed past a length it will not read.
            self.close_intake();
        }
    }

    /// Takes no more panes: stdin, stdout and stderr go to `/dev/null`.
    fn close_intake(&mut self) {
        self.intake = None;
        stdio::detach();
    }
}

/// Answers a pane request that failed: `error <message>` on one line.
pub(super) fn answer_error(message: &str) -> std::io::Result<()> {
    stdio::write_stdout(Answer::Error(message.to_owned()).line().as_bytes())
}
