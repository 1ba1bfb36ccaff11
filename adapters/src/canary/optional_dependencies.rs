//! Optional dependencies an npm install left out.
//!
//! Several CLIs ship their native program as an optional dependency per
//! platform (`@openai/codex` names `@openai/codex-linux-x64` and five
//! more). npm installs the ones whose `os`, `cpu` and `libc` match the
//! machine, and skips, without a word and with exit status 0, one it could
//! not fetch: the install "succeeds" and the CLI fails at its first run
//! ("Missing optional dependency"). Judged, such a candidate would look
//! broken when it was the download that failed, and a cache holding it
//! would stay broken. [`left_out`] finds them: every optional dependency of
//! the installed package that is not on disk, asked of the registry
//! (`npm view SPEC os cpu libc --json`), and kept when it is published for
//! this machine.

use std::path::Path;

/// The largest `package.json` read (the CLIs' are a few KiB).
const MANIFEST_LIMIT: u64 = 1024 * 1024;

/// The most optional dependencies looked at (a package that names more is
/// refused rather than asked about one by one).
const DEPENDENCY_LIMIT: usize = 64;

/// The largest answer of one `npm view` kept.
const ANSWER_LIMIT: usize = 64 * 1024;

/// An optional dependency of the installed package that npm left out
/// although it is published for this machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeftOut {
    /// Its name in `node_modules`.
    pub name: String,
    /// What the registry was asked about (`NAME@RANGE`).
    pub spec: String,
}

/// The optional dependencies of `package` (installed under `prefix`) that
/// are published for this machine but not on disk. `ask_registry` runs
/// `npm view SPEC os cpu libc --json` and returns what it printed.
///
/// # Errors
/// The installed manifest cannot be read or names too many optional
/// dependencies, or the registry cannot say where one runs.
pub fn left_out(
    prefix: &Path,
    package: &str,
    ask_registry: &mut dyn FnMut(&str) -> Result<String, String>,
) -> Result<Vec<LeftOut>, String> {
    let installed = prefix.join("node_modules").join(package);
    let manifest = read_manifest(&installed.join("package.json"))?;
    let Some(optional) = manifest.get("optionalDependencies").and_then(serde_json::Value::as_object) else {
        return Ok(Vec::new());
    };
    if optional.len() > DEPENDENCY_LIMIT {
        return Err(format!("{package} names {} optional dependencies (at most {DEPENDENCY_LIMIT})", optional.len()));
    }
    let mut missing = Vec::new();
    for (name, range) in optional {
        let on_disk = [prefix.join("node_modules").join(name), installed.join("node_modules").join(name)];
        if on_disk.iter().any(|dir| dir.join("package.json").is_file()) {
            continue;
        }
        let Some(spec) = registry_spec(name, range.as_str().unwrap_or_default()) else {
            continue; // a URL, a path or a git repository: not the registry's to say
        };
        let answer = ask_registry(&spec)?;
        if answer.len() > ANSWER_LIMIT {
            return Err(format!("npm view {spec} os cpu libc printed over {ANSWER_LIMIT} bytes"));
        }
        let platforms = Platforms::parse(&answer).map_err(|err| format!("npm view {spec} os cpu libc: {err}"))?;
        if platforms.includes(&Machine::this()) {
            missing.push(LeftOut { name: name.clone(), spec });
        }
    }
    Ok(missing)
}

fn read_manifest(path: &Path) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    let mut text = String::new();
    file.take(MANIFEST_LIMIT + 1)
        .read_to_string(&mut text)
        .map_err(|err| format!("cannot read {}: {err}", path.display()))?;
    if text.len() as u64 > MANIFEST_LIMIT {
        return Err(format!("{} is over {MANIFEST_LIMIT} bytes", path.display()));
    }
    match serde_json::from_str(&text) {
        Ok(serde_json::Value::Object(manifest)) => Ok(manifest),
        Ok(_) => Err(format!("{} is not a JSON object", path.display())),
        Err(err) => Err(format!("{}: {err}", path.display())),
    }
}

/// What to ask the registry about for the dependency `name` at `range`:
/// `NAME@RANGE`, or the target of an alias (`npm:OTHER@RANGE`). None for a
/// range npm does not resolve from the registry, or one that could be
/// taken for an option.
pub fn registry_spec(name: &str, range: &str) -> Option<String> {
    let spec = match range.strip_prefix("npm:") {
        Some(target) => target.to_owned(),
        None if range.contains(':') || range.contains('/') => return None,
        None => format!("{name}@{range}"),
    };
    let acceptable = !spec.starts_with('-')
        && spec.len() <= 256
        && spec.chars().all(|c| c.is_ascii_graphic() && !matches!(c, '\'' | '"' | '\\' | '`' | '$'));
    acceptable.then_some(spec)
}

/// The machine a package may be meant for, in npm's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Machine {
    /// `process.platform`: `linux`, `darwin`, `win32`, ...
    pub os: &'static str,
    /// `process.arch`: `x64`, `arm64`, ...
    pub cpu: &'static str,
    /// `glibc` or `musl` on Linux.
    pub libc: Option<&'static str>,
}

impl Machine {
    /// The machine this program runs on.
    pub fn this() -> Machine {
        let os = match std::env::consts::OS {
            "macos" => "darwin",
            "windows" => "win32",
            other => other,
        };
        let cpu = match std::env::consts::ARCH {
            "x86_64" => "x64",
            "aarch64" => "arm64",
            "x86" => "ia32",
            "powerpc64" => "ppc64",
            other => other,
        };
        let libc = (os == "linux").then_some(if cfg!(target_env = "musl") { "musl" } else { "glibc" });
        Machine { os, cpu, libc }
    }
}

/// Where a package says it runs: its `os`, `cpu` and `libc` lists (an
/// empty list allows all).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Platforms {
    /// Allowed (`linux`) and refused (`!win32`) systems.
    pub os: Vec<String>,
    /// Allowed and refused processors.
    pub cpu: Vec<String>,
    /// Allowed and refused C libraries.
    pub libc: Vec<String>,
}

impl Platforms {
    /// Reads what `npm view SPEC os cpu libc --json` printed: an object
    /// with the fields that are set, an array of such objects when several
    /// versions match (the last, the newest, counts), or nothing when none
    /// is set.
    ///
    /// # Errors
    /// The answer is not JSON of that shape.
    pub fn parse(answer: &str) -> Result<Platforms, String> {
        if answer.trim().is_empty() {
            return Ok(Platforms::default());
        }
        let value: serde_json::Value = serde_json::from_str(answer).map_err(|err| format!("not JSON: {err}"))?;
        let object = match &value {
            serde_json::Value::Array(items) => items.last().cloned().unwrap_or_default(),
            _ => value,
        };
        let serde_json::Value::Object(fields) = object else {
            return Err("not a JSON object".to_owned());
        };
        let list = |field: &str| -> Result<Vec<String>, String> {
            match fields.get(field) {
                None | Some(serde_json::Value::Null) => Ok(Vec::new()),
                Some(serde_json::Value::String(one)) => Ok(vec![one.clone()]),
                Some(serde_json::Value::Array(items)) => items
                    .iter()
                    .map(|item| item.as_str().map(str::to_owned).ok_or(format!("{field} holds a non-string")))
                    .collect(),
                Some(_) => Err(format!("{field} is neither a string nor a list")),
            }
        };
        Ok(Platforms { os: list("os")?, cpu: list("cpu")?, libc: list("libc")? })
    }

    /// True when npm would install the package on `machine`.
    pub fn includes(&self, machine: &Machine) -> bool {
        allows(&self.os, Some(machine.os))
            && allows(&self.cpu, Some(machine.cpu))
            && (machine.libc.is_none() || allows(&self.libc, machine.libc))
    }
}

/// npm's rule for one list: empty allows all; a `!name` refuses `name`;
/// with any plain name listed, only those are allowed.
fn allows(list: &[String], value: Option<&str>) -> bool {
    let Some(value) = value else { return true };
    if list.iter().any(|entry| entry.strip_prefix('!') == Some(value)) {
        return false;
    }
    let allowed: Vec<&String> = list.iter().filter(|entry| !entry.starts_with('!')).collect();
    allowed.is_empty() || allowed.iter().any(|entry| entry.as_str() == value || entry.as_str() == "any")
}

#[cfg(test)]
mod tests {
    use super::*;

    const LINUX_X64: Machine = Machine { os: "linux", cpu: "x64", libc: Some("glibc") };

    #[test]
    fn a_package_for_this_machine_is_included_and_others_are_not() {
        let codex_linux = Platforms::parse(r#"{"os":["linux"],"cpu":["x64"]}"#).unwrap();
        assert!(codex_linux.includes(&LINUX_X64));
        let codex_darwin = Platforms::parse(r#"{"os":["darwin"],"cpu":["arm64"]}"#).unwrap();
        assert!(!codex_darwin.includes(&LINUX_X64));
        let musl = Platforms::parse(r#"{"os":"linux","cpu":"x64","libc":"musl"}"#).unwrap();
        assert!(!musl.includes(&LINUX_X64));
        let not_windows = Platforms::parse(r#"{"os":["!win32"]}"#).unwrap();
        assert!(not_windows.includes(&LINUX_X64));
        assert!(Platforms::parse("").unwrap().includes(&LINUX_X64), "no restriction: every machine");
        let versions = Platforms::parse(r#"[{"os":["darwin"]},{"os":["linux"]}]"#).unwrap();
        assert!(versions.includes(&LINUX_X64), "the newest of several versions counts");
    }

    #[test]
    fn a_malformed_answer_is_an_error() {
        for answer in ["{", "42", r#"{"os": 7}"#, r#"{"cpu": [1]}"#, "[3]"] {
            assert!(Platforms::parse(answer).is_err(), "{answer}");
        }
        assert_eq!(Platforms::parse("[]").unwrap_err(), "not a JSON object");
    }

    #[test]
    fn only_registry_ranges_are_asked_about() {
        assert_eq!(
            registry_spec("@openai/codex-linux-x64", "npm:@openai/codex@0.171.0-linux-x64").as_deref(),
            Some("@openai/codex@0.171.0-linux-x64")
        );
        assert_eq!(registry_spec("fsevents", "~2.3.2").as_deref(), Some("fsevents@~2.3.2"));
        assert_eq!(registry_spec("x", "git+https://example.invalid/x.git"), None);
        assert_eq!(registry_spec("x", "file:../x"), None);
        assert_eq!(registry_spec("x", "npm:--registry=http://example.invalid"), None);
        assert_eq!(registry_spec("x", "1.0 ; rm -rf"), None);
        assert_eq!(registry_spec("x", &"1".repeat(300)), None);
    }

    fn prefix_with(manifest: &str, installed: &[&str]) -> tempfile::TempDir {
        let prefix = tempfile::tempdir().unwrap();
        let write = |name: &str, text: &str| {
            let dir = prefix.path().join("node_modules").join(name);
            std::fs::create_dir_all(&dir).unwrap();
            std::fs::write(dir.join("package.json"), text).unwrap();
        };
        write("cli", manifest);
        for name in installed {
            write(name, "{}");
        }
        prefix
    }

    #[test]
    fn the_dependency_for_this_machine_that_is_not_on_disk_is_left_out() {
        let manifest = r#"{"optionalDependencies": {
            "cli-linux": "npm:cli@1.0.0-linux", "cli-darwin": "npm:cli@1.0.0-darwin",
            "cli-any": "1.0.0", "cli-git": "git+https://example.invalid/x.git"}}"#;
        let prefix = prefix_with(manifest, &["cli-any"]);
        let mut asked = Vec::new();
        let mut registry = |spec: &str| {
            asked.push(spec.to_owned());
            let os = if spec.ends_with("darwin") { "darwin" } else { Machine::this().os };
            Ok(format!(r#"{{"os": ["{os}"]}}"#))
        };
        let missing = left_out(prefix.path(), "cli", &mut registry).unwrap();
        assert_eq!(missing, [LeftOut { name: "cli-linux".into(), spec: "cli@1.0.0-linux".into() }]);
        asked.sort();
        assert_eq!(asked, ["cli@1.0.0-darwin", "cli@1.0.0-linux"], "what is on disk is not asked about");
    }

    #[test]
    fn a_manifest_that_cannot_be_judged_is_an_error() {
        let mut never = |_: &str| -> Result<String, String> { panic!("the registry is not asked") };
        let prefix = prefix_with("[]", &[]);
        assert!(left_out(prefix.path(), "cli", &mut never).unwrap_err().ends_with("is not a JSON object"));
        let many: Vec<String> = (0..=DEPENDENCY_LIMIT).map(|n| format!(r#""d{n}": "1""#)).collect();
        let prefix = prefix_with(&format!(r#"{{"optionalDependencies": {{{}}}}}"#, many.join(",")), &[]);
        assert!(left_out(prefix.path(), "cli", &mut never).unwrap_err().contains("optional dependencies"));
        let prefix = prefix_with(&format!(r#"{{"pad": "{}"}}"#, "x".repeat(MANIFEST_LIMIT as usize)), &[]);
        assert!(left_out(prefix.path(), "cli", &mut never).unwrap_err().contains("is over"));
        let prefix = prefix_with(r#"{"name": "cli"}"#, &[]);
        assert_eq!(left_out(prefix.path(), "cli", &mut never).unwrap(), [], "no optional dependency");
        let prefix = prefix_with(r#"{"optionalDependencies": {"d": "1"}}"#, &[]);
        let mut failing = |_: &str| Err("npm view d@1: E404".to_owned());
        assert_eq!(left_out(prefix.path(), "cli", &mut failing).unwrap_err(), "npm view d@1: E404");
    }
}
