//! Running npm for the canary, through the probe runner (timeout, process
//! group ended). Asking the registry for a version (`npm view`) runs npm as
//! the caller, with the caller's environment: it runs no code of a package.
//! Everything that touches the candidate's package runs in the canary's
//! sandbox ([`crate::sandbox`]), which shows none of the caller's files:
//! the install (with the network, and only the registry settings of the
//! caller's environment) and the package's install scripts (without the
//! network, with a scrubbed environment).

use crate::environment::HostEnvironment;
use crate::probe::{run_probe_capturing, ProbeError, ProbeRequest, ProbeRun};
use crate::resolve::resolve_executable;
use crate::sandbox::{Sandbox, SandboxNetwork};
use std::path::PathBuf;
use std::time::Duration;

/// Set for every npm command: no update check, and no self-update of a
/// CLI whose scripts run.
const QUIET: &[(&str, &str)] = &[("npm_config_update_notifier", "false"), ("DISABLE_AUTOUPDATER", "1")];

/// What an npm command does, which decides how it runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NpmStep<'a> {
    /// It asks the registry a question (`npm view`): the caller's
    /// environment and network, as any command of the caller.
    Query,
    /// It downloads the package into the scratch prefix (`npm install
    /// --ignore-scripts`): in this sandbox, with the network, the registry
    /// settings of the caller's environment ([`is_registry_setting`]) and a
    /// scratch home.
    Install(&'a Sandbox),
    /// It runs the package's install scripts: in this sandbox, without the
    /// network, with a scrubbed environment and a scratch home.
    Scripts(&'a Sandbox),
}

/// How npm is run.
#[derive(Debug, Clone)]
pub struct NpmRun<'a> {
    /// The npm executable.
    pub npm: PathBuf,
    /// `PATH` for npm (it needs `node`).
    pub search_path: Option<&'a str>,
    /// Variables for a [`NpmStep::Query`]: the caller's, then [`QUIET`].
    pub environment: Vec<(String, String)>,
    /// Variables for a [`NpmStep::Install`]: the caller's registry
    /// settings, then [`QUIET`].
    pub registry_settings: Vec<(String, String)>,
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
        let mut registry_settings: Vec<(String, String)> =
            variables.iter().filter(|(name, _)| is_registry_setting(name)).cloned().collect();
        variables.extend(quiet());
        registry_settings.extend(quiet());
        Ok(NpmRun { npm, search_path, environment: variables, registry_settings, timeout })
    }
}

/// True for a variable that tells npm how to reach the registry: a proxy,
/// a certificate file, or an `npm_config_*` setting (but npm's cache, which
/// the sandboxed install keeps in its scratch home).
pub fn is_registry_setting(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    matches!(
        name.as_str(),
        "http_proxy"
            | "https_proxy"
            | "no_proxy"
            | "all_proxy"
            | "node_extra_ca_certs"
            | "ssl_cert_file"
            | "ssl_cert_dir"
    ) || (name.starts_with("npm_config_") && name != "npm_config_cache")
}

fn quiet() -> Vec<(String, String)> {
    QUIET.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect()
}

/// Runs `npm args` as `step` says.
///
/// # Errors
/// As [`run_probe_capturing`]; [`ProbeError::SandboxRefused`] when a
/// sandboxed step's sandbox cannot be made (npm does not run then).
pub fn npm_command(npm: &NpmRun<'_>, args: &[&str], step: NpmStep<'_>) -> Result<ProbeRun, ProbeError> {
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    let offline = quiet();
    let (extra_env, sandbox) = match step {
        NpmStep::Query => (&npm.environment, None),
        NpmStep::Install(sandbox) => {
            (&npm.registry_settings, Some(Sandbox { network: SandboxNetwork::Shared, ..sandbox.clone() }))
        }
        NpmStep::Scripts(sandbox) => (&offline, Some(Sandbox { network: SandboxNetwork::Private, ..sandbox.clone() })),
    };
    run_probe_capturing(&ProbeRequest {
        program: &npm.npm,
        args: &args,
        search_path: npm.search_path,
        extra_env,
        timeout: npm.timeout,
        sandbox: sandbox.as_ref(),
    })
}

/// The version the registry publishes as `package`'s latest
/// (`npm view PACKAGE version`).
///
/// # Errors
/// npm's own words when it fails or prints no version.
pub fn published_version(npm: &NpmRun<'_>, package: &str) -> Result<String, String> {
    let run = npm_command(npm, &["view", package, "version"], NpmStep::Query).map_err(|err| err.to_string())?;
    let printed = run.stdout.trim();
    if run.succeeded() && crate::version::parse_version(printed).is_some() {
        Ok(printed.to_owned())
    } else {
        Err(format!("npm view {package} version: {}", run.text().lines().last().unwrap_or("no answer")))
    }
}
