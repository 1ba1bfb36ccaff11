//! The real kimi-cli from PyPI, installed as the live proof installs it (a
//! virtual environment of a Python 3.13, its pip, the executable exposed
//! through a link): 1.52.0 is refused, and a receipt taken on 1.50.0 is
//! void once pip upgrades it in place to 1.51.0, whose launcher is
//! byte-identical.
//!
//! These need the network (PyPI) and a Python 3.13
//! (`$PANEHOST_PYTHON_3_13`, `python3.13` on PATH, or pyenv's
//! `versions/3.13.*`), so they are ignored by default:
//!
//! ```sh
//! cargo build -p panehost-host
//! cargo test -p panehost-tests --test live_kimi_versions -- --ignored
//! ```
//!
//! The environments are kept in `$PANEHOST_TEST_CLI_CACHE` (default
//! `~/.cache/panehost/test-clis`); the upgraded one is made afresh each run.

mod endpoint_client;
mod support;

use endpoint_client::Endpoint;
use panehost_ipc::{Encoding, Request, Response, RuntimeInfo, StartParams};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use support::*;

fn runtime(conn: &mut Connection, id: &str) -> RuntimeInfo {
    let Response::Runtimes { runtimes } = conn.ok(Request::Runtimes {}) else { panic!("not runtimes") };
    runtimes.into_iter().find(|runtime| runtime.id == id).unwrap_or_else(|| panic!("{id} is not listed"))
}

fn cache() -> PathBuf {
    let dir = std::env::var_os("PANEHOST_TEST_CLI_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").expect("HOME")).join(".cache/panehost/test-clis"));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn python_minor(python: &Path) -> Option<String> {
    let output = Command::new(python)
        .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// A Python 3.13, found as the live proof finds it.
fn python_3_13() -> PathBuf {
    let mut candidates: Vec<PathBuf> =
        std::env::var_os("PANEHOST_PYTHON_3_13").map(PathBuf::from).into_iter().collect();
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|dir| dir.join("python3.13")));
    }
    let pyenv = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".pyenv")));
    if let Some(Ok(entries)) = pyenv.map(|root| std::fs::read_dir(root.join("versions"))) {
        let mut found: Vec<PathBuf> = entries
            .flatten()
            .filter(|entry| entry.file_name().to_string_lossy().starts_with("3.13."))
            .map(|entry| entry.path().join("bin/python3.13"))
            .collect();
        found.sort();
        candidates.extend(found);
    }
    candidates
        .into_iter()
        .find(|path| path.is_file() && python_minor(path).as_deref() == Some("3.13"))
        .expect("no Python 3.13: set PANEHOST_PYTHON_3_13")
}

fn run(command: &mut Command) {
    let output = command.stdin(Stdio::null()).output().unwrap();
    assert!(output.status.success(), "{command:?}: {}", String::from_utf8_lossy(&output.stderr));
}

/// `VENV/bin/pip install kimi-cli==VERSION`, making the environment first
/// when it is missing; returns the directory the host's PATH gets (a link
/// to the executable only, as the live proof exposes it).
fn install(venv: &Path, version: &str) -> PathBuf {
    if !venv.join("bin/pip").exists() {
        run(Command::new(python_3_13()).args(["-m", "venv"]).arg(venv));
    }
    let spec = format!("kimi-cli=={version}");
    run(Command::new(venv.join("bin/pip")).args(["install", "--disable-pip-version-check", "-q", &spec]));
    let exposed = venv.join("exposed");
    std::fs::create_dir_all(&exposed).unwrap();
    let link = exposed.join("kimi");
    if std::fs::read_link(&link).is_err() {
        std::os::unix::fs::symlink(venv.join("bin/kimi"), &link).unwrap();
    }
    exposed
}

fn path_with(exposed: &Path) -> String {
    format!("{}:/usr/bin:/bin", exposed.display())
}

#[test]
#[ignore = "installs kimi-cli 1.52.0 from PyPI"]
fn kimi_1_52_0_from_pypi_is_refused() {
    let exposed = install(&cache().join("kimi-1.52.0"), "1.52.0");
    let host = TestHost::start_with_env(&[("PATH", &path_with(&exposed))]);
    let mut conn = host.connect(Encoding::Json);
    let info = runtime(&mut conn, "kimi");
    assert_eq!(info.version.as_deref(), Some("kimi, version 1.52.0"), "{info:?}");
    assert_eq!(info.package.as_deref(), Some("pypi kimi-cli 1.52.0"), "{info:?}");
    assert!(info.version_refused.is_some(), "{info:?}");
    assert_eq!((info.readiness.as_str(), info.readiness_gate.as_deref()), ("not_ready", Some("version")));
    let refused = conn.call(Request::Start(StartParams { runtime: "kimi".into(), ..StartParams::default() }));
    let refused = refused.unwrap_err();
    assert_eq!(refused.limitation.as_deref(), Some("VERSION_REFUSED"), "{refused}");
    let Response::Panes { panes } = conn.ok(Request::List { labels: Default::default() }) else { panic!() };
    assert!(panes.is_empty(), "nothing was spawned: {panes:?}");
    host.stop();
}

#[test]
#[ignore = "installs kimi-cli 1.50.0 and 1.51.0 from PyPI"]
fn a_kimi_receipt_is_void_after_pip_upgrades_it_in_place() {
    let venv = cache().join("kimi-upgraded");
    let _ = std::fs::remove_dir_all(&venv);
    let exposed = install(&venv, "1.50.0");
    let endpoint = Endpoint::start();
    let host = TestHost::start_with_env(&[("PATH", &path_with(&exposed))]);
    // kimi's settings in the host's HOME: the endpoint as an
    // OpenAI-compatible provider, its model the default (as the live proof).
    let config = host.home.join(".kimi/config.toml");
    std::fs::create_dir_all(config.parent().unwrap()).unwrap();
    std::fs::write(
        &config,
        format!(
            "default_model = \"fixture\"\ntelemetry = false\n\n[providers.fixture]\ntype = \"openai_legacy\"\n\
             base_url = \"http://127.0.0.1:{}/v1\"\napi_key = \"x\"\n\n[models.fixture]\nprovider = \"fixture\"\n\
             model = \"test-model\"\nmax_context_size = 128000\n",
            endpoint.port
        ),
    )
    .unwrap();
    let mut conn = host.connect(Encoding::Json);
    let before = runtime(&mut conn, "kimi");
    assert_eq!(before.package.as_deref(), Some("pypi kimi-cli 1.50.0"), "{before:?}");
    let probe = Request::ProbeRuntime { runtime: "kimi".into(), model: None, accept_weaker_boundary: true };
    let Response::Receipt(receipt) = conn.ok(probe) else { panic!() };
    assert!(receipt.passed, "{receipt:?}");
    assert!(runtime(&mut conn, "kimi").receipt_valid);

    let launcher = std::fs::read(venv.join("bin/kimi")).unwrap();
    install(&venv, "1.51.0");
    assert_eq!(std::fs::read(venv.join("bin/kimi")).unwrap(), launcher, "pip left the launcher byte-identical");
    let after = runtime(&mut conn, "kimi");
    assert_eq!(after.sha256, before.sha256, "the launcher's identity alone would not tell: {after:?}");
    assert_eq!(after.package.as_deref(), Some("pypi kimi-cli 1.51.0"), "{after:?}");
    assert_eq!(after.version.as_deref(), Some("kimi, version 1.51.0"), "{after:?}");
    assert!(!after.receipt_valid, "{after:?}");
    assert_eq!(after.readiness_gate.as_deref(), Some("receipt"), "{after:?}");
    host.stop();
}
