//! Step 1: the pinned CLIs, installed into the cache when missing.
//!
//! The pins are those of `adapters/evidence/<runtime>.json` (`package`,
//! `pinned_version`, `executable`, and where present `extra_packages` and
//! `allow_scripts`), which `adapters/evidence/capture.sh` writes. The
//! install is the script's own: `npm install --prefix CACHE/<runtime>
//! --no-fund --no-audit PACKAGE@VERSION [EXTRA@VERSION...]`, never global,
//! with `DISABLE_AUTOUPDATER=1`, after writing `allowScripts` for the
//! packages whose install script must run into the prefix's
//! `package.json`; skipped when the prefix already holds those versions. (The script itself also rewrites the evidence records, which
//! this runner must not touch, so the runner does the install step alone.)

use crate::outcome::Outcome;
use panehost_adapters::canary::optional_dependencies::{self, LeftOut};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// A runtime's pinned package.
#[derive(Debug, Clone)]
pub struct Pin {
    pub package: String,
    pub version: String,
    pub executable: String,
    /// Packages pinned beside it, as `name@version`.
    pub extra: Vec<String>,
    /// Packages whose install script may run.
    pub allow_scripts: Vec<String>,
}

/// Where an installed CLI is.
#[derive(Debug, Clone)]
pub struct Installed {
    /// `CACHE/<runtime>/node_modules/.bin`, for the host's PATH.
    pub bin_dir: PathBuf,
}

/// A candidate staged elsewhere (`--candidate-bin-dir`): used where it is,
/// nothing installed; the `install` step says so.
pub fn candidate(bin_dir: &Path) -> (Option<Installed>, Outcome) {
    if !bin_dir.is_dir() {
        return (None, Outcome::fail(format!("the candidate's directory {} is missing", bin_dir.display())));
    }
    let installed = Installed { bin_dir: bin_dir.to_path_buf() };
    (Some(installed), Outcome::pass(format!("the candidate in {}, as staged: nothing installed", bin_dir.display())))
}

/// Whether `runtime`'s evidence record pins a version (on npm or PyPI).
#[cfg(test)]
pub fn is_pinned(repo: &Path, runtime: &str) -> bool {
    let path = repo.join("adapters/evidence").join(format!("{runtime}.json"));
    std::fs::read_to_string(path)
        .ok()
        .and_then(|text| serde_json::from_str::<Value>(&text).ok())
        .is_some_and(|doc| doc["pinned_version"].is_string())
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
    let list = |name: &str| -> Vec<String> {
        doc[name]
            .as_array()
            .map(|items| items.iter().filter_map(|v| v.as_str().map(str::to_owned)).collect())
            .unwrap_or_default()
    };
    Ok(Pin {
        package: field("package")?,
        version: field("pinned_version")?,
        executable: field("executable")?,
        extra: list("extra_packages"),
        allow_scripts: list("allow_scripts"),
    })
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
    if let Ok(Some(pin)) = pypi_pin(repo, runtime) {
        return ensure_pypi(cache, runtime, &pin);
    }
    let pin = match pin(repo, runtime) {
        Ok(pin) => pin,
        Err(error) => return (None, Outcome::fail(error)),
    };
    let prefix = cache.join(runtime);
    let bin_dir = prefix.join("node_modules/.bin");
    let spec = format!("{}@{}", pin.package, pin.version);
    let holds = |spec: &str| {
        let (name, version) = spec.rsplit_once('@').unwrap_or((spec, ""));
        installed_version(&prefix, name).as_deref() == Some(version)
    };
    let mut already = holds(&spec) && pin.extra.iter().all(|extra| holds(extra));
    let mut specs = vec![spec.clone()];
    specs.extend(pin.extra.iter().cloned());
    let spec = specs.join(" ");
    // npm skips an optional dependency it could not fetch (codex's native
    // program) and exits 0: a cache holding such an install is made again,
    // and one more install is tried before the step fails.
    let mut attempts = 0;
    loop {
        if already {
            match left_out(&prefix, &pin.package) {
                Ok(missing) if missing.is_empty() => break,
                Ok(missing) if attempts >= 2 => {
                    return (
                        None,
                        Outcome::fail(format!(
                            "npm install --prefix <cache>/{runtime} {spec} left out {} twice: an optional \
                             dependency published for this machine (npm skips one it cannot fetch and exits 0)",
                            missing.iter().map(|one| one.spec.as_str()).collect::<Vec<_>>().join(", ")
                        )),
                    );
                }
                Ok(missing) => eprintln!(
                    "[live] {runtime}: the install lacks {}; installing again",
                    missing.iter().map(|one| one.name.as_str()).collect::<Vec<_>>().join(", ")
                ),
                // Offline, a cached install is used as it is.
                Err(error) if attempts == 0 => {
                    eprintln!("[live] {runtime}: cannot check the cached install's parts ({error}); using it");
                    break;
                }
                Err(error) => return (None, Outcome::fail(format!("cannot check the install's parts: {error}"))),
            }
        }
        eprintln!("[live] {runtime}: installing {spec} into {}", prefix.display());
        if let Err(failure) = npm_install(&prefix, runtime, &pin, &specs) {
            return (None, failure);
        }
        attempts += 1;
        already = true;
    }
    let already = attempts == 0;
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

/// `npm install --prefix PREFIX --no-fund --no-audit SPECS`, after
/// writing the `allowScripts` the pin names.
fn npm_install(prefix: &Path, runtime: &str, pin: &Pin, specs: &[String]) -> Result<(), Outcome> {
    let spec = specs.join(" ");
    std::fs::create_dir_all(prefix)
        .map_err(|error| Outcome::fail(format!("cannot create <cache>/{runtime}: {error}")))?;
    if !pin.allow_scripts.is_empty() {
        allow_scripts(prefix, &pin.allow_scripts)
            .map_err(|error| Outcome::fail(format!("cannot write <cache>/{runtime}/package.json: {error}")))?;
    }
    let output = Command::new("npm")
        .args(["install", "--prefix"])
        .arg(prefix)
        .args(["--no-fund", "--no-audit"])
        .args(specs)
        .env("DISABLE_AUTOUPDATER", "1")
        .stdin(Stdio::null())
        .output()
        .map_err(|error| Outcome::fail(format!("cannot run npm: {error}")))?;
    if output.status.success() {
        return Ok(());
    }
    let text = String::from_utf8_lossy(&output.stderr);
    let tail: Vec<&str> = text.lines().rev().take(8).collect();
    let tail: Vec<&str> = tail.into_iter().rev().collect();
    Err(Outcome::fail(format!(
        "npm install --prefix <cache>/{runtime} --no-fund --no-audit {spec} failed ({}): {}",
        output.status,
        tail.join(" / ")
    )))
}

/// The optional dependencies of `package` under `prefix` published for
/// this machine that npm left out, asked of the registry with `npm view`.
fn left_out(prefix: &Path, package: &str) -> Result<Vec<LeftOut>, String> {
    let mut ask_registry = |spec: &str| {
        let output = Command::new("npm")
            .args(["view", spec, "os", "cpu", "libc", "--json"])
            .stdin(Stdio::null())
            .output()
            .map_err(|error| format!("cannot run npm: {error}"))?;
        if output.status.success() {
            Ok(String::from_utf8_lossy(&output.stdout).into_owned())
        } else {
            Err(format!("npm view {spec}: {}", String::from_utf8_lossy(&output.stderr).trim()))
        }
    };
    optional_dependencies::left_out(prefix, package, &mut ask_registry)
}

/// Lets the install scripts of `names` run: `allowScripts` in the prefix's
/// `package.json` (npm runs no dependency's install script otherwise).
fn allow_scripts(prefix: &Path, names: &[String]) -> std::io::Result<()> {
    let path = prefix.join("package.json");
    let mut doc: Value =
        std::fs::read(&path).ok().and_then(|bytes| serde_json::from_slice(&bytes).ok()).unwrap_or(Value::Null);
    if !doc.is_object() {
        doc = serde_json::json!({});
    }
    let allowed =
        doc.as_object_mut().map(|object| object.entry("allowScripts").or_insert_with(|| serde_json::json!({})));
    if let Some(Value::Object(allowed)) = allowed {
        for name in names {
            allowed.insert(name.clone(), Value::Bool(true));
        }
    }
    std::fs::write(path, doc.to_string())
}

/// The pin of a runtime published on PyPI (`pypi_package` in its evidence
/// record).
#[derive(Debug, Clone)]
struct PypiPin {
    package: String,
    version: String,
    executable: String,
    /// The Python it needs (`"3.13"`), when not the system's.
    python: Option<String>,
}

fn pypi_pin(repo: &Path, runtime: &str) -> Result<Option<PypiPin>, String> {
    let path = repo.join("adapters/evidence").join(format!("{runtime}.json"));
    let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
    let field = |name: &str| doc[name].as_str().map(str::to_owned);
    Ok(match (field("pypi_package"), field("pinned_version"), field("executable")) {
        (Some(package), Some(version), Some(executable)) => {
            Some(PypiPin { package, version, executable, python: field("python") })
        }
        _ => None,
    })
}

/// The `major.minor` of a Python interpreter, if it runs.
fn python_minor(python: &Path) -> Option<String> {
    let output = Command::new(python)
        .args(["-c", "import sys; print('%d.%d' % sys.version_info[:2])"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    output.status.success().then(|| String::from_utf8_lossy(&output.stdout).trim().to_owned())
}

/// An interpreter of Python `minor` (`"3.13"`), as `capture.sh` finds one:
/// `$PANEHOST_PYTHON_3_13`, `python3.13` on PATH when it runs (a pyenv shim
/// of a version that is not selected does not), or pyenv's own copy,
/// `${PYENV_ROOT:-~/.pyenv}/versions/3.13.*/bin/python3.13`.
fn find_python(minor: &str) -> Option<PathBuf> {
    let named = format!("python{minor}");
    let mut candidates: Vec<PathBuf> = Vec::new();
    if let Some(path) = std::env::var_os(format!("PANEHOST_PYTHON_{}", minor.replace('.', "_"))) {
        candidates.push(PathBuf::from(path));
    }
    if let Some(path) = std::env::var_os("PATH") {
        candidates.extend(std::env::split_paths(&path).map(|dir| dir.join(&named)));
    }
    let pyenv = std::env::var_os("PYENV_ROOT")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|home| PathBuf::from(home).join(".pyenv")));
    if let Some(versions) = pyenv.map(|root| root.join("versions")) {
        let mut found: Vec<PathBuf> = std::fs::read_dir(&versions)
            .into_iter()
            .flatten()
            .flatten()
            .filter(|entry| entry.file_name().to_string_lossy().starts_with(&format!("{minor}.")))
            .map(|entry| entry.path().join("bin").join(&named))
            .collect();
        found.sort();
        candidates.extend(found);
    }
    candidates.into_iter().find(|path| path.is_file() && python_minor(path).as_deref() == Some(minor))
}

/// A runtime from PyPI: a virtual environment in `CACHE/<runtime>` of the
/// system's Python (`/usr/bin/python3 -m venv`), or of the Python version
/// its record names (`find_python`), then its pip installs
/// `PACKAGE==VERSION`, as `adapters/evidence/capture.sh` makes it. Only
/// the executable is put on the host's PATH (a link in
/// `CACHE/<runtime>/exposed`), not the environment's python and pip.
fn ensure_pypi(cache: &Path, runtime: &str, pin: &PypiPin) -> (Option<Installed>, Outcome) {
    let (package, version, executable) = (pin.package.as_str(), pin.version.as_str(), pin.executable.as_str());
    let python = match &pin.python {
        None => PathBuf::from("/usr/bin/python3"),
        Some(minor) => match find_python(minor) {
            Some(python) => python,
            None => {
                return (
                    None,
                    Outcome::fail(format!(
                        "no Python {minor} found (PANEHOST_PYTHON_{}, python{minor} on PATH, or pyenv's versions/{minor}.*): {package} {version} needs it",
                        minor.replace('.', "_")
                    )),
                )
            }
        },
    };
    let prefix = cache.join(runtime);
    let pip = prefix.join("bin/pip");
    let spec = format!("{package}=={version}");
    let installed = Command::new(&pip)
        .args(["show", package])
        .stdin(Stdio::null())
        .output()
        .ok()
        .map(|output| String::from_utf8_lossy(&output.stdout).into_owned())
        .and_then(|text| text.lines().find_map(|l| l.strip_prefix("Version: ").map(str::to_owned)));
    // Made again when the pin or the interpreter's version changed.
    let already = installed.as_deref() == Some(version)
        && python_minor(&prefix.join("bin/python3")).is_some_and(|minor| Some(minor) == python_minor(&python));
    let shown = format!("python{}", pin.python.as_deref().unwrap_or("3"));
    if !already {
        eprintln!("[live] {runtime}: installing {spec} into {} with {}", prefix.display(), python.display());
        let _ = std::fs::remove_dir_all(&prefix);
        let venv = Command::new(&python).args(["-m", "venv"]).arg(&prefix).stdin(Stdio::null()).output();
        let install = match venv {
            Ok(output) if output.status.success() => Command::new(&pip)
                .args(["install", "--disable-pip-version-check", "-q", &spec])
                .stdin(Stdio::null())
                .output(),
            other => other,
        };
        match install {
            Ok(output) if output.status.success() => {}
            Ok(output) => {
                let text = String::from_utf8_lossy(&output.stderr);
                let tail: Vec<&str> = text.lines().rev().take(8).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                return (
                    None,
                    Outcome::fail(format!(
                        "{shown} -m venv <cache>/{runtime} && <cache>/{runtime}/bin/pip install {spec} failed ({}): {}",
                        output.status,
                        tail.join(" / ")
                    )),
                );
            }
            Err(error) => return (None, Outcome::fail(format!("cannot run python3 or pip: {error}"))),
        }
    }
    let target = prefix.join("bin").join(executable);
    if !target.exists() {
        return (None, Outcome::fail(format!("{spec} is installed but <cache>/{runtime}/bin/{executable} is missing")));
    }
    let exposed = prefix.join("exposed");
    let link = exposed.join(executable);
    if std::fs::read_link(&link).ok().as_deref() != Some(target.as_path()) {
        let _ = std::fs::remove_file(&link);
        if let Err(error) = std::fs::create_dir_all(&exposed).and_then(|()| std::os::unix::fs::symlink(&target, &link))
        {
            return (None, Outcome::fail(format!("cannot link <cache>/{runtime}/exposed/{executable}: {error}")));
        }
    }
    let how = if already {
        format!("already in the cache ({shown})")
    } else {
        format!("installed with {shown} -m venv <cache>/<runtime> and its pip")
    };
    (Some(Installed { bin_dir: exposed }), Outcome::pass(format!("{spec} (PyPI): {how}")))
}
