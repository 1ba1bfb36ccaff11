//! The keeper (`panehost-keeper`): holds panes' PTY masters and children, so the panes
//! outlive the host that started them. One keeper holds a group of panes,
//! which its host asks for one at a time on its stdin.
//!
//! # Contract
//!
//! **Invocation.** `panehost-keeper --sockets DIR`: the `panehost`
//! executable run with `panehost-keeper` as its name (`argv[0]`); there is
//! no other file to install. Every pane's socket
//! will be a file directly in DIR. The keeper's own environment is not
//! passed on: each pane request carries its child's whole environment.
//!
//! **Start-up.** It names its process `panehost-keeper` (whatever path
//! it was executed by), closes every fd above 2 it inherited (so neither it nor
//! its children hold its launcher's pipes), sets every signal to its default
//! action and then ignores SIGHUP, SIGINT and SIGPIPE (SIGTERM and SIGKILL
//! kill it as usual), then calls `setsid()` to
//! lead its own session, and becomes a child subreaper
//! (`PR_SET_CHILD_SUBREAPER`): a process that a pane's program started
//! and whose parent ends becomes the keeper's child, not init's; the
//! keeper reaps each such orphan when it exits (it blocks SIGCHLD and
//! reads it from a signalfd; its children start with an empty signal
//! mask all the same). When it is already a process group leader
//! (started with a process group of its own), `setsid()` cannot succeed; it
//! then stays the leader of that group, which signals sent to the host's
//! group or terminal do not reach. A bad command line is answered with one
//! `error <message>\n` line on stdout and exit status 1.
//!
//! **Pane requests** arrive on stdin, each a 4-byte big-endian length and
//! that many bytes (at most 1 MiB) of words, each word ended by a NUL byte:
//! `--socket PATH --cols C --rows R --cwd DIR [--cgroup DIR] [--env
//! NAME=VALUE]... -- PROGRAM [ARGS...]` (the four options exactly once,
//! `--cgroup` at most once, `--env` any number of times, in any order,
//! before `--`; `C` and `R` from 2 to 1000; the
//! `--env` values, in order, are the child's whole environment, and
//! PROGRAM is looked up on their `PATH`). For each, in order, the keeper:
//! 1. opens a PTY of C x R with portable-pty (`openpty`: the slave
//!    `O_NOCTTY`, both sides close-on-exec);
//! 2. spawns PROGRAM with portable-pty, with stdin, stdout and stderr on
//!    the PTY slave, in DIR. The child calls `setsid()` and makes the PTY
//!    its controlling terminal (`TIOCSCTTY`), so it leads a new session and
//!    its pid is its process group id; it closes every descriptor above 2
//!    before it executes PROGRAM; every signal starts at its default action
//!    and the signal mask is empty. With `--cgroup DIR` (a cgroup v2
//!    directory), the child starts in that group: the keeper moves itself
//!    there for the fork and back to its own group right after; a group it
//!    cannot enter is passed by, and one it cannot leave again fails the
//!    request. The keeper then closes its slave fd;
//! 3. binds a unix stream listener at PATH (a stale file there is removed
//!    first; the socket file is mode 0600);
//! 4. answers exactly `ready <child-pid>\n` on stdout.
//!
//! If a step fails (or the words are not a pane request, or PATH is not in
//! the sockets directory), it answers `error <message>\n` instead, ends the
//! child if it had started one (SIGKILL to its process group), and goes on
//! with the next request. A length over the limit is answered with `error`
//! and ends the intake, as does the end of stdin: the keeper then takes no
//! more panes and points stdin, stdout and stderr at `/dev/null`.
//!
//! **Serving a pane.** One connection at a time per pane: a connection that
//! arrives while one is open is closed at once, without a word (a host that
//! dies closes its connection, so the next host's is served). A connection whose peer
//! uid (`SO_PEERCRED`) is not the keeper's effective uid is closed without
//! a word. Every accepted connection first receives one message, `pane
//! <child-pid> running\n` or, if the child has already exited, `pane
//! <child-pid> exited <code> <signal>\n`, sent in one `sendmsg` with the
//! PTY master fd attached as `SCM_RIGHTS`. The received fd shares the
//! keeper's open file description: status flags such as `O_NONBLOCK` set by
//! the host apply to both. While a connection is open, the child's exit is
//! sent as `exited <code> <signal>\n`. The exit is reported exactly once
//! per connection: in the greeting or as that line.
//!
//! `<code>` is the exit code, or 128 + n for death by signal n; `<signal>`
//! is then the signal's name (`SIGHUP`, `SIGKILL`, `SIGTERM`, ...), and `-`
//! otherwise. Examples: `exited 0 -`, `exited 7 -`, `exited 143 SIGTERM`.
//!
//! **Requests** from the host on a pane's connection, one per line:
//! `release\n` means the host has recorded the exit and forgets the pane.
//! If the child has exited, the keeper removes the pane's socket file and
//! closes its master; while the child runs, `release` is ignored (the host
//! ends the child itself, by signalling its process group). Other lines are
//! ignored; a line over 256 bytes closes the connection. A connection that
//! closes is not an error: the pane goes back to accepting.
//!
//! **Lifetime.** The keeper holds each pane's master fd until the pane is
//! released, so the child sees no hangup while no host is connected, and
//! output written in the meantime waits in the PTY (a child that fills the
//! PTY's buffer blocks until a host reads). The keeper runs on one thread:
//! it notices a child's exit through a pidfd polled with the sockets (or,
//! if it cannot get a pidfd, as before Linux 5.3, by checking every 100
//! ms), reaps it (`waitpid`) and keeps its exit status in memory, however
//! long ago the child exited. It exits 0 once it takes no more panes and
//! holds none (or on SIGTERM/SIGKILL, which end it and leave its children
//! running without it).

//!
//! The keeper's process is [`main`], which the `panehost` executable runs
//! when [`invoked_as_keeper`]. What it reads and writes is the keeper's
//! wire (`crate::keeper_wire`), which the host's side uses too.

mod args;
mod child;
mod orphans;
mod pane;
mod pty;
mod serve;
mod signals;
mod socket;
mod stdio;

use rustix::fs::{Mode, OFlags};
use serve::Keeper;
use std::io;
use std::os::fd::{AsRawFd, RawFd};

/// The name a keeper is run under (`argv[0]`), and the name of its process.
pub const KEEPER_NAME: &str = "panehost-keeper";

/// True when this process was started as a keeper: its `argv[0]` is
/// [`KEEPER_NAME`] (or a path ending in it).
pub fn invoked_as_keeper() -> bool {
    std::env::args_os()
        .next()
        .map(std::path::PathBuf::from)
        .is_some_and(|name| name.file_name().is_some_and(|name| name == KEEPER_NAME))
}

/// The keeper's process, from start-up to exit (see the contract above).
pub fn main() -> ! {
    match start() {
        Ok(keeper) => keeper.serve(),
        Err(message) => {
            let _ = serve::answer_error(&message);
            std::process::exit(1);
        }
    }
}

/// Start-up, as the contract says. The error is the message for the
/// `error` line.
fn start() -> Result<Keeper, String> {
    name_the_process();
    close_inherited_fds();
    signals::ignore_in_keeper().map_err(|error| format!("ignoring signals: {error}"))?;
    let sockets = args::parse_keeper(std::env::args_os().skip(1))?;
    lead_own_session().map_err(|error| format!("setsid: {error}"))?;
    let orphans = orphans::Orphans::adopt().map_err(|error| format!("becoming a subreaper: {error}"))?;
    Ok(Keeper::new(sockets, orphans))
}

/// Names the process `panehost-keeper` (`/proc/<pid>/comm`, what `ps` and
/// `top` show): a host runs its keeper through the file it holds open
/// (`/proc/<host pid>/fd/<n>`), which would otherwise name it `<n>`. Best
/// effort: only a name is at stake.
fn name_the_process() {
    let _ = rustix::thread::set_name(c"panehost-keeper");
}

/// Closes every fd above 2 the keeper inherited. A launcher's stray fds
/// would otherwise stay open for the pane's whole life, in the keeper and
/// in the child, and whoever waits for their other end would wait for ever.
fn close_inherited_fds() {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    let Ok(listing) = rustix::fs::open("/proc/self/fd", flags, Mode::empty()) else {
        return;
    };
    let listing_fd = listing.as_raw_fd();
    let Ok(mut entries) = rustix::fs::Dir::new(listing) else {
        return;
    };
    let mut inherited: Vec<RawFd> = Vec::new();
    while let Some(Ok(entry)) = entries.read() {
        let fd = entry.file_name().to_str().ok().and_then(|name| name.parse::<RawFd>().ok());
        inherited.extend(fd.filter(|&fd| fd > 2 && fd != listing_fd));
    }
    drop(entries);
    for fd in inherited {
        // Safety: this runs first thing in `main`, while the process has one
        // thread and no value in it owns an fd above 2 (std opens none before
        // `main`, and the listing's own fd is left out), so closing these
        // cannot pull an fd from under an owner.
        unsafe { rustix::io::close(fd) };
    }
}

/// `setsid()`, tolerating the one case where it cannot succeed: the keeper
/// already leads its own process group.
fn lead_own_session() -> io::Result<()> {
    match rustix::process::setsid() {
        Ok(_) => Ok(()),
        Err(rustix::io::Errno::PERM) if rustix::process::getpgrp() == rustix::process::getpid() => Ok(()),
        Err(error) => Err(error.into()),
    }
}
