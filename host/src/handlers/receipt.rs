//! `probe_runtime`: taking a completion receipt, and the readiness check a
//! start may require.

use crate::server::host_state::HostState;
use panehost_adapters::readiness::ReadinessState;
use panehost_adapters::receipt::{self, Challenge, RECEIPT_TIMEOUT};
use panehost_adapters::Catalog;
use panehost_ipc::{ErrorBody, ErrorCode, Receipt, Response, StartParams};
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

/// Runs the runtime's one-shot mode on a fresh challenge, in a scratch
/// directory made for it (and removed after), checks the answer, and
/// stores the receipt (passed or not) against the executable's identity.
///
/// # Errors
/// The admission refusals of a start (unknown, not available, not
/// supported), `OPERATION_UNSUPPORTED` naming `RECEIPT_UNAVAILABLE` or
/// `PERMISSION_PROFILE_UNENFORCED`, `BINARY_CHANGED`, and `INTERNAL` when
/// no random value or scratch directory can be had.
pub(crate) async fn handle_probe_runtime(
    host: &HostState,
    catalog: &Arc<Catalog>,
    runtime: &str,
    model: Option<&str>,
    accept_weaker_boundary: bool,
) -> Result<Response, ErrorBody> {
    let challenge = Challenge::fresh()
        .map_err(|err| ErrorBody::new(ErrorCode::Internal, format!("no random value for the challenge: {err}")))?;
    let scratch = receipt::scratch_dir(&host.receipts.scratch_parent(), &challenge)
        .map_err(|err| ErrorBody::new(ErrorCode::Internal, format!("no scratch directory for the probe: {err}")))?;
    let result = probe_in(host, catalog, runtime, model, accept_weaker_boundary, &challenge, scratch.clone()).await;
    let _ = std::fs::remove_dir_all(&scratch);
    let receipt = result?;
    if let Err(err) = host.receipts.save_async(receipt.clone()).await {
        tracing::warn!(%runtime, %err, "cannot store the receipt");
    }
    tracing::info!(%runtime, passed = receipt.passed, elapsed_ms = receipt.elapsed_ms, detail = %receipt.detail, "receipt taken");
    Ok(Response::Receipt(receipt))
}

async fn probe_in(
    host: &HostState,
    catalog: &Arc<Catalog>,
    runtime: &str,
    model: Option<&str>,
    accept_weaker_boundary: bool,
    challenge: &Challenge,
    scratch: std::path::PathBuf,
) -> Result<Receipt, ErrorBody> {
    let (plan, read_only_enforced) = catalog
        .admit_receipt(runtime, scratch, &challenge.prompt(), model, accept_weaker_boundary)
        .map_err(|err| err.to_error_body())?;
    // The same identity gate as a spawn: the receipt is of this executable.
    host.runtime_gate.check_before_spawn(catalog, &plan).await?;
    let detection = host.runtime_gate.detection(runtime);
    let taken_at_ms = SystemTime::now().duration_since(UNIX_EPOCH).unwrap_or_default().as_millis() as u64;
    let (probe_plan, probe_challenge) = (plan.clone(), challenge.clone());
    let result = tokio::task::spawn_blocking(move || receipt::take(&probe_plan, &probe_challenge, RECEIPT_TIMEOUT))
        .await
        .map_err(|err| ErrorBody::new(ErrorCode::Internal, format!("the probe failed: {err}")))?;
    let (path, sha256, fingerprint) = match &detection {
        Some(detection) => (
            detection.identity.path.display().to_string(),
            detection.identity.sha256.clone(),
            Some(detection.fingerprint()),
        ),
        None => (plan.program.display().to_string(), String::new(), None),
    };
    Ok(Receipt {
        runtime: runtime.to_owned(),
        passed: result.passed,
        detail: result.detail,
        path,
        version: detection.and_then(|detection| detection.version),
        sha256,
        fingerprint,
        taken_at_ms,
        elapsed_ms: result.elapsed.as_millis() as u64,
        read_only_enforced,
    })
}

/// For a start that requires a ready runtime: refuses it with
/// `RUNTIME_NOT_READY` naming the gate, and refuses a `reduced` runtime
/// what reduction withholds (resume, a permission profile).
///
/// # Errors
/// `RUNTIME_NOT_READY`.
pub(crate) async fn require_ready(
    host: &HostState,
    catalog: &Arc<Catalog>,
    params: &StartParams,
) -> Result<(), ErrorBody> {
    if !params.require_ready || catalog.descriptor(&params.runtime).is_none() {
        return Ok(());
    }
    let readiness = host.runtime_gate.readiness_of(catalog, &host.receipts, &params.runtime).await;
    let gate = readiness.gate.map(|gate| gate.as_str()).unwrap_or("-");
    let reason = readiness.reason.clone().unwrap_or_default();
    match readiness.state {
        ReadinessState::Ready => Ok(()),
        ReadinessState::Reduced if params.resume.is_none() && params.permission_profile.is_none() => Ok(()),
        ReadinessState::Reduced => Err(ErrorBody::new(
            ErrorCode::RuntimeNotReady,
            format!("runtime {} is reduced (gate {gate}: {reason}); resume and profiles are withheld", params.runtime),
        )),
        ReadinessState::NotReady => Err(ErrorBody::new(
            ErrorCode::RuntimeNotReady,
            format!("runtime {} is not ready (gate {gate}): {reason}", params.runtime),
        )),
    }
}
