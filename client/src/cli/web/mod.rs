//! `panehost web [--listen ADDR] [--allow-remote] [--host-name NAME]...
//! [--assets DIR]`: a web terminal for the host's panes; `panehost web
//! --install-assets` installs the page's xterm.js packages once.
//!
//! The server prints one URL with a fresh access token on standard output,
//! serves the page (a pane list and an xterm.js terminal view), answers
//! `GET /api/panes`, and bridges `GET /ws` WebSockets to pane
//! subscriptions. docs/WEB.md describes the security model, the reconnect
//! guarantee and the message formats.
//!
//! One file per job:
//! - [`server`]: the routes and the shared state;
//! - [`auth`]: the Host check, the token, the Origin check, and the redaction
//!   of the token from logged URLs;
//! - [`bridge`]: one WebSocket, one pane subscription;
//! - [`pane_api`]: the runtimes, starting and closing panes;
//! - [`watch_relay`]: the host's `watch`, relayed to the page;
//! - [`resize_leases`]: a viewer's resize given back when the last viewer leaves;
//! - [`wire`]: the JSON messages of the WebSocket, both directions;
//! - [`assets`]: finding and serving the page's files;
//! - [`accept`]: accepting connections and serving each over HTTP/1;
//! - [`bounds`]: the timeouts and caps that bound the gateway's clients;
//! - [`connection_table`]: the connections held, who comes in, who makes room;
//! - [`tracked_stream`]: a client's stream, noting its activity;

mod accept;
mod assets;
mod auth;
mod bounds;
mod bridge;
mod connection_table;
mod pane_api;
mod resize_leases;
mod server;
mod tracked_stream;
mod watch_relay;
mod wire;

use super::context::Context;
use super::UsageError;
use anyhow::Context as _;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;

/// Arguments of `web`.
#[derive(Debug, clap::Args)]
pub(crate) struct WebArgs {
    /// The address to listen on; port 0 picks a free port.
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    /// Allow an address other than loopback. Anyone who can reach the port
    /// and holds the token controls the panes; there is no TLS.
    #[arg(long)]
    allow_remote: bool,
    /// A name the page is reached by from elsewhere (with --allow-remote),
    /// such as this machine's DNS name; requests naming any other host are
    /// refused. May be given several times.
    #[arg(long = "host-name", value_name = "NAME", requires = "allow_remote")]
    host_names: Vec<String>,
    /// A directory with the page (index.html, app.js, ...) and its
    /// node_modules, read from disk: for working on the page [default:
    /// the page built into panehost, and the packages --install-assets
    /// installed]
    #[arg(long, value_name = "DIR")]
    assets: Option<PathBuf>,
    /// Install the page's xterm.js packages (with npm, into
    /// $XDG_DATA_HOME/panehost/web or ~/.local/share/panehost/web), then
    /// exit. Needed once, before the first `panehost web`.
    #[arg(long, conflicts_with_all = ["assets", "listen", "allow_remote", "host_names"])]
    install_assets: bool,
}

/// Serves until interrupted (SIGINT or SIGTERM).
pub(crate) async fn run(context: &Context, args: WebArgs) -> anyhow::Result<()> {
    if args.install_assets {
        let dir = tokio::task::spawn_blocking(assets::install_packages).await??;
        println!("installed the web terminal's packages in {}", dir.display());
        return Ok(());
    }
    check_listen_address(args.listen, args.allow_remote)?;
    let assets = assets::Assets::locate(args.assets.as_deref());
    match (assets.problem(), assets.packages_dir()) {
        (Some(problem), _) => eprintln!("warning: {problem}; the page will answer 500 until that is fixed"),
        (None, Some(dir)) => eprintln!("panehost web: the page's packages are served from {}", dir.display()),
        (None, None) => {}
    }
    let host = server::HostLink::new(context.connector()?);
    // Fail early, and start the host now when none answers.
    host.client().await.context("cannot reach the host")?;
    let token = auth::Token::generate().context("cannot make an access token")?;
    // After the host is reached; a host started later, after that one ended,
    // is given back the limit this process had (`open_file_limit`).
    let caps = bounds::Caps::for_descriptor_limit(crate::open_file_limit::raise_to_hard_limit());
    let table = connection_table::ConnectionTable::new(caps);

    let listener = accept::listen(args.listen).with_context(|| format!("cannot listen on {}", args.listen))?;
    let local = listener.local_addr()?;
    let auth = auth::Auth::new(token, local, &args.host_names);
    // The token travels in the fragment: the browser never sends it; the
    // page keeps it for this origin only.
    let url = format!("http://{}/#token={}", display_address(local), auth.token());
    let state = Arc::new(server::AppState { auth, assets, host, resize_leases: Default::default() });
    let router = server::router(Arc::clone(&state));

    {
        let mut stdout = std::io::stdout().lock();
        writeln!(stdout, "{url}")?;
        stdout.flush()?;
    }
    eprintln!(
        "panehost web: serving the panes of the host at {} on http://{}/ until interrupted",
        context.host_description(),
        display_address(local)
    );
    eprintln!("panehost web: {}", describe_bounds(table.caps()));
    if !local.ip().is_loopback() {
        eprintln!("warning: listening on {}, beyond this machine, without TLS", local.ip());
    }

    tokio::select! {
        () = accept::serve(listener, router, table) => {}
        signal = stop_signal() => {
            tracing::debug!(signal, "stopping");
        }
    }
    Ok(())
}

/// Loopback only, unless `--allow-remote`.
fn check_listen_address(listen: SocketAddr, allow_remote: bool) -> Result<(), UsageError> {
    if listen.ip().is_loopback() || allow_remote {
        Ok(())
    } else {
        Err(UsageError(format!(
            "{listen} is not a loopback address; pass --allow-remote to listen beyond this machine"
        )))
    }
}

/// The bounds in force, in one line for standard error.
fn describe_bounds(caps: bounds::Caps) -> String {
    format!(
        "at most {} connections, {} per address; a request's head within {} s; \
         an answer that moves no byte for {} s is dropped",
        caps.total,
        caps.per_peer,
        bounds::HEADER_READ_TIMEOUT.as_secs(),
        bounds::IDLE_TIMEOUT.as_secs()
    )
}

/// `127.0.0.1:8080`, `[::1]:8080`.
fn display_address(address: SocketAddr) -> String {
    address.to_string()
}

/// Waits for SIGINT or SIGTERM and names it.
async fn stop_signal() -> &'static str {
    use tokio::signal::unix::{signal, SignalKind};
    let (Ok(mut interrupt), Ok(mut terminate)) = (signal(SignalKind::interrupt()), signal(SignalKind::terminate()))
    else {
        return std::future::pending().await;
    };
    tokio::select! {
        _ = interrupt.recv() => "SIGINT",
        _ = terminate.recv() => "SIGTERM",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_loopback_without_allow_remote() {
        assert!(check_listen_address("127.0.0.1:0".parse().unwrap(), false).is_ok());
        assert!(check_listen_address("[::1]:8080".parse().unwrap(), false).is_ok());
        let refused = check_listen_address("0.0.0.0:8080".parse().unwrap(), false).unwrap_err();
        assert!(refused.0.contains("--allow-remote"), "{refused}");
        assert!(check_listen_address("192.0.2.7:80".parse().unwrap(), false).is_err());
        assert!(check_listen_address("0.0.0.0:8080".parse().unwrap(), true).is_ok());
    }

    #[test]
    fn addresses_print_as_url_authorities() {
        assert_eq!(display_address("127.0.0.1:8080".parse().unwrap()), "127.0.0.1:8080");
        assert_eq!(display_address("[::1]:8080".parse().unwrap()), "[::1]:8080");
    }
}
