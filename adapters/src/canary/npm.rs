//! Running npm for the canary, through the probe runner (timeout, process
//! group ended). Steps that reach the registry run with the caller's own
//! environment, so that npm finds its cache, its `.npmrc`, proxies and
//! certificates (they run no code of the package: installs ignore
//! scripts). The offline step that runs the package's install scripts gets
//! the probe runner's scrubbed environment and scratch home instead.

use crate::environment::HostEnvironment;
use crate::probe::{run_probe_capturing, ProbeError, ProbeNetwork, ProbeRequest, ProbeRun};
use crate::resolve::resolve_executable;
use std::path::PathBuf;
use std::time::Duration;

/// Set for every npm command: no update check, and no self-update of a
/// CLI whose scripts run.
const QUIET: &[(&str, &str)] = &[("npm_config_update_notifier", "false"), ("DISABLE_AUTOUPDATER", "1")];

/// Whether an npm command reaches the registry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NpmStep {
    /// It talks to the registry: the caller's environment and network.
    Registry,
    /// It runs the package's scripts: a scrubbed environment, a scratch
    /// home, and a private network namespace.
    Offline,
}

/// How npm is run.
#[derive(Debug, Clone)]
pub struct NpmRun<'a> {
    /// The npm executable.
    pub npm: PathBuf,
    /// `PATH` for npm (it needs `node`).
    pub search_path: Option<&'a str>,
    /// Variables for registry steps: the caller's, then [`QUIET`].
    pub environment: Vec<(String, String)>,
    /// How long one npm command may take.
    pub timeout: Duration,
}

impl<'a> NpmRun<'a> {
    /// npm as found on the `PATH` of `environment`.
    ///
    /// # Errors
    /// Fails when npm is not on that `PATH`.
    pub fn from_environment(environment: &'a HostEnvironment, timeout: Duration) -> Result<NpmRun<'a>, String> {
        let search_path = environment.get("PATH");
        let npm = resolve_executable("npm", search_path, &[]).ok_or("npm is not on PATH")?;
        let mut variables: Vec<(String, String)> =
            environment.variables.iter().map(|(name, value)| (name.clone(), value.clone())).collect();
        variables.extend(quiet());
        Ok(NpmRun { npm, search_path, environment: variables, timeout })
    }
}

fn quiet() -> Vec<(String, String)> {
    QUIET.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect()
}

/// Runs `npm args` as `step` says.
///
/// # Errors
/// As [`run_probe_capturing`].
pub fn npm_command(npm: &NpmRun<'_>, args: &[&str], step: NpmStep) -> Result<ProbeRun, ProbeError> {
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    let offline = quiet();
    let (extra_env, network) = match step {
        NpmStep::Registry => (&npm.environment, ProbeNetwork::Shared),
        NpmStep::Offline => (&offline, ProbeNetwork::Private),
    };
    run_probe_capturing(&ProbeRequest {
        program: &npm.npm,
        args: &args,
        search_path: npm.search_path,
        extra_env,
        timeout: npm.timeout,
        network,
    })
}

/// The version the registry publishes as `package`'s latest
/// (`npm view PACKAGE version`).
///
/// # Errors
/// npm's own words when it fails or prints no version.
pub fn published_version(npm: &NpmRun<'_>, package: &str) -> Result<String, String> {
    let run = npm_command(npm, &["view", package, "version"], NpmStep::Registry).map_err(|err| err.to_string())?;
    let printed = run.stdout.trim();
    if run.succeeded() && crate::version::parse_version(printed).is_some() {
        Ok(printed.to_owned())
    } else {
        Err(format!("npm view {package} version: {}", run.text().lines().last().unwrap_or("no answer")))
    }
}
