//! The process behind the host's socket: which it is (its pid, from the
//! kernel's peer credentials), whether it runs this executable, and ending
//! it.

use super::UsageError;
use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

/// A host process, found through its socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HostProcess {
    pub(crate) pid: u32,
}

impl HostProcess {
    /// The host listening on `socket`, if one answers there. The socket
    /// must be the user's own (as for every client), and so must the host.
    pub(crate) fn find(socket: &Path) -> anyhow::Result<Option<HostProcess>> {
        let uid = rustix::process::geteuid();
        crate::transport::check_socket_dir(socket, uid.as_raw())?;
        let stream = match UnixStream::connect(socket) {
            Ok(stream) => stream,
            Err(error)
                if matches!(error.kind(), std::io::ErrorKind::NotFound | std::io::ErrorKind::ConnectionRefused) =>
            {
                return Ok(None);
            }
            Err(error) => return Err(anyhow::anyhow!("cannot connect to {}: {error}", socket.display())),
        };
        let peer = rustix::net::sockopt::socket_peercred(&stream)?;
        if peer.uid != uid {
            anyhow::bail!(
                "the process listening on {} runs as uid {}, not as this user",
                socket.display(),
                peer.uid.as_raw()
            );
        }
        Ok(Some(HostProcess { pid: peer.pid.as_raw_nonzero().get() as u32 }))
    }

    /// Whether the host runs the same executable file as this process
    /// (`None` when that cannot be told). A host started by an older build
    /// runs the file it started from, even after a rebuild replaced it.
    pub(crate) fn runs_this_executable(&self) -> Option<bool> {
        let theirs = std::fs::metadata(format!("/proc/{}/exe", self.pid)).ok()?;
        let ours = std::fs::metadata("/proc/self/exe").ok()?;
        Some(theirs.dev() == ours.dev() && theirs.ino() == ours.ino())
    }

    /// The executable the host runs, as the kernel names it (` (deleted)`
    /// when it has been replaced).
    pub(crate) fn executable(&self) -> String {
        std::fs::read_link(format!("/proc/{}/exe", self.pid))
            .map(|path| path.display().to_string())
            .unwrap_or_else(|_| "an unknown executable".to_owned())
    }

    /// Ends the host: SIGQUIT leaves every pane with its keeper, for the
    /// next host to take back (as after a crash); SIGTERM closes them all
    /// first. Waits up to `limit` for it to exit.
    pub(crate) fn stop(&self, close_panes: bool, limit: Duration) -> anyhow::Result<()> {
        let pid = i32::try_from(self.pid).ok().and_then(rustix::process::Pid::from_raw);
        let Some(pid) = pid else { anyhow::bail!("pid {} is not a process id", self.pid) };
        let signal = if close_panes { rustix::process::Signal::TERM } else { rustix::process::Signal::QUIT };
        rustix::process::kill_process(pid, signal)?;
        let deadline = Instant::now() + limit;
        while rustix::process::test_kill_process(pid).is_ok() && !is_zombie(self.pid) {
            if Instant::now() >= deadline {
                return Err(UsageError(format!(
                    "the host (pid {}) did not exit within {} s",
                    self.pid,
                    limit.as_secs()
                ))
                .into());
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        Ok(())
    }
}

/// True when `pid` has exited and waits for its parent to reap it.
fn is_zombie(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|stat| stat.rsplit(')').next().unwrap_or("").trim_start().starts_with('Z'))
        .unwrap_or(true)
}
