//! Running the host: prepare the socket, accept connections, shut down.

use crate::config::CountLimits;
use crate::limits;
use crate::memory_trim;
use crate::open_files;
use crate::pane::{Keepers, PaneCgroups, PaneLimits};
use crate::registry::Registry;
use crate::restore;
use crate::runtime_gate::RuntimeGate;
use crate::server::answer_budget::AnswerBudget;
use crate::server::connection;
use crate::server::host_state::HostState;
use crate::store::host_lock::HostLock;
use crate::store::private_dir::ensure_private_dir;
use crate::store::receipts::ReceiptStore;
use crate::store::records::RecordStore;
use anyhow::{bail, Context};
use interprocess::local_socket::tokio::{Listener as LocalSocketListener, Stream};
use interprocess::local_socket::traits::tokio::{Listener as _, Stream as _};
use interprocess::local_socket::{GenericFilePath, ListenerOptions, ToFsName};
use interprocess::os::unix::local_socket::ListenerOptionsExt;
use panehost_adapters::{config, runtimes, Catalog, HostEnvironment};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use tokio::signal::unix::{signal, SignalKind};

/// How a host runs.
#[derive(Debug, Clone)]
pub struct HostConfig {
    /// Where to listen.
    pub socket: PathBuf,
    /// Where the host keeps its state.
    pub state_dir: PathBuf,
    /// Buffer sizes of new panes.
    pub pane_limits: PaneLimits,
    /// How many panes and subscriptions the host holds at most.
    pub count_limits: CountLimits,
    /// How many panes one keeper process is given.
    pub panes_per_keeper: usize,
    /// Whether each pane gets a control group of its own where the host
    /// may make one (`pane::cgroups`).
    pub pane_cgroups: bool,
    /// A `tracing` filter; `info` when absent.
    pub log_filter: Option<String>,
    /// The custom runtimes file; `$XDG_CONFIG_HOME/panehost/config.toml`
    /// (else `~/.config/panehost/config.toml`) when absent.
    pub runtimes_config: Option<PathBuf>,
}

/// Runs the host in the foreground until SIGTERM or SIGINT, then closes
/// every pane and removes the socket. On SIGQUIT it exits without closing
/// any pane: they stay with their keepers for the next host (an upgrade).
///
/// # Errors
/// Fails when the socket directory is unsafe, another host already
/// uses the state directory or listens on the socket, or the socket
/// cannot be created.
pub fn run(config: HostConfig) -> anyhow::Result<()> {
    let filter =
        config.log_filter.clone().or_else(|| std::env::var("PANEHOST_LOG").ok()).unwrap_or_else(|| "info".into());
    let _ = tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_new(&filter).unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .with_ansi(rustix::termios::isatty(std::io::stderr()))
        .try_init();
    crate::contained::install_panic_hook();
    crate::jitter::install_from_env()?;
    for name in crate::config::retired_variables_set() {
        tracing::warn!(variable = name, "ignored: the terminal model keeps no scrollback; see `history`");
    }
    match open_files::raise() {
        Ok(raised) if raised.from != raised.to => {
            tracing::info!(from = ?raised.from, to = ?raised.to, "open-file limit raised")
        }
        Ok(_) => {}
        Err(err) => tracing::warn!(%err, "cannot raise the open-file limit; panes may run out of descriptors"),
    }
    let runtime =
        tokio::runtime::Builder::new_multi_thread().enable_all().build().context("starting the async runtime")?;
    runtime.block_on(serve(config))
}

async fn serve(config: HostConfig) -> anyhow::Result<()> {
    // Before the socket exists: a client that stops the host the moment
    // it answers must find its handlers in place (the default action
    // would end the host without closing its panes).
    let mut terminate = signal(SignalKind::terminate()).context("SIGTERM handler")?;
    let mut interrupt = signal(SignalKind::interrupt()).context("SIGINT handler")?;
    let mut hand_over = signal(SignalKind::quit()).context("SIGQUIT handler")?;
    let uid = rustix::process::geteuid().as_raw();
    let socket_dir = config.socket.parent().context("the socket path has no directory")?;
    ensure_private_dir(socket_dir, uid).context("socket directory")?;
    ensure_private_dir(&config.state_dir, uid).context("state directory")?;
    // Before any record is read, and for the host's life: one host per
    // state directory, whatever socket each was given.
    let state_lock = HostLock::acquire(&config.state_dir, &config.socket)?;
    tracing::debug!(lock = %state_lock.path().display(), "state directory locked");
    claim_socket_path(&config.socket).await?;

    let name = config.socket.as_path().to_fs_name::<GenericFilePath>().context("socket path")?;
    let listener = ListenerOptions::new()
        .name(name)
        .mode(0o600)
        .create_tokio()
        .with_context(|| format!("listening on {}", config.socket.display()))?;
    tracing::info!(socket = %config.socket.display(), pid = std::process::id(), "host listening");

    let records = RecordStore::open(&config.state_dir).context("pane records")?;
    let host = Arc::new(HostState {
        registry: Registry::new(),
        catalog: Arc::new(catalog(host_environment(&config.state_dir), config.runtimes_config.as_deref())),
        runtime_gate: RuntimeGate::new(),
        pane_limits: config.pane_limits,
        count_limits: config.count_limits,
        answer_budget: AnswerBudget::new(config.count_limits.answer_budget_bytes),
        starting: std::sync::atomic::AtomicUsize::new(0),
        keepers: Arc::new(Keepers::new(
            records.keepers_dir(),
            config.panes_per_keeper,
            vec![("PANEHOST_SOCKET".to_owned(), config.socket.display().to_string())],
            config.pane_cgroups.then(|| PaneCgroups::find(&config.state_dir)).flatten(),
        )),
        records,
        receipts: ReceiptStore::open(&config.state_dir).context("completion receipts")?,
        restored: tokio::sync::watch::Sender::new(false),
    });
    // Connections are served while the last host's panes come back (a
    // restore may start CLIs and probe their versions, which takes
    // seconds); their requests wait until it is done.
    let restoring = {
        let host = Arc::clone(&host);
        tokio::spawn(async move {
            // Requests wait for the restore, so it ends whatever happens
            // in it: a restore that failed is logged, and the host serves
            // the panes it has.
            let restore = tokio::spawn(restore::restore_panes(Arc::clone(&host)));
            if let Err(err) = restore.await {
                tracing::error!(%err, "the restore of the last host's panes failed; serving the panes restored so far");
            }
            host.restored.send_replace(true);
        })
    };
    let trimmer = tokio::spawn(memory_trim::run());
    // Connections are accepted on a worker, not on the thread that runs
    // this function: a connection's task then starts on the thread that
    // accepted it, with no other thread to wake.
    let accepting = tokio::spawn(accept_connections(listener, Arc::clone(&host)));
    let (leave_panes, signal) = tokio::select! {
        _ = terminate.recv() => (false, "SIGTERM"),
        _ = interrupt.recv() => (false, "SIGINT"),
        _ = hand_over.recv() => (true, "SIGQUIT"),
    };
    tracing::info!(signal, "signalled to end");
    // No connection is taken from here on: the listener closes with the
    // task.
    accepting.abort();
    let _ = accepting.await;
    trimmer.abort();
    // A pane being restored is closed (or handed on) with the others.
    let _ = restoring.await;
    if leave_panes {
        // An upgrade: the panes stay with their keepers, and the next host
        // on this state directory takes them back.
        tracing::info!(panes = host.registry.all().len(), "exiting; panes stay with their keepers");
        let _ = std::fs::remove_file(&config.socket);
        drop(state_lock);
        return Ok(());
    }
    tracing::info!("shutting down: closing every pane");
    let closing: Vec<_> = host
        .registry
        .all()
        .into_iter()
        .map(|pane| {
            let host = Arc::clone(&host);
            tokio::spawn(async move {
                let _ = host.close_pane(&pane).await;
            })
        })
        .collect();
    for task in closing {
        let _ = task.await;
    }
    host.keepers.remove_cgroups();
    let _ = std::fs::remove_file(&config.socket);
    // Held until every pane is closed and its record removed.
    drop(state_lock);
    Ok(())
}

/// Serves every connection the listener accepts, until aborted.
async fn accept_connections(listener: LocalSocketListener, host: Arc<HostState>) {
    let mut connection_ids = 0u64;
    loop {
        match listener.accept().await {
            Ok(stream) => {
                connection_ids += 1;
                let serving = connection::serve(stream, Arc::clone(&host), connection_ids);
                tokio::spawn(async move {
                    serving.await;
                    // What a burst of connections held (buffers, frames,
                    // tasks) goes back to the system once they have
                    // ended; many ends make one trim.
                    memory_trim::request();
                });
            }
            Err(err) => {
                // Out of fds and the like: keep serving the others.
                tracing::warn!(%err, "accept failed");
                tokio::time::sleep(limits::ACCEPT_RETRY_PAUSE).await;
            }
        }
    }
}

/// The built-in runtimes and the operator's custom ones. Each problem in the
/// configuration file is logged with its line; a bad runtime is left out and
/// the others load.
pub(crate) fn catalog(environment: HostEnvironment, config_path: Option<&Path>) -> Catalog {
    let path = config_path.map(Path::to_path_buf).unwrap_or_else(|| config::default_config_path(&environment));
    let mut descriptors = runtimes::built_in();
    let built_in_ids: Vec<&str> = descriptors.iter().map(|descriptor| descriptor.id.as_str()).collect();
    let load = config::load_file(&path, &built_in_ids);
    for problem in &load.problems {
        tracing::warn!(config = %path.display(), "{problem}");
    }
    if !load.runtimes.is_empty() {
        tracing::info!(config = %path.display(), count = load.runtimes.len(), "custom runtimes loaded");
    }
    descriptors.extend(load.runtimes);
    Catalog::new(descriptors, environment)
}

/// The environment launches are built from, with this executable as the
/// command hooks run to reach the host (`panehost notify`), and the state
/// directory's `hooks` as the place for the files that carry hooks.
fn host_environment(state_dir: &Path) -> HostEnvironment {
    let mut environment = HostEnvironment::capture();
    environment.notify_command = std::env::current_exe().ok();
    environment.hook_dir = Some(state_dir.join("hooks"));
    environment
}

/// Refuses to start when a host already answers on `socket`; removes a
/// stale socket file that nobody listens on.
async fn claim_socket_path(socket: &Path) -> anyhow::Result<()> {
    if !socket.exists() {
        return Ok(());
    }
    let name = socket.to_fs_name::<GenericFilePath>().context("socket path")?;
    if Stream::connect(name).await.is_ok() {
        bail!("a host already listens on {}", socket.display());
    }
    std::fs::remove_file(socket).with_context(|| format!("removing the stale socket {}", socket.display()))?;
    Ok(())
}
