//! Step 1: the pinned CLIs, installed into the cache when missing.
//!
//! The pins are those of `adapters/evidence/<runtime>.json` (`package`,
//! `pinned_version`, `executable`), which `adapters/evidence/capture.sh`
//! writes. The install is the script's own: `npm install --prefix
//! CACHE/<runtime> --no-fund --no-audit PACKAGE@VERSION`, never global,
//! with `DISABLE_AUTOUPDATER=1`, skipped when the prefix already holds that
//! version. (The script itself also rewrites the evidence records, which
//! this runner must not touch, so the runner does the install step alone.)

use crate::outcome::Outcome;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A runtime's pinned package.
#[derive(Debug, Clone)]
pub struct Pin {
    pub package: String,
    pub version: String,
    pub executable: String,
}

/// Where an installed CLI is.
#[derive(Debug, Clone)]
pub struct Installed {
    /// `CACHE/<runtime>/node_modules/.bin`, for the host's PATH.
    pub bin_dir: PathBuf,
}

/// Reads the pin of `runtime` from the evidence record.
pub fn pin(repo: &Path, runtime: &str) -> Result<Pin, String> {
    let path = repo.join("adapters/evidence").join(format!("{runtime}.json"));
    let text = std::fs::read_to_string(&path)
        .map_err(|e| format!("cannot read the pin in adapters/evidence/{runtime}.json: {e}"))?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| format!("adapters/evidence/{runtime}.json: {e}"))?;
    let field = |name: &str| {
        doc[name].as_str().map(str::to_owned).ok_or(format!("adapters/evidence/{runtime}.json has no {name:?}"))
    };
    Ok(Pin { package: field("package")?, version: field("pinned_version")?, executable: field("executable")? })
}

/// The version installed under `prefix`, if any.
fn installed_version(prefix: &Path, package: &str) -> Option<String> {
    let text = std::fs::read_to_string(prefix.join("node_modules").join(package).join("package.json")).ok()?;
    let doc: Value = serde_json::from_str(&text).ok()?;
    doc["version"].as_str().map(str::to_owned)
}

/// Makes sure `runtime`'s pinned version is in `cache`; returns where, and
/// the outcome of the `install` step.
pub fn ensure(repo: &Path, cache: &Path, runtime: &str) -> (Option<Installed>, Outcome) {
    let pin = match pin(repo, runtime) {
        Ok(pin) => pin,
        Err(error) => return (None, Outcome::fail(error)),
    };
    let prefix = cache.join(runtime);
    let bin_dir = prefix.join("node_modules/.bin");
    let spec = format!("{}@{}", pin.package, pin.version);
    let already = installed_version(&prefix, &pin.package).as_deref() == Some(pin.version.as_str());
    if !already {
        eprintln!("[live] {runtime}: installing {spec} into {}", prefix.display());
        if let Err(error) = std::fs::create_dir_all(&prefix) {
            return (None, Outcome::fail(format!("cannot create <cache>/{runtime}: {error}")));
        }
        let output = Command::new("npm")
            .args(["install", "--prefix"])
            .arg(&prefix)
            .args(["--no-fund", "--no-audit", &spec])
            .env("DISABLE_AUTOUPDATER", "1")
            .stdin(Stdio::null())
            .output();
        match output {
            Ok(output) if output.status.success() => {}
            Ok(output) => {
                let text = String::from_utf8_lossy(&output.stderr);
                let tail: Vec<&str> = text.lines().rev().take(8).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                return (
                    None,
                    Outcome::fail(format!(
                        "npm install --prefix <cache>/{runtime} --no-fund --no-audit {spec} failed ({}): {}",
                        output.status,
                        tail.join(" / ")
                    )),
                );
            }
            Err(error) => return (None, Outcome::fail(format!("cannot run npm: {error}"))),
        }
    }
    if !bin_dir.join(&pin.executable).exists() {
        return (
            None,
            Outcome::fail(format!(
                "{spec} is installed but <cache>/{runtime}/node_modules/.bin/{} is missing",
                pin.executable
            )),
        );
    }
    let how = if already { "already in the cache" } else { "installed with npm install --prefix <cache>/<runtime>" };
    (Some(Installed { bin_dir }), Outcome::pass(format!("{spec}: {how}")))
}
