//! The resolved global options, and how client subcommands connect.

use super::{GlobalArgs, HostLaunch};
use crate::{
    connect_or_start, connect_or_start_with, AutostartCommand, Client, ClientError, ClientOptions, Connector,
    RawConnection, RemoteLink,
};
use anyhow::Context as _;
use panehost_ipc::socket_path::check_private_dir;
use panehost_ipc::{Encoding, ErrorCode, HostClaim};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// The name the host logs for this command's connections.
const CLIENT_NAME: &str = concat!("panehost-cli ", env!("CARGO_PKG_VERSION"));

/// Socket path, state directory and log filter, with defaults applied.
#[derive(Debug, Clone)]
pub(crate) struct Context {
    pub(crate) socket: PathBuf,
    pub(crate) state_dir: PathBuf,
    pub(crate) log_filter: Option<String>,
    /// With `--remote`: the link to the host on the other machine, which
    /// every connection of the command goes through instead of `socket`.
    pub(crate) remote: Option<Arc<RemoteLink>>,
}

impl Context {
    /// Applies the defaults and makes both paths absolute, so that a host
    /// started on demand (which may change directory) sees the same ones.
    pub(crate) fn resolve(globals: &GlobalArgs) -> anyhow::Result<Context> {
        let socket = match &globals.socket {
            Some(socket) => socket.clone(),
            None => panehost_ipc::socket_path::default_socket_path(rustix::process::getuid().as_raw()),
        };
        let state_dir = match &globals.state_dir {
            Some(state_dir) => state_dir.clone(),
            None => default_state_dir(std::env::var_os("XDG_STATE_HOME"), std::env::var_os("HOME"))?,
        };
        let socket = std::path::absolute(&socket)
            .with_context(|| format!("cannot resolve the socket path {}", socket.display()))?;
        let remote = super::remote::link(globals, &socket)?;
        Ok(Context {
            socket,
            state_dir: std::path::absolute(&state_dir)
                .with_context(|| format!("cannot resolve the state directory {}", state_dir.display()))?,
            log_filter: globals.log.clone().filter(|filter| !filter.is_empty()),
            remote,
        })
    }

    /// Points this command at the state directory's host when there is no
    /// socket where it looked but the host that holds the state directory
    /// (`panehost_ipc::host_claim`) runs and listens on another: two shells
    /// that work out different sockets (one with `XDG_RUNTIME_DIR`, one
    /// without) reach the same host instead of starting a second one,
    /// which the state directory's lock would refuse. Says so on standard
    /// error. The claimed socket's directory must pass the checks every
    /// socket's does, and the state directory must be private; the
    /// connection then makes the checks it always makes. Nothing is
    /// connected to here: a host sees no extra connection.
    pub(crate) fn towards_state_dirs_host(mut self) -> Context {
        if self.remote.is_some() || self.socket.exists() {
            return self;
        }
        let uid = rustix::process::getuid().as_raw();
        if check_private_dir(&self.state_dir, uid).is_err() {
            return self;
        }
        let Some(claim) = HostClaim::read(&self.state_dir) else { return self };
        let private = claim.socket.parent().is_some_and(|dir| check_private_dir(dir, uid).is_ok());
        let running = Path::new("/proc").join(claim.pid.to_string()).exists();
        if claim.socket == self.socket || !private || !running || !claim.socket.exists() {
            return self;
        }
        eprintln!(
            "note: there is no host at {}; the host of the state directory {} (pid {}) listens on {}, so this \
             command uses it",
            self.socket.display(),
            self.state_dir.display(),
            claim.pid,
            claim.socket.display()
        );
        self.socket = claim.socket;
        self
    }

    /// What `panehost host` runs with.
    pub(crate) fn host_launch(&self) -> HostLaunch {
        HostLaunch {
            socket: self.socket.clone(),
            state_dir: self.state_dir.clone(),
            log_filter: self.log_filter.clone(),
        }
    }

    /// The host this command talks to, for people: its socket, or the
    /// machine it is reached on.
    pub(crate) fn host_description(&self) -> String {
        match &self.remote {
            Some(link) => format!("{} (through ssh)", link.target().destination()),
            None => self.socket.display().to_string(),
        }
    }

    /// Sends this command's own log to standard error, when a filter was
    /// given.
    pub(crate) fn init_logging(&self) {
        let Some(filter) = &self.log_filter else { return };
        match tracing_subscriber::EnvFilter::try_new(filter) {
            Ok(filter) => {
                let _ = tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).try_init();
            }
            Err(error) => eprintln!("warning: ignoring the log filter {filter:?}: {error}"),
        }
    }

    /// This executable, run as `panehost --socket S --state-dir D host`,
    /// logging to `<state dir>/host.log`; its start is announced on
    /// standard error.
    pub(crate) fn autostart_command(&self) -> anyhow::Result<AutostartCommand> {
        let program = std::env::current_exe().context("cannot find this executable to start the host")?;
        let mut command = AutostartCommand::new(program)
            .args([
                OsString::from("--socket"),
                self.socket.clone().into_os_string(),
                OsString::from("--state-dir"),
                self.state_dir.clone().into_os_string(),
                OsString::from("host"),
            ])
            .log_file(self.state_dir.join("host.log"))
            .announce(format!(
                "panehost: started a host (pid {{pid}}) at {}; `panehost stop` ends it",
                self.socket.display()
            ));
        if let Some(filter) = &self.log_filter {
            command = command.env("PANEHOST_LOG", filter);
        }
        Ok(command)
    }

    /// Options of this command's connections.
    pub(crate) fn client_options(&self, encoding: Encoding) -> ClientOptions {
        ClientOptions { encoding, ..ClientOptions::named(CLIENT_NAME) }
    }

    /// Connects, starting the host when none answers. A host that runs
    /// another build of panehost than this command (started before a
    /// rebuild or an upgrade) is used, with a note on standard error that
    /// says how to replace it.
    pub(crate) async fn connect(&self) -> anyhow::Result<Client> {
        if let Some(link) = &self.remote {
            return Ok(link.connect(&self.client_options(Encoding::Bincode)).await?);
        }
        let command = self.autostart_command()?;
        let client = match connect_or_start(&self.socket, &self.client_options(Encoding::Bincode), &command).await {
            Ok(client) => client,
            Err(ClientError::Refused { code, message, .. }) if code == ErrorCode::ProtocolMismatch.as_str() => {
                // A host of an older or newer revision (a build from before
                // a rebuild or an upgrade) refuses this command's bincode.
                anyhow::bail!(
                    "the host at {} runs another build of panehost and refused this one ({message}); \
                     `panehost stop` ends it, keeping its panes, and the next command starts this one",
                    self.socket.display()
                );
            }
            Err(other) => return Err(other.into()),
        };
        self.note_another_build(&client);
        Ok(client)
    }

    /// The host on the other end of `client` (the kernel named its process
    /// when the connection was made).
    fn note_another_build(&self, client: &Client) {
        let Some(pid) = client.host_pid() else { return };
        let host = super::host_process::HostProcess { pid };
        if host.runs_this_executable() == Some(false) {
            eprintln!(
                "note: the host at {} (pid {}) runs another build of panehost ({}); `panehost stop` ends it, \
                 keeping its panes, and the next command starts this one",
                self.socket.display(),
                host.pid,
                host.executable()
            );
        }
    }

    /// Connects with the JSON encoding and hands frames through untouched,
    /// starting the host when none answers.
    pub(crate) async fn connect_raw_json(&self) -> anyhow::Result<RawConnection> {
        if let Some(link) = &self.remote {
            return Ok(link.connect_raw(&self.client_options(Encoding::Json)).await?);
        }
        let command = self.autostart_command()?;
        let options = self.client_options(Encoding::Json);
        let socket: &Path = &self.socket;
        Ok(connect_or_start_with(&command, || RawConnection::connect(socket, &options)).await?)
    }

    /// Opens connections after a loss the way [`Context::connect`] does.
    pub(crate) fn connector(&self) -> anyhow::Result<Connector> {
        if let Some(link) = &self.remote {
            return Ok(link.connector(self.client_options(Encoding::Bincode)));
        }
        Ok(Connector::autostart(self.socket.clone(), self.client_options(Encoding::Bincode), self.autostart_command()?))
    }
}

/// `$XDG_STATE_HOME/panehost` when that is an absolute path, else
/// `$HOME/.local/state/panehost`.
fn default_state_dir(xdg_state_home: Option<OsString>, home: Option<OsString>) -> anyhow::Result<PathBuf> {
    if let Some(state_home) = xdg_state_home.map(PathBuf::from).filter(|path| path.is_absolute()) {
        return Ok(state_home.join("panehost"));
    }
    match home.filter(|home| !home.is_empty()) {
        Some(home) => Ok(PathBuf::from(home).join(".local/state/panehost")),
        None => anyhow::bail!("neither XDG_STATE_HOME nor HOME is set; pass --state-dir"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn state_dir_prefers_an_absolute_xdg_state_home() {
        let dir = default_state_dir(Some("/s".into()), Some("/home/u".into())).unwrap();
        assert_eq!(dir, PathBuf::from("/s/panehost"));
        let dir = default_state_dir(Some("relative".into()), Some("/home/u".into())).unwrap();
        assert_eq!(dir, PathBuf::from("/home/u/.local/state/panehost"));
        assert!(default_state_dir(None, None).is_err());
    }

    #[test]
    fn the_started_host_gets_the_same_paths() {
        let context = Context {
            socket: PathBuf::from("/run/s.sock"),
            state_dir: PathBuf::from("/state"),
            log_filter: None,
            remote: None,
        };
        let command = context.autostart_command().unwrap();
        let args: Vec<_> = command.args.iter().map(|arg| arg.to_str().unwrap()).collect();
        assert_eq!(args, ["--socket", "/run/s.sock", "--state-dir", "/state", "host"]);
        assert_eq!(command.log_file, Some(PathBuf::from("/state/host.log")));
    }
}
