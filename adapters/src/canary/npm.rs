//! Running npm for the canary: through the probe runner (scrubbed
//! environment, timeout, process group ended), with the user's own home so
//! that npm finds its cache and its `.npmrc` (registry, proxy).

use crate::environment::HostEnvironment;
use crate::probe::{run_probe_capturing, ProbeError, ProbeNetwork, ProbeRequest, ProbeRun};
use crate::resolve::resolve_executable;
use std::path::PathBuf;
use std::time::Duration;

/// Variables passed from the caller's environment to npm, when set: how
/// it reaches the registry.
const NPM_VARIABLES: &[&str] = &["HTTPS_PROXY", "HTTP_PROXY", "NO_PROXY", "https_proxy", "http_proxy", "no_proxy"];

/// How npm is run.
#[derive(Debug, Clone)]
pub struct NpmRun<'a> {
    /// The npm executable.
    pub npm: PathBuf,
    /// `PATH` for npm (it needs `node`).
    pub search_path: Option<&'a str>,
    /// Variables for npm: `HOME`, proxies, no update notifier, no
    /// self-update of any CLI whose scripts run.
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
        let mut variables = vec![
            ("HOME".to_owned(), environment.home().display().to_string()),
            ("npm_config_update_notifier".to_owned(), "false".to_owned()),
            ("DISABLE_AUTOUPDATER".to_owned(), "1".to_owned()),
        ];
        for name in NPM_VARIABLES {
            if let Some(value) = environment.get(name) {
                variables.push(((*name).to_owned(), value.to_owned()));
            }
        }
        Ok(NpmRun { npm, search_path, environment: variables, timeout })
    }
}

/// Runs `npm args`.
///
/// # Errors
/// As [`run_probe_capturing`].
pub fn npm_command(npm: &NpmRun<'_>, args: &[&str], network: ProbeNetwork) -> Result<ProbeRun, ProbeError> {
    let args: Vec<String> = args.iter().map(|arg| (*arg).to_owned()).collect();
    run_probe_capturing(&ProbeRequest {
        program: &npm.npm,
        args: &args,
        search_path: npm.search_path,
        extra_env: &npm.environment,
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
    let run = npm_command(npm, &["view", package, "version"], ProbeNetwork::Shared).map_err(|err| err.to_string())?;
    let printed = run.stdout.trim();
    if run.succeeded() && crate::version::parse_version(printed).is_some() {
        Ok(printed.to_owned())
    } else {
        Err(format!("npm view {package} version: {}", run.text().lines().last().unwrap_or("no answer")))
    }
}
