//! Which installed runtimes the canary should look at: those published on
//! npm whose published version differs from the installed one.
//!
//! The installed version is the one in the installed package's
//! `package.json` when the executable lives in that package (some CLIs
//! print another number than their package's: grok's package 0.0.34 prints
//! 1.0.1), else what its version probe prints.

use crate::canary::npm::{published_version, NpmRun};
use crate::catalog::Catalog;
use crate::detection::detect;
use crate::version::parse_version;
use std::path::{Path, PathBuf};

/// What was found for one installed runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledRuntime {
    /// The runtime id.
    pub runtime: String,
    /// The npm package.
    pub package: String,
    /// What the installed CLI's version probe printed, if it worked.
    pub installed: Option<String>,
    /// The version of the installed package, when the executable lives in
    /// one.
    pub installed_package: Option<String>,
    /// What to do about it.
    pub decision: Decision,
}

/// Whether the canary runs for an installed runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// The registry publishes another version: judge it.
    Judge {
        /// The published version.
        published: String,
    },
    /// The installed version is the published one.
    UpToDate,
    /// The registry could not be asked.
    RegistryUnreachable(String),
}

/// Every runtime of `catalog` that has an npm package and whose executable
/// is installed, with the published version asked of the registry.
/// Blocking: it runs each installed CLI's version probe and `npm view`.
pub fn installed_runtimes(catalog: &Catalog, npm: &NpmRun<'_>) -> Vec<InstalledRuntime> {
    let mut found = Vec::new();
    for descriptor in catalog.descriptors() {
        let Some(package) = &descriptor.npm_package else { continue };
        let Ok(detection) = detect(catalog, descriptor) else { continue };
        let installed = detection.version.clone();
        let installed_package = installed_package_version(&detection.identity.path, package);
        let compared = installed_package.as_deref().or(installed.as_deref());
        let decision = match published_version(npm, package) {
            Err(reason) => Decision::RegistryUnreachable(reason),
            Ok(published) if same_version(compared, &published) => Decision::UpToDate,
            Ok(published) => Decision::Judge { published },
        };
        found.push(InstalledRuntime {
            runtime: descriptor.id.clone(),
            package: package.clone(),
            installed,
            installed_package,
            decision,
        });
    }
    found
}

/// The version in `.../node_modules/PACKAGE/package.json` when
/// `executable` (links resolved) lies inside that package.
pub fn installed_package_version(executable: &Path, package: &str) -> Option<String> {
    let root: PathBuf = Path::new("node_modules").join(package);
    let package_dir = executable.ancestors().find(|dir| dir.ends_with(&root))?;
    let text = std::fs::read_to_string(package_dir.join("package.json")).ok()?;
    let manifest: serde_json::Value = serde_json::from_str(&text).ok()?;
    manifest["version"].as_str().map(str::to_owned)
}

/// True when both hold the same dotted version (`2.1.197 (Claude Code)`
/// and `2.1.197`).
pub fn same_version(installed: Option<&str>, published: &str) -> bool {
    match (installed.and_then(parse_version), parse_version(published)) {
        (Some(installed), Some(published)) => installed == published,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_compare_by_their_numbers() {
        assert!(same_version(Some("2.1.197 (Claude Code)"), "2.1.197"));
        assert!(same_version(Some("GitHub Copilot CLI 1.0.102."), "1.0.102"));
        assert!(!same_version(Some("0.15.10"), "0.24.3"));
        assert!(!same_version(None, "1.0.0"));
    }

    #[test]
    fn an_executable_inside_its_package_reads_the_package_version() {
        let dir = std::env::temp_dir().join(format!("panehost-installed-{}", std::process::id()));
        let package = dir.join("node_modules/@vibe-kit/grok-cli");
        std::fs::create_dir_all(package.join("dist")).unwrap();
        std::fs::write(package.join("package.json"), r#"{"version": "0.0.34"}"#).unwrap();
        let executable = package.join("dist/index.js");
        assert_eq!(installed_package_version(&executable, "@vibe-kit/grok-cli").as_deref(), Some("0.0.34"));
        assert_eq!(installed_package_version(&executable, "opencode-ai"), None);
        assert_eq!(installed_package_version(Path::new("/usr/bin/grok"), "@vibe-kit/grok-cli"), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
