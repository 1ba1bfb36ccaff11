//! The host's side of a pane's keeper process.
//!
//! A keeper (`panehost-keeper`) holds a pane's PTY master and child, so
//! that they outlive the host. The host starts it, reads `ready <pid>`,
//! connects to its socket and receives the master fd with a status line;
//! later the keeper reports `exited <code> <signal|->` on that connection,
//! and the host answers `release` once the pane is forgotten.

use crate::open_files;
use panehost_adapters::LaunchPlan;
use panehost_ipc::{ExitStatus, Size};
use rustix::net::{RecvAncillaryBuffer, RecvAncillaryMessage, RecvFlags};
use std::io::{self, BufRead, BufReader, IoSliceMut};
use std::mem::MaybeUninit;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The keeper executable's name; it is looked up next to the host's own.
pub const KEEPER_PROGRAM: &str = "panehost-keeper";

/// What a keeper hands over on connection.
#[derive(Debug)]
pub struct Handover {
    /// The PTY master.
    pub master: OwnedFd,
    /// The child's pid (its process group id).
    pub pid: u32,
    /// Set when the child had exited before this connection.
    pub exited: Option<ExitStatus>,
    /// The connection, for exit reports and `release`.
    pub control: UnixStream,
}

/// The keeper program next to this executable.
pub fn keeper_program() -> PathBuf {
    std::env::current_exe()
        .ok()
        .and_then(|exe| exe.parent().map(|dir| dir.join(KEEPER_PROGRAM)))
        .filter(|path| path.exists())
        .unwrap_or_else(|| PathBuf::from(KEEPER_PROGRAM))
}

/// Starts a keeper for `plan` listening on `socket`, waits for it to be
/// ready, and returns the keeper's own pid. Blocking.
///
/// # Errors
/// Fails when the keeper cannot be started or reports an error.
pub fn launch(plan: &LaunchPlan, size: Size, extra_env: &[(String, String)], socket: &Path) -> io::Result<u32> {
    let mut command = Command::new(keeper_program());
    command
        .arg("--socket")
        .arg(socket)
        .arg("--cols")
        .arg(size.cols.to_string())
        .arg("--rows")
        .arg(size.rows.to_string())
        .arg("--cwd")
        .arg(&plan.cwd)
        .arg("--")
        .arg(&plan.program)
        .args(&plan.args)
        .env_clear()
        .envs(plan.env.iter().chain(extra_env).map(|(name, value)| (name, value)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    // The keeper and the pane's program keep the open-file limit the host
    // was started with, not the one it raised for itself.
    // SAFETY: restore_in_child only calls getrlimit and setrlimit.
    unsafe {
        command.pre_exec(open_files::restore_in_child);
    }
    // The keeper calls setsid() itself: its own session and process
    // group, so signals aimed at the host's group or terminal miss it.
    let mut keeper =
        command.spawn().map_err(|err| io::Error::new(err.kind(), format!("cannot start the keeper: {err}")))?;
    let keeper_pid = keeper.id();
    let mut line = String::new();
    let stdout = keeper.stdout.take().ok_or_else(|| io::Error::other("keeper has no stdout"))?;
    BufReader::new(stdout).read_line(&mut line)?;
    match line.trim_end().split_once(' ') {
        Some(("ready", _)) => {
            reap_later(keeper);
            Ok(keeper_pid)
        }
        _ => {
            let _ = keeper.kill();
            let _ = keeper.wait();
            Err(io::Error::other(format!("keeper failed: {}", line.trim_end().trim_start_matches("error "))))
        }
    }
}

/// A keeper lives until its pane is released; whoever waits for it must
/// not block. One small thread per keeper would not scale, so the wait is a
/// pidfd on the runtime (see `exit::reap_keeper`); here the handle is
/// simply dropped (std does not kill or wait on drop).
fn reap_later(keeper: std::process::Child) {
    drop(keeper);
}

/// Connects to the keeper at `socket` and receives the master fd. Blocking.
///
/// # Errors
/// Fails when nothing listens there or the handover is malformed.
pub fn connect(socket: &Path) -> io::Result<Handover> {
    let control = UnixStream::connect(socket)?;
    control.set_read_timeout(Some(std::time::Duration::from_secs(10)))?;
    let mut space = [MaybeUninit::uninit(); rustix::cmsg_space!(ScmRights(1))];
    let mut ancillary = RecvAncillaryBuffer::new(&mut space);
    // The status line is short; read it byte by byte after the first
    // message so nothing beyond the line is consumed.
    let mut first = [0u8; 256];
    let received =
        rustix::net::recvmsg(&control, &mut [IoSliceMut::new(&mut first)], &mut ancillary, RecvFlags::CMSG_CLOEXEC)?;
    let mut master = None;
    for message in ancillary.drain() {
        if let RecvAncillaryMessage::ScmRights(fds) = message {
            for fd in fds {
                master.get_or_insert(fd);
            }
        }
    }
    let master = master.ok_or_else(|| io::Error::other("the keeper sent no fd"))?;
    let mut text = first[..received.bytes].to_vec();
    while !text.contains(&b'\n') {
        let mut byte = [0u8; 1];
        if io::Read::read(&mut &control, &mut byte)? == 0 {
            return Err(io::Error::other("the keeper closed the connection"));
        }
        text.push(byte[0]);
    }
    let newline = text.iter().position(|byte| *byte == b'\n').unwrap_or(text.len());
    let line = String::from_utf8_lossy(&text[..newline]).into_owned();
    let words: Vec<&str> = line.split_whitespace().collect();
    let (pid, exited) = match words.as_slice() {
        ["pane", pid, "running"] => (pid.parse().map_err(io::Error::other)?, None),
        ["pane", pid, "exited", code, signal] => {
            (pid.parse().map_err(io::Error::other)?, Some(parse_exit(code, signal)?))
        }
        _ => return Err(io::Error::other(format!("unexpected keeper line {line:?}"))),
    };
    control.set_read_timeout(None)?;
    Ok(Handover { master, pid, exited, control })
}

/// Parses `<code> <signal|->`.
pub fn parse_exit(code: &str, signal: &str) -> io::Result<ExitStatus> {
    Ok(ExitStatus { code: code.parse().map_err(io::Error::other)?, signal: (signal != "-").then(|| signal.to_owned()) })
}
