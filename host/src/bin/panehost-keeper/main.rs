//! `panehost-keeper`: holds one pane's PTY master and child, so the pane
//! outlives the host that started it.
//!
//! # Contract
//!
//! **Invocation.**
//! `panehost-keeper --socket PATH --cols C --rows R --cwd DIR -- PROGRAM [ARGS...]`
//! (each option exactly once, in any order, before `--`; `C` and `R` from 1
//! to 65535). The keeper's own environment is the child's environment: it
//! is passed on unchanged (PROGRAM is looked up on its `PATH`).
//!
//! **Start-up**, in this order:
//! 1. It closes every fd above 2 it inherited (so neither it nor the child
//!    holds its launcher's pipes), ignores SIGHUP, SIGINT and SIGPIPE
//!    (SIGTERM and SIGKILL kill it as usual), then calls `setsid()` to lead
//!    its own session. When it is already a process group leader (started
//!    with a process group of its own), `setsid()` cannot succeed; it then
//!    stays the leader of that group, which signals sent to the host's
//!    group or terminal do not reach.
//! 2. It opens a PTY (master and slave both `O_NOCTTY`, close-on-exec) and
//!    sets its window size to C x R.
//! 3. It spawns PROGRAM with stdin, stdout and stderr on the PTY slave, in
//!    DIR. The child calls `setsid()` and makes the PTY its controlling
//!    terminal (`TIOCSCTTY`), so it leads a new session and its pid is its
//!    process group id; every signal starts at its default action and the
//!    signal mask is empty. The keeper then closes its slave fd.
//! 4. It binds a unix stream listener at PATH (the directory must exist; a
//!    stale file at PATH is removed first; the socket file is mode 0600).
//! 5. It prints exactly `ready <child-pid>\n` on stdout and flushes, then
//!    points stdin, stdout and stderr at `/dev/null`.
//!
//! If any step fails, it prints `error <message>\n` on stdout instead, ends
//! the child if it had started one (SIGKILL to its process group), and
//! exits 1.
//!
//! **Serving.** One connection at a time; a new connection replaces (and
//! closes) the previous one. A connection whose peer uid (`SO_PEERCRED`) is
//! not the keeper's effective uid is closed without a word. Every accepted
//! connection first receives one message, `pane <child-pid> running\n` or,
//! if the child has already exited, `pane <child-pid> exited <code>
//! <signal>\n`, sent in one `sendmsg` with the PTY master fd attached as
//! `SCM_RIGHTS`. The received fd shares the keeper's open file description:
//! status flags such as `O_NONBLOCK` set by the host apply to both. While a
//! connection is open, the child's exit is sent as `exited <code>
//! <signal>\n`. The exit is reported exactly once per connection: in the
//! greeting or as that line.
//!
//! `<code>` is the exit code, or 128 + n for death by signal n; `<signal>`
//! is then the signal's name (`SIGHUP`, `SIGKILL`, `SIGTERM`, ...), and `-`
//! otherwise. Examples: `exited 0 -`, `exited 7 -`, `exited 143 SIGTERM`.
//!
//! **Requests** from the host, one per line: `release\n` means the host has
//! recorded the exit and forgets the pane. If the child has exited, the
//! keeper removes its socket file and exits 0; while the child runs,
//! `release` is ignored (the host ends the child itself, by signalling its
//! process group). Other lines are ignored; a line over 256 bytes closes
//! the connection. A connection that closes is not an error: the keeper
//! goes back to accepting.
//!
//! **Lifetime.** The keeper holds its own master fd until it exits, so the
//! child sees no hangup while no host is connected, and output written in
//! the meantime waits in the PTY (a child that fills the PTY's buffer
//! blocks until a host reads). The keeper runs on one thread: it notices
//! the child's exit through a pidfd polled with the listener and the
//! connection (or, if it cannot get a pidfd, as before Linux 5.3, by
//! checking every 100 ms),
//! reaps it (`waitpid`) and keeps its exit status in memory; the keeper
//! exits only on `release` (or SIGTERM/SIGKILL), however long ago the
//! child exited.

mod args;
mod child;
mod protocol;
mod pty;
mod serve;
mod signals;
mod socket;

use rustix::fs::{Mode, OFlags};
use serve::{ChildState, Keeper};
use std::io;
use std::os::fd::{AsRawFd, RawFd};

fn main() {
    match start() {
        Ok(keeper) => keeper.serve(),
        Err(message) => {
            let _ = write_stdout(format!("error {}\n", message.replace('\n', " ")).as_bytes());
            std::process::exit(1);
        }
    }
}

/// Start-up steps 1 to 5 of the contract. The error is the message for the
/// `error` line.
fn start() -> Result<Keeper, String> {
    close_inherited_fds();
    signals::ignore_in_keeper().map_err(|error| format!("ignoring signals: {error}"))?;
    let args = args::parse(std::env::args_os().skip(1))?;
    lead_own_session().map_err(|error| format!("setsid: {error}"))?;

    let pty::Pty { master, slave } =
        pty::open(args.cols, args.rows).map_err(|error| format!("opening a PTY: {error}"))?;
    let child = child::spawn(&args.program, &args.program_args, &args.cwd, &slave)
        .map_err(|error| format!("starting {} in {}: {error}", args.program.to_string_lossy(), args.cwd.display()))?;
    drop(slave);
    let child_pid = child.id();

    let listener = match socket::bind(&args.socket) {
        Ok(listener) => listener,
        Err(error) => {
            child::kill_and_reap(child);
            return Err(format!("listening on {}: {error}", args.socket.display()));
        }
    };
    let give_up = |message: String| {
        child::kill_group(child_pid);
        let _ = std::fs::remove_file(&args.socket);
        message
    };

    let child = ChildState::Running(child::Running::watch(child));

    announce_ready(child_pid).map_err(|error| give_up(format!("writing ready: {error}")))?;
    detach_stdio();
    Ok(Keeper { master, child_pid, child, socket_path: args.socket, listener })
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

fn announce_ready(child_pid: u32) -> io::Result<()> {
    write_stdout(format!("ready {child_pid}\n").as_bytes())
}

/// Writes `line` in full straight to fd 1. The keeper writes one line on
/// stdout in its life; `std::io::stdout` would allocate a buffer for it
/// that stayed in the keeper's memory for the rest of the pane's life.
fn write_stdout(mut line: &[u8]) -> io::Result<()> {
    while !line.is_empty() {
        match rustix::io::write(rustix::stdio::stdout(), line) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(written) => line = &line[written..],
            Err(rustix::io::Errno::INTR) => {}
            Err(error) => return Err(error.into()),
        }
    }
    Ok(())
}

/// Points stdin, stdout and stderr at `/dev/null`: the host has read its
/// line and stops reading, and the keeper must not hold the host's pipes or
/// terminal. Best effort: there is nowhere left to report a failure.
fn detach_stdio() {
    let Ok(null) = rustix::fs::open("/dev/null", OFlags::RDWR | OFlags::CLOEXEC, Mode::empty()) else {
        return;
    };
    let _ = rustix::stdio::dup2_stdin(&null);
    let _ = rustix::stdio::dup2_stdout(&null);
    let _ = rustix::stdio::dup2_stderr(&null);
}
