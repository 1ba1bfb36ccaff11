//! Staging a candidate: the executable the canary probes, and where it
//! came from.
//!
//! A `--binary` candidate is probed where it is (copying a launcher out of
//! its package would break it). A `--version` candidate is installed from
//! the npm registry into a scratch prefix of its own, in two steps, each in
//! the canary's sandbox ([`crate::sandbox`]): none of the caller's files is
//! visible, and the scratch prefix is the only directory it may write to
//! (besides a scratch home and an empty `/tmp`).
//!
//! 1. `npm install --prefix SCRATCH --ignore-scripts PACKAGE@VERSION`, with
//!    the network and the registry settings of the caller's environment:
//!    the only step that has them, and it runs no code of the package.
//!    An optional dependency published for this machine that npm left out
//!    (it skips one it cannot fetch, [`optional_dependencies`]) is fetched
//!    by a second install, or staging is blocked.
//! 2. `npm rebuild --prefix SCRATCH --offline`, without a network, with a
//!    scrubbed environment: the package's install scripts (which put a
//!    native binary in place for some CLIs) run without a network or the
//!    caller's secrets, so a script that would download code fails
//!    instead.

use crate::canary::npm::{npm_command, NpmRun, NpmStep};
use crate::canary::optional_dependencies::{self, LeftOut};
use crate::descriptor::{Descriptor, Executable};
use crate::probe::{describe_exit, ProbeError};
use crate::sandbox::{Sandbox, SandboxNetwork};
use std::path::{Path, PathBuf};

/// What the canary is asked to judge.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Candidate {
    /// This version of the runtime's npm package, staged from the registry.
    NpmVersion(String),
    /// An executable already on disk, probed where it is.
    Binary(PathBuf),
}

/// A candidate ready to probe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Staged {
    /// The executable to probe.
    pub executable: PathBuf,
    /// Directories put first on the probes' `PATH`.
    pub path_prefix: Option<PathBuf>,
    /// The scratch prefix the package was installed in, when staged.
    pub scratch: Option<PathBuf>,
    /// The version the installed `package.json` declares, when staged.
    pub package_version: Option<String>,
}

/// Why staging did not give an executable to probe.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StagingError {
    /// Staging could not run or could not reach what it needed (the
    /// registry, the network, a private namespace): nothing was judged.
    #[error("{0}")]
    Blocked(String),
    /// The staged package does not give the runtime's executable.
    #[error("{0}")]
    NoExecutable(String),
    /// The sandbox for npm could not be made: npm did not run.
    #[error("{0}")]
    SandboxRefused(String),
}

/// True when `version` may be passed to npm as `PACKAGE@VERSION`: a
/// version or a dist-tag (letters, digits, `.`, `+`, `-`, `_`, starting
/// with a letter or digit, at most 64 bytes).
pub fn is_acceptable_version(version: &str) -> bool {
    version.len() <= 64
        && version.chars().next().is_some_and(|first| first.is_ascii_alphanumeric())
        && version.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '+' | '-' | '_'))
}

/// Installs `package@version` into `scratch` (a new directory) and finds
/// the runtime's executable in it. npm runs in the sandbox, with `hidden`
/// (the caller's home and the host's state directory) replaced by empty
/// directories and only `scratch` writable.
///
/// # Errors
/// [`StagingError::Blocked`] when npm fails or the install scripts fail
/// offline; [`StagingError::SandboxRefused`] when npm's sandbox cannot be
/// made; [`StagingError::NoExecutable`] when the package gives none of the
/// runtime's executable names.
pub fn stage_npm(
    descriptor: &Descriptor,
    package: &str,
    version: &str,
    scratch: &Path,
    npm: &NpmRun<'_>,
    hidden: &[PathBuf],
) -> Result<Staged, StagingError> {
    std::fs::create_dir_all(scratch)
        .map_err(|err| StagingError::Blocked(format!("cannot make {}: {err}", scratch.display())))?;
    // Each step sets its own network: the install has it, the scripts not.
    let sandbox = Sandbox {
        network: SandboxNetwork::Private,
        hidden: hidden.to_vec(),
        read_only: Vec::new(),
        writable: vec![scratch.to_path_buf()],
    };
    let prefix = scratch.display().to_string();
    let spec = format!("{package}@{version}");
    let install = ["install", "--prefix", &prefix, "--no-fund", "--no-audit", "--ignore-scripts", "--no-save", &spec];
    expect_success(npm_command(npm, &install, NpmStep::Install(&sandbox)), "npm install --ignore-scripts")?;
    // npm skips an optional dependency it could not fetch and still exits 0:
    // one more install fetches what the first left out, else nothing is judged.
    if !left_out_for_this_machine(scratch, package, npm)?.is_empty() {
        expect_success(npm_command(npm, &install, NpmStep::Install(&sandbox)), "npm install --ignore-scripts")?;
        let missing = left_out_for_this_machine(scratch, package, npm)?;
        if let Some(first) = missing.first() {
            return Err(StagingError::Blocked(format!(
                "npm install left out {} ({}), an optional dependency published for this machine, twice: \
                 npm skips one it cannot fetch and exits 0, and the candidate would run without it",
                first.name, first.spec
            )));
        }
    }
    let rebuild = ["rebuild", "--prefix", &prefix, "--offline", "--foreground-scripts"];
    expect_success(npm_command(npm, &rebuild, NpmStep::Scripts(&sandbox)), "npm rebuild (install scripts, offline)")?;
    let bin_dir = scratch.join("node_modules").join(".bin");
    let Executable::Named { names, .. } = &descriptor.executable else {
        return Err(StagingError::NoExecutable(format!("{} is not found by name", descriptor.id)));
    };
    let executable =
        names.iter().map(|name| bin_dir.join(name)).find(|path| path.exists()).ok_or_else(|| {
            StagingError::NoExecutable(format!("{spec} gives none of {names:?} in node_modules/.bin"))
        })?;
    Ok(Staged {
        executable,
        path_prefix: Some(bin_dir),
        scratch: Some(scratch.to_path_buf()),
        package_version: installed_version(scratch, package),
    })
}

/// The optional dependencies of `package` in `scratch` published for this
/// machine that are not on disk ([`optional_dependencies`]), asked of the
/// registry as any `npm view`.
fn left_out_for_this_machine(scratch: &Path, package: &str, npm: &NpmRun<'_>) -> Result<Vec<LeftOut>, StagingError> {
    let mut ask_registry = |spec: &str| {
        let run = npm_command(npm, &["view", spec, "os", "cpu", "libc", "--json"], NpmStep::Query)
            .map_err(|err| err.to_string())?;
        if run.succeeded() {
            Ok(run.stdout)
        } else {
            Err(format!("npm view {spec}: {}", run.text().lines().last().unwrap_or("no answer")))
        }
    };
    optional_dependencies::left_out(scratch, package, &mut ask_registry).map_err(StagingError::Blocked)
}

/// A binary candidate, probed where it is.
///
/// # Errors
/// [`StagingError::NoExecutable`] when it is not an executable file.
pub fn stage_binary(path: &Path) -> Result<Staged, StagingError> {
    let not_executable = || StagingError::NoExecutable(format!("{} is not an executable file", path.display()));
    // Absolute: the probes run in a scratch working directory.
    let absolute = std::path::absolute(path).map_err(|_| not_executable())?;
    let executable =
        crate::resolve::resolve_executable(&absolute.display().to_string(), None, &[]).ok_or_else(not_executable)?;
    Ok(Staged { executable, path_prefix: None, scratch: None, package_version: None })
}

/// The version in `node_modules/PACKAGE/package.json` under `prefix`.
pub fn installed_version(prefix: &Path, package: &str) -> Option<String> {
    let text = std::fs::read_to_string(prefix.join("node_modules").join(package).join("package.json")).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
    manifest["version"].as_str().map(str::to_owned)
}

fn expect_success(
    run: Result<crate::probe::ProbeRun, ProbeError>,
    what: &str,
) -> Result<crate::probe::ProbeRun, StagingError> {
    match run {
        Ok(run) if run.succeeded() => Ok(run),
        Ok(run) => {
            let words = format!("{}\n{}", run.stdout, run.stderr);
            let tail: Vec<&str> = words.lines().filter(|line| !line.trim().is_empty()).rev().take(6).collect();
            let tail: Vec<&str> = tail.into_iter().rev().collect();
            Err(StagingError::Blocked(format!("{what} failed ({}): {}", describe_exit(run.exit), tail.join(" / "))))
        }
        Err(ProbeError::SandboxRefused(reason)) => Err(StagingError::SandboxRefused(format!("{what}: {reason}"))),
        Err(err) => Err(StagingError::Blocked(format!("{what}: {err}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_and_tags_pass_and_options_do_not() {
        assert!(is_acceptable_version("2.1.197"));
        assert!(is_acceptable_version("1.0.0-beta.2+build"));
        assert!(is_acceptable_version("latest"));
        assert!(!is_acceptable_version("--registry=http://x"));
        assert!(!is_acceptable_version("1.0 ; rm"));
        assert!(!is_acceptable_version(""));
        assert!(!is_acceptable_version(&"1".repeat(65)));
    }
}
