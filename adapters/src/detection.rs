//! Detection: is a runtime installed, which executable is it, and which
//! version (readiness is judged in [`crate::readiness`]).

use crate::catalog::Catalog;
use crate::descriptor::Descriptor;
use crate::identity::Identity;
use crate::probe::{run_probe, ProbeOutcome, PROBE_TIMEOUT};
use crate::version::{floor_status, FloorStatus};
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
}

/// Identifies and probes the runtime's executable. Blocking: it hashes the
/// executable and runs the version probe (up to [`PROBE_TIMEOUT`]).
///
/// # Errors
/// Fails when the executable is not found or cannot be read.
pub fn detect(catalog: &Catalog, descriptor: &Descriptor) -> Result<Detection, String> {
    let program = catalog.resolve(descriptor).ok_or_else(|| Catalog::not_found_reason(descriptor))?;
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
    Ok(Detection { identity, version, version_error, floor_status, detected_at: SystemTime::now() })
}
