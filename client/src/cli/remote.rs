//! `--remote DEST`: every client subcommand drives the host of a user on
//! another machine, through OpenSSH; and `panehost up`, what the other
//! machine runs for it.
//!
//! `panehost up` starts the host unless one answers (as every client
//! subcommand does) and prints one line of JSON: the socket, the user's
//! uid, the host's pid and its name. With `--hold` it then waits until its
//! standard input closes: `--remote` runs it as the remote command of the
//! ssh that forwards the socket, so that the forward's remote side ends
//! with the ssh connection, and so that a new forward starts the remote
//! host again if it went away.

use super::context::Context;
use super::host_process::HostProcess;
use super::output::{print_json_text, print_line};
use super::{GlobalArgs, UsageError};
use crate::{RemoteHost, RemoteLink, RemoteTarget};
use std::io::Read as _;
use std::path::Path;
use std::sync::Arc;

/// The environment variable that names the ssh client to run.
pub(crate) const SSH_ENV: &str = "PANEHOST_SSH";

/// Arguments of `up`.
#[derive(Debug, clap::Args)]
pub(crate) struct UpArgs {
    /// After printing, wait until standard input closes.
    #[arg(long)]
    hold: bool,
}

/// The link `--remote` asks for, if it does. The local end of each
/// forward is made beside this user's own socket (`local_socket`).
pub(crate) fn link(globals: &GlobalArgs, local_socket: &Path) -> anyhow::Result<Option<Arc<RemoteLink>>> {
    let Some(destination) = globals.remote.as_deref().filter(|destination| !destination.is_empty()) else {
        if globals.remote_socket.is_some() {
            return Err(
                UsageError("--remote-socket names a socket on another machine: it needs --remote".into()).into()
            );
        }
        return Ok(None);
    };
    let usage = |error: crate::RemoteTargetError| UsageError(error.0);
    let mut target = RemoteTarget::new(destination).map_err(usage)?;
    if let Some(ssh) = std::env::var_os(SSH_ENV).filter(|ssh| !ssh.is_empty()) {
        target = target.ssh_program(ssh).map_err(usage)?;
    }
    if let Some(config) = &globals.ssh_config {
        let config = std::path::absolute(config).unwrap_or_else(|_| config.clone());
        target = target.ssh_config(config).map_err(usage)?;
    }
    if let Some(program) = globals.remote_panehost.as_deref().filter(|program| !program.is_empty()) {
        target = target.remote_program(program).map_err(usage)?;
    }
    if let Some(socket) = &globals.remote_socket {
        target = target.remote_socket(socket).map_err(usage)?;
    }
    if let Some(dir) = local_socket.parent() {
        target = target.local_dir(dir);
    }
    Ok(Some(Arc::new(RemoteLink::new(target))))
}

/// `panehost up [--hold]`: here, or with `--remote`, there.
pub(crate) async fn up(context: &Context, args: UpArgs) -> anyhow::Result<()> {
    if let Some(link) = &context.remote {
        if args.hold {
            return Err(UsageError("--hold is what the other machine runs; leave it out with --remote".into()).into());
        }
        let host = link.remote_host().await?;
        print_json_text(&host.to_line())?;
        return Ok(());
    }
    let client = context.connect().await?;
    let host = HostProcess::find(&context.socket)?
        .ok_or_else(|| anyhow::anyhow!("the host at {} stopped answering", context.socket.display()))?;
    let answer = RemoteHost {
        socket: context.socket.to_string_lossy().into_owned(),
        uid: rustix::process::geteuid().as_raw(),
        pid: host.pid,
        host: client.welcome().host.clone(),
    };
    drop(client);
    print_json_text(&answer.to_line())?;
    if args.hold {
        tokio::task::spawn_blocking(|| {
            let mut stdin = std::io::stdin().lock();
            let mut buffer = [0u8; 256];
            while matches!(stdin.read(&mut buffer), Ok(n) if n > 0) {}
        })
        .await?;
    }
    Ok(())
}

/// `panehost --remote DEST stop [--close-panes]`: `panehost stop` there.
pub(crate) fn stop(link: &RemoteLink, close_panes: bool) -> anyhow::Result<()> {
    let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build()?;
    let args: &[&str] = if close_panes { &["stop", "--close-panes"] } else { &["stop"] };
    let (code, out, err) = runtime.block_on(link.run_remote(args))?;
    for line in out.lines() {
        print_line(&format!("{}: {line}", link.target().destination()))?;
    }
    if code != Some(0) {
        anyhow::bail!(
            "`panehost stop` failed on {} (exit status {}): {}",
            link.target().destination(),
            code.map_or_else(|| "none".to_owned(), |code| code.to_string()),
            err.trim()
        );
    }
    Ok(())
}
