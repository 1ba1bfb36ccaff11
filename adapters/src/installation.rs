//! What an executable runs from: the installed package under its launcher.
//!
//! The file on `PATH` is often not what runs. pip's launcher of a PyPI CLI
//! is a few lines that import the distribution's module, and depend only on
//! the install path: an upgrade in place leaves it byte-identical. An npm
//! CLI's launcher may be a link into its package, or a wrapper that starts
//! it. So an executable's identity alone cannot tell that a CLI was
//! upgraded; the files that stand for its installed package can:
//!
//! - a PyPI distribution (the descriptor's `pypi_distribution`): its
//!   `*.dist-info/RECORD`, which lists every file of the distribution with
//!   its hash, found in the `site-packages` of the launcher's interpreter
//!   (the `#!` line, or the `exec` line pip writes when that path is too
//!   long) or of the launcher's own prefix (`PREFIX/bin/x`,
//!   `PREFIX/lib/pythonX.Y/site-packages`);
//! - an npm package (the descriptor's `npm_package`): its `package.json`
//!   (which holds the version) and the entry file its `bin` names for the
//!   executable, found above the launcher's resolved path, or in the
//!   `node_modules` beside the launcher's directory.
//!
//! Nothing is run: the files are found by their paths and read.

use crate::descriptor::Descriptor;
use crate::identity::{sha256_file, FileStamp};
use std::path::{Path, PathBuf};

/// The largest manifest read (`package.json`, a launcher's first lines);
/// a larger one is not taken for a package's.
const MAX_MANIFEST_BYTES: u64 = 1 << 20;

/// How many directories above the launcher's resolved path are searched
/// for its npm package's `package.json`.
const MAX_PACKAGE_DEPTH: usize = 8;

/// An installed package, as files with their contents' digests.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Installation {
    /// For people: `pypi kimi-cli 1.50.0`, `npm @qwen-code/qwen-code 0.24.4`.
    pub description: String,
    /// The files that stand for the package, with their SHA-256.
    pub files: Vec<PackageFile>,
}

/// One file of an [`Installation`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackageFile {
    /// Where it is.
    pub path: PathBuf,
    /// SHA-256 of its contents, lowercase hex.
    pub sha256: String,
    stamp: FileStamp,
}

impl PackageFile {
    fn read(path: PathBuf) -> Option<PackageFile> {
        let mut file = std::fs::File::open(&path).ok()?;
        let stamp = FileStamp::of(&file.metadata().ok()?);
        let sha256 = sha256_file(&mut file).ok()?;
        Some(PackageFile { path, sha256, stamp })
    }

    /// Whether the file still has these contents: the stamp when it is
    /// unchanged, else the hash.
    fn unchanged(&self) -> bool {
        let Ok(meta) = std::fs::metadata(&self.path) else { return false };
        FileStamp::of(&meta) == self.stamp
            || PackageFile::read(self.path.clone()).is_some_and(|now| now.sha256 == self.sha256)
    }
}

impl Installation {
    /// The package the descriptor says the executable comes from, found
    /// from `launcher` (the path resolved on `PATH`) and `canonical` (it
    /// with links resolved); `None` when the descriptor names no package
    /// or it is not found there.
    pub fn locate(descriptor: &Descriptor, launcher: &Path, canonical: &Path) -> Option<Installation> {
        if let Some(distribution) = &descriptor.pypi_distribution {
            return pypi(distribution, launcher, canonical);
        }
        let package = descriptor.npm_package.as_deref()?;
        let name = launcher.file_name()?.to_str()?;
        npm(package, name, launcher, canonical)
    }

    /// Checks that the package is still the one located: found at the
    /// same files, with the same contents.
    ///
    /// # Errors
    /// Says what differs.
    pub fn verify(&self, descriptor: &Descriptor, launcher: &Path, canonical: &Path) -> Result<(), String> {
        let now = Installation::locate(descriptor, launcher, canonical);
        let paths = |installation: &Installation| installation.files.iter().map(|f| f.path.clone()).collect::<Vec<_>>();
        match now {
            None => Err(format!("{} is no longer found", self.description)),
            Some(now) if paths(&now) != paths(self) => Err(format!("{} is now {}", self.description, now.description)),
            Some(_) => match self.files.iter().find(|file| !file.unchanged()) {
                Some(file) => Err(format!("{} changed ({})", self.description, file.path.display())),
                None => Ok(()),
            },
        }
    }
}

/// The distribution's name as its `dist-info` directory spells it
/// (PEP 427: runs of `-`, `_` and `.` become `_`), lowercased.
fn normalized(distribution: &str) -> String {
    let mut name = String::with_capacity(distribution.len());
    for c in distribution.chars() {
        if matches!(c, '-' | '_' | '.') {
            if !name.ends_with('_') {
                name.push('_');
            }
        } else {
            name.push(c.to_ascii_lowercase());
        }
    }
    name
}

fn pypi(distribution: &str, launcher: &Path, canonical: &Path) -> Option<Installation> {
    let mut prefixes: Vec<PathBuf> = Vec::new();
    if let Some(interpreter) = interpreter_of(canonical) {
        prefixes.extend(interpreter.parent().and_then(Path::parent).map(Path::to_path_buf));
    }
    for path in [canonical, launcher] {
        prefixes.extend(path.parent().and_then(Path::parent).map(Path::to_path_buf));
    }
    prefixes.dedup();
    let wanted = format!("{}-", normalized(distribution));
    for prefix in prefixes {
        for site in site_packages(&prefix) {
            let Ok(entries) = std::fs::read_dir(&site) else { continue };
            let mut found: Vec<(String, PathBuf)> = entries
                .flatten()
                .filter_map(|entry| {
                    let name = entry.file_name().to_str()?.to_owned();
                    let version =
                        name.to_ascii_lowercase().strip_prefix(&wanted)?.strip_suffix(".dist-info")?.to_owned();
                    Some((version, entry.path()))
                })
                .collect();
            found.sort();
            if let Some((version, dist_info)) = found.pop() {
                let record = PackageFile::read(dist_info.join("RECORD"))?;
                return Some(Installation {
                    description: format!("pypi {distribution} {version}"),
                    files: vec![record],
                });
            }
        }
    }
    None
}

/// `PREFIX/lib*/python*/{site,dist}-packages`.
fn site_packages(prefix: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    for lib in ["lib", "lib64"] {
        let Ok(entries) = std::fs::read_dir(prefix.join(lib)) else { continue };
        let mut pythons: Vec<PathBuf> = entries
            .flatten()
            .filter(|entry| entry.file_name().to_str().is_some_and(|name| name.starts_with("python")))
            .map(|entry| entry.path())
            .collect();
        pythons.sort();
        for python in pythons {
            found.extend(
                ["site-packages", "dist-packages"].map(|dir| python.join(dir)).into_iter().filter(|d| d.is_dir()),
            );
        }
    }
    found
}

/// The interpreter a script launcher names: its `#!` line, or, for pip's
/// launcher of a long path, the `'''exec' "PATH" "$0" "$@"` line after a
/// `#!/bin/sh` one.
fn interpreter_of(script: &Path) -> Option<PathBuf> {
    use std::io::Read as _;
    let mut head = Vec::new();
    std::fs::File::open(script).ok()?.take(4096).read_to_end(&mut head).ok()?;
    let text = String::from_utf8_lossy(&head);
    let mut lines = text.lines();
    let shebang = lines.next()?.strip_prefix("#!")?.trim();
    let interpreter = shebang.split_whitespace().next()?;
    if interpreter == "/bin/sh" {
        let exec = lines.next()?.strip_prefix("'''exec' \"")?;
        return Some(PathBuf::from(exec.split('"').next()?));
    }
    Some(PathBuf::from(interpreter))
}

fn npm(package: &str, executable: &str, launcher: &Path, canonical: &Path) -> Option<Installation> {
    let above = canonical.ancestors().skip(1).take(MAX_PACKAGE_DEPTH).map(Path::to_path_buf);
    let beside = launcher.parent().into_iter().flat_map(|bin| {
        // `PREFIX/bin/x` of a global install, `node_modules/.bin/x` of a local one.
        let prefix = bin.parent().map(Path::to_path_buf).unwrap_or_default();
        [prefix.join("lib/node_modules").join(package), prefix.join(package)]
    });
    for dir in above.chain(beside) {
        let manifest = dir.join("package.json");
        let Some(text) = read_small(&manifest) else { continue };
        let Ok(json) = serde_json::from_str::<serde_json::Value>(&text) else { continue };
        if json.get("name").and_then(|name| name.as_str()) != Some(package) {
            continue;
        }
        let version = json.get("version").and_then(|version| version.as_str()).unwrap_or("?");
        let entry = match json.get("bin") {
            Some(serde_json::Value::String(path)) => Some(path.as_str()),
            Some(serde_json::Value::Object(bins)) => bins.get(executable).and_then(|path| path.as_str()),
            _ => None,
        };
        let mut files = vec![PackageFile::read(manifest)?];
        // The entry file, unless it is the executable itself (its identity
        // covers it already: not hashed twice).
        let entry = entry.map(|entry| dir.join(entry)).filter(|entry| entry.starts_with(&dir));
        if let Some(entry) = entry.filter(|entry| std::fs::canonicalize(entry).ok().as_deref() != Some(canonical)) {
            files.extend(PackageFile::read(entry));
        }
        return Some(Installation { description: format!("npm {package} {version}"), files });
    }
    None
}

fn read_small(path: &Path) -> Option<String> {
    let meta = std::fs::metadata(path).ok()?;
    if !meta.is_file() || meta.len() > MAX_MANIFEST_BYTES {
        return None;
    }
    std::fs::read_to_string(path).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runtimes;
    use std::os::unix::fs::PermissionsExt;

    fn descriptor(id: &str) -> Descriptor {
        runtimes::built_in().into_iter().find(|d| d.id == id).unwrap()
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    /// A virtual environment as pip leaves it: `bin/python3.13`, a
    /// launcher `bin/kimi` naming it, and the distribution's `dist-info`.
    fn venv(root: &Path, version: &str, record: &str, launcher: &str) -> PathBuf {
        write(&root.join("bin/python3.13"), "");
        let kimi = root.join("bin/kimi");
        write(&kimi, launcher);
        std::fs::set_permissions(&kimi, std::fs::Permissions::from_mode(0o755)).unwrap();
        let site = root.join("lib/python3.13/site-packages");
        write(&site.join(format!("kimi_cli-{version}.dist-info/RECORD")), record);
        write(&site.join("other_package-9.9.dist-info/RECORD"), "other\n");
        kimi
    }

    #[test]
    fn a_pypi_launcher_leads_to_its_distributions_record_and_an_upgrade_in_place_is_seen() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("venv");
        let launcher_text = format!(
            "#!{}/bin/python3.13\n# -*- coding: utf-8 -*-\nimport sys\nfrom kimi_cli.cli import cli\n",
            root.display()
        );
        let kimi = venv(&root, "1.50.0", "kimi_cli/__init__.py,sha256=aaa,10\n", &launcher_text);
        let kimi_descriptor = descriptor("kimi");
        let found = Installation::locate(&kimi_descriptor, &kimi, &kimi).expect("found");
        assert_eq!(found.description, "pypi kimi-cli 1.50.0");
        assert_eq!(found.files.len(), 1);
        assert!(found.files[0].path.ends_with("kimi_cli-1.50.0.dist-info/RECORD"), "{found:?}");
        assert_eq!(found.verify(&kimi_descriptor, &kimi, &kimi), Ok(()));
        // A runtime that names no package, or another one, finds nothing.
        assert_eq!(Installation::locate(&descriptor("grok"), &kimi, &kimi), None);
        assert_eq!(Installation::locate(&descriptor("hermes"), &kimi, &kimi), None);

        // Reinstalled with other files: the RECORD differs.
        let record = root.join("lib/python3.13/site-packages/kimi_cli-1.50.0.dist-info/RECORD");
        write(&record, "kimi_cli/__init__.py,sha256=bbb,10\n");
        let changed = found.verify(&kimi_descriptor, &kimi, &kimi).unwrap_err();
        assert!(changed.contains("pypi kimi-cli 1.50.0 changed"), "{changed}");

        // Upgraded: the old dist-info is gone, a new one is there, and the
        // launcher is byte-identical.
        std::fs::remove_dir_all(record.parent().unwrap()).unwrap();
        write(&root.join("lib/python3.13/site-packages/kimi_cli-1.51.0.dist-info/RECORD"), "x\n");
        assert_eq!(std::fs::read_to_string(&kimi).unwrap(), launcher_text);
        let upgraded = found.verify(&kimi_descriptor, &kimi, &kimi).unwrap_err();
        assert_eq!(upgraded, "pypi kimi-cli 1.50.0 is now pypi kimi-cli 1.51.0");
    }

    #[test]
    fn pips_exec_launcher_of_a_long_path_and_a_linked_launcher_are_followed() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("env");
        let launcher_text = format!(
            "#!/bin/sh\n'''exec' \"{}/bin/python3.13\" \"$0\" \"$@\"\n' '''\nfrom kimi_cli.cli import cli\n",
            root.display()
        );
        let kimi = venv(&root, "1.52.0", "r\n", &launcher_text);
        assert_eq!(interpreter_of(&kimi), Some(root.join("bin/python3.13")));
        // On PATH through a link in another directory, as the live proof
        // exposes it: the launcher's resolved path leads to the prefix.
        let exposed = dir.path().join("exposed");
        std::fs::create_dir_all(&exposed).unwrap();
        std::os::unix::fs::symlink(&kimi, exposed.join("kimi")).unwrap();
        let found = Installation::locate(&descriptor("kimi"), &exposed.join("kimi"), &kimi).expect("found");
        assert_eq!(found.description, "pypi kimi-cli 1.52.0");
    }

    #[test]
    fn an_npm_launcher_leads_to_its_package_json_and_entry_file() {
        let dir = tempfile::tempdir().unwrap();
        let modules = dir.path().join("node_modules");
        let package = modules.join("@qwen-code/qwen-code");
        let manifest = |version: &str| {
            format!(r#"{{"name":"@qwen-code/qwen-code","version":"{version}","bin":{{"qwen":"cli.js"}}}}"#)
        };
        write(&package.join("package.json"), &manifest("0.15.10"));
        write(&package.join("cli.js"), "#!/usr/bin/env node\n");
        // A package of another name above it is passed over.
        write(&dir.path().join("package.json"), r#"{"name":"cache","version":"1.0.0"}"#);
        std::fs::create_dir_all(modules.join(".bin")).unwrap();
        let launcher = modules.join(".bin/qwen");
        std::os::unix::fs::symlink("../@qwen-code/qwen-code/cli.js", &launcher).unwrap();
        let canonical = std::fs::canonicalize(&launcher).unwrap();
        let qwen = descriptor("qwen");
        let found = Installation::locate(&qwen, &launcher, &canonical).expect("found");
        assert_eq!(found.description, "npm @qwen-code/qwen-code 0.15.10");
        // The entry file is the executable: its identity covers it.
        let names: Vec<_> = found.files.iter().map(|f| f.path.file_name().unwrap().to_owned()).collect();
        assert_eq!(names, ["package.json"]);
        // Started through a wrapper, the entry file is a file of its own.
        let wrapper = dir.path().join("bin/qwen");
        write(&wrapper, "#!/bin/sh\nexec node /somewhere/cli.js \"$@\"\n");
        let wrapped = Installation::locate(&qwen, &launcher, &wrapper).expect("found beside the launcher");
        let names: Vec<_> = wrapped.files.iter().map(|f| f.path.file_name().unwrap().to_owned()).collect();
        assert_eq!(names, ["package.json", "cli.js"]);
        assert_eq!(found.verify(&qwen, &launcher, &canonical), Ok(()));
        write(&package.join("package.json"), &manifest("0.24.4"));
        let upgraded = found.verify(&qwen, &launcher, &canonical).unwrap_err();
        assert!(upgraded.contains("changed"), "{upgraded}");
    }

    #[test]
    fn distribution_names_are_normalized_as_dist_info_directories_spell_them() {
        assert_eq!(normalized("kimi-cli"), "kimi_cli");
        assert_eq!(normalized("Hermes.Agent"), "hermes_agent");
        assert_eq!(normalized("a-_.b"), "a_b");
    }
}
