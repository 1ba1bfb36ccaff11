//! A child process without a network: it enters a new user namespace and a
//! new network namespace (`unshare(CLONE_NEWUSER | CLONE_NEWNET)`) between
//! fork and exec. The new network namespace has only a loopback interface,
//! and it is down, so nothing the child or its descendants start can reach
//! a registry, a model endpoint or an update server.
//!
//! The user namespace is what lets an unprivileged user create the network
//! namespace; the child's own user and group ids are mapped onto themselves
//! in it, so it sees the ids it would see outside. When the kernel refuses
//! (user namespaces switched off, a limit of zero, a seccomp filter), the
//! spawn fails and [`NamespaceGuard::refusal`] says why: a caller never
//! runs the child with the network instead.

use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::net::UnixStream;
use std::os::unix::process::CommandExt;
use std::process::Command;

/// Tells, after a spawn failed, whether the namespace was refused.
#[derive(Debug)]
pub(crate) struct NamespaceGuard {
    reader: UnixStream,
}

impl NamespaceGuard {
    /// The kernel's refusal, when the failed spawn was one: the child
    /// reports the error of `unshare` before it gives up.
    pub(crate) fn refusal(&self) -> Option<std::io::Error> {
        let mut errno = [0u8; 4];
        self.reader.set_nonblocking(true).ok()?;
        (&self.reader).read_exact(&mut errno).ok()?;
        Some(std::io::Error::from_raw_os_error(i32::from_ne_bytes(errno)))
    }
}

/// Makes `command`'s child enter a new user and network namespace before
/// it executes the program.
///
/// # Errors
/// Fails when the report channel cannot be made.
pub(crate) fn without_network(command: &mut Command) -> std::io::Result<NamespaceGuard> {
    let (reader, writer) = UnixStream::pair()?;
    let uid = rustix::process::getuid().as_raw();
    let gid = rustix::process::getgid().as_raw();
    // Built before the fork: the child must not allocate.
    let uid_map = format!("{uid} {uid} 1\n").into_bytes();
    let gid_map = format!("{gid} {gid} 1\n").into_bytes();
    let flags = rustix::thread::UnshareFlags::NEWUSER | rustix::thread::UnshareFlags::NEWNET;
    // Safety: the closure runs in the forked child before exec. It calls
    // only `unshare`, `open`, `write` and `close` (async-signal-safe system
    // calls) on data prepared before the fork, and allocates nothing. The
    // child is single-threaded, so unsharing its descriptor table is not
    // involved (no CLONE_FILES).
    unsafe {
        command.pre_exec(move || {
            if let Err(errno) = rustix::thread::unshare_unsafe(flags) {
                let _ = rustix::io::write(writer.as_fd(), &errno.raw_os_error().to_ne_bytes());
                return Err(std::io::Error::from_raw_os_error(errno.raw_os_error()));
            }
            // Best effort: unmapped ids still run, as the overflow id.
            write_file(c"/proc/self/setgroups", b"deny");
            write_file(c"/proc/self/uid_map", &uid_map);
            write_file(c"/proc/self/gid_map", &gid_map);
            Ok(())
        });
    }
    Ok(NamespaceGuard { reader })
}

fn write_file(path: &std::ffi::CStr, contents: &[u8]) {
    use rustix::fs::{Mode, OFlags};
    if let Ok(file) = rustix::fs::open(path, OFlags::WRONLY | OFlags::CLOEXEC, Mode::empty()) {
        let _ = rustix::io::write(&file, contents);
    }
}
