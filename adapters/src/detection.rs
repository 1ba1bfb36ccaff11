//! Detection: is a runtime installed, which executable is it, and which
//! version (readiness is judged in [`crate::readiness`]).

use crate::catalog::Catalog;
use crate::descriptor::Descriptor;
use crate::identity::{Identity, IdentityChange};
use crate::installation::Installation;
use crate::probe::{run_probe, ProbeOutcome, PROBE_TIMEOUT};
use crate::version::{floor_status, FloorStatus};
use sha2::{Digest, Sha256};
use std::path::Path;
use std::time::SystemTime;

/// What detection found for one installed runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detection {
    /// The executable's identity when detected.
    pub identity: Identity,
    /// What the version probe printed (first line), when it worked.
    pub version: Option<String>,
    /// Why the version probe failed, when it did.
    pub version_error: Option<String>,
    /// The version against the descriptor's floor.
    pub floor_status: FloorStatus,
    /// When detection ran.
    pub detected_at: SystemTime,
    /// The installed package the executable runs from, when the
    /// descriptor names one and it was found.
    pub installation: Option<Installation>,
}

impl Detection {
    /// What a completion receipt is bound to: SHA-256 over the
    /// executable's SHA-256, the version it printed, and the digests of its
    /// installed package's files, lowercase hex.
    pub fn fingerprint(&self) -> String {
        let mut hasher = Sha256::new();
        hasher.update(b"panehost fingerprint 1\n");
        hasher.update(format!("executable {}\n", self.identity.sha256));
        hasher.update(format!("version {}\n", self.version.as_deref().unwrap_or("")));
        for file in self.installation.iter().flat_map(|installation| &installation.files) {
            hasher.update(format!("package file {}\n", file.sha256));
        }
        hasher.finalize().iter().map(|byte| format!("{byte:02x}")).collect()
    }

    /// Checks that `launcher` (the path resolved on `PATH`) is still what
    /// was detected: the executable's identity, and the installed package
    /// under it, which an upgrade in place changes even when the launcher
    /// stays byte-identical.
    ///
    /// # Errors
    /// Says what differs.
    pub fn verify(&self, descriptor: &Descriptor, launcher: &Path) -> Result<(), IdentityChange> {
        self.identity.verify(launcher)?;
        let canonical = &self.identity.path;
        match (&self.installation, Installation::locate(descriptor, launcher, canonical)) {
            (None, None) => Ok(()),
            (Some(installation), _) => {
                installation.verify(descriptor, launcher, canonical).map_err(IdentityChange::Package)
            }
            (None, Some(now)) => Err(IdentityChange::Package(format!("{} is installed now", now.description))),
        }
    }
}

/// Identifies and probes the runtime's executable. Blocking: it hashes the
/// executable and runs the version probe (up to [`PROBE_TIMEOUT`]).
///
/// # Errors
/// Fails when the executable is not found or cannot be read.
pub fn detect(catalog: &Catalog, descriptor: &Descriptor) -> Result<Detection, String> {
    let program = catalog.resolve(descriptor).ok_or_else(|| catalog.not_found_reason(descriptor))?;
    let identity = Identity::of(&program).map_err(|err| format!("cannot read {}: {err}", program.display()))?;
    let (version, version_error) = if descriptor.version.args.is_empty() {
        (None, None)
    } else {
        let environment = descriptor.self_update_off.environment.clone();
        match run_probe(
            &identity.path,
            &descriptor.version.args,
            catalog.environment().get("PATH"),
            &environment,
            PROBE_TIMEOUT,
        ) {
            ProbeOutcome::Printed(text) => (Some(text.lines().next().unwrap_or("").trim().to_owned()), None),
            ProbeOutcome::Failed(reason) => (None, Some(reason)),
        }
    };
    let floor_status = if descriptor.version.args.is_empty() {
        FloorStatus::Indeterminate
    } else {
        floor_status(version.as_deref(), descriptor.version.floor.as_deref())
    };
    let installation = Installation::locate(descriptor, &program, &identity.path);
    Ok(Detection { identity, version, version_error, floor_status, detected_at: SystemTime::now(), installation })
}
