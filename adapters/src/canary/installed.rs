//! Which installed runtimes the canary should look at: those published on
//! npm whose published version differs from the installed one.

use crate::canary::npm::{published_version, NpmRun};
use crate::catalog::Catalog;
use crate::detection::detect;
use crate::version::parse_version;

/// What was found for one installed runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstalledRuntime {
    /// The runtime id.
    pub runtime: String,
    /// The npm package.
    pub package: String,
    /// What the installed CLI's version probe printed, if it worked.
    pub installed: Option<String>,
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
        let decision = match published_version(npm, package) {
            Err(reason) => Decision::RegistryUnreachable(reason),
            Ok(published) if same_version(installed.as_deref(), &published) => Decision::UpToDate,
            Ok(published) => Decision::Judge { published },
        };
        found.push(InstalledRuntime { runtime: descriptor.id.clone(), package: package.clone(), installed, decision });
    }
    found
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
}
