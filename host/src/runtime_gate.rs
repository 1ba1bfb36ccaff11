//! What the host knows of each runtime's executable, and the identity gate
//! every spawn passes through.
//!
//! Detection (hash, version probe) is blocking work: it runs on tokio's
//! blocking threads, never under a lock. The record is a map from runtime
//! id to its last [`Detection`]; `runtimes` refreshes entries whose
//! executable changed, and a start refuses an executable that no longer
//! matches its record.

use crate::store::receipts::ReceiptStore;
use dashmap::DashMap;
use panehost_adapters::descriptor::LoginForm;
use panehost_adapters::detection::{detect, Detection};
use panehost_adapters::launcher::launch_completion;
use panehost_adapters::readiness::{self, Evidence, Gate, Readiness, ReadinessState, ReceiptStanding};
use panehost_adapters::receipt::RECEIPT_VALIDITY;
use panehost_adapters::sign_in::{self, SignInReading};
use panehost_adapters::{Catalog, Descriptor, LaunchPlan};
use panehost_ipc::runtime::login_form;
use panehost_ipc::{limitation, ErrorBody, ErrorCode, Receipt, RuntimeInfo, VersionRefusal};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

/// Detections by runtime id.
#[derive(Debug, Default)]
pub(crate) struct RuntimeGate {
    detections: DashMap<String, Detection>,
}

impl RuntimeGate {
    /// An empty record.
    pub(crate) fn new() -> Self {
        RuntimeGate::default()
    }

    /// Checks the executable a plan is about to spawn, immediately before
    /// the spawn. A runtime seen for the first time is detected now; one
    /// whose executable no longer matches its record is refused with
    /// `BINARY_CHANGED`; one whose version the adapter refuses, with
    /// `VERSION_REFUSED`, unless the plan allows it. A command given for
    /// `shell` is not a runtime's executable and is not gated.
    ///
    /// # Errors
    /// `BINARY_CHANGED`, `OPERATION_UNSUPPORTED` naming `VERSION_REFUSED`,
    /// or `RUNTIME_NOT_AVAILABLE` when the executable cannot be read.
    pub(crate) async fn check_before_spawn(&self, catalog: &Arc<Catalog>, plan: &LaunchPlan) -> Result<(), ErrorBody> {
        let Some(descriptor) = catalog.descriptor(&plan.runtime) else { return Ok(()) };
        let Some(executable) = catalog.resolve(descriptor) else { return Ok(()) };
        if plan.program != executable {
            return Ok(());
        }
        let recorded = self.detections.get(&plan.runtime).map(|entry| entry.clone());
        let detection = match recorded {
            Some(detection) => {
                let (recorded, catalog) = (detection.clone(), Arc::clone(catalog));
                let id = plan.runtime.clone();
                let verified = tokio::task::spawn_blocking(move || {
                    let descriptor = catalog.descriptor(&id).expect("a planned runtime is in the catalog");
                    recorded.verify(descriptor, &executable)
                })
                .await
                .map_err(|err| ErrorBody::new(ErrorCode::Internal, err.to_string()))?;
                verified.map_err(|change| {
                    tracing::warn!(runtime = %plan.runtime, %change, "executable changed; start refused");
                    ErrorBody::new(
                        ErrorCode::BinaryChanged,
                        format!("the executable of {} changed since it was identified ({change}); list runtimes to identify it again", plan.runtime),
                    )
                })?;
                detection
            }
            None => {
                let detection = detect_blocking(catalog, descriptor).await.map_err(|reason| {
                    ErrorBody::new(ErrorCode::RuntimeNotAvailable, format!("runtime {}: {reason}", plan.runtime))
                })?;
                self.detections.insert(plan.runtime.clone(), detection.clone());
                detection
            }
        };
        refuse_version(descriptor, &detection, plan)
    }

    /// Every runtime as `runtimes` reports it, detecting those not yet
    /// detected or whose executable changed (concurrently).
    pub(crate) async fn runtime_infos(&self, catalog: &Arc<Catalog>, receipts: &ReceiptStore) -> Vec<RuntimeInfo> {
        let tasks: Vec<_> = catalog
            .descriptors()
            .iter()
            .map(|descriptor| {
                let catalog = Arc::clone(catalog);
                let id = descriptor.id.clone();
                let recorded = self.detections.get(&id).map(|entry| entry.clone());
                tokio::task::spawn_blocking(move || {
                    let descriptor = catalog.descriptor(&id).expect("listed descriptors exist");
                    let Some(executable) = catalog.resolve(descriptor) else { return (id, None) };
                    let current = recorded.filter(|detection| detection.verify(descriptor, &executable).is_ok());
                    let detection = match current {
                        Some(detection) => Ok(detection),
                        None => detect(&catalog, descriptor),
                    };
                    (id, Some(detection))
                })
            })
            .collect();
        let ids = catalog.descriptors().iter().map(|descriptor| descriptor.id.clone()).collect();
        let mut stored = receipts.load_async(ids).await.into_iter();
        let mut infos = Vec::with_capacity(tasks.len());
        for (task, descriptor) in tasks.into_iter().zip(catalog.descriptors()) {
            let outcome = match task.await {
                Ok((_, outcome)) => outcome,
                Err(err) => Some(Err(format!("detection failed: {err}"))),
            };
            if let Some(Ok(detection)) = &outcome {
                self.detections.insert(descriptor.id.clone(), detection.clone());
            }
            infos.push(runtime_info(catalog, descriptor, outcome, stored.next().flatten()));
        }
        infos
    }

    /// The readiness of one runtime now, detecting it if it was not yet
    /// (or its executable changed), for a start that requires readiness.
    pub(crate) async fn readiness_of(
        &self,
        catalog: &Arc<Catalog>,
        receipts: &ReceiptStore,
        runtime: &str,
    ) -> Readiness {
        let Some(descriptor) = catalog.descriptor(runtime) else {
            return Readiness { state: ReadinessState::NotReady, gate: Some(Gate::Installed), reason: None };
        };
        let outcome = match catalog.resolve(descriptor) {
            None => None,
            Some(executable) => {
                let recorded = self.detections.get(runtime).map(|entry| entry.clone());
                match recorded.filter(|detection| detection.verify(descriptor, &executable).is_ok()) {
                    Some(detection) => Some(Ok(detection)),
                    None => Some(detect_blocking(catalog, descriptor).await),
                }
            }
        };
        if let Some(Ok(detection)) = &outcome {
            self.detections.insert(runtime.to_owned(), detection.clone());
        }
        let stored = receipts.load_async(vec![runtime.to_owned()]).await.pop().flatten();
        judge(catalog, descriptor, &outcome, stored.as_ref()).0
    }

    /// The detection on record for a runtime, if any.
    pub(crate) fn detection(&self, runtime: &str) -> Option<Detection> {
        self.detections.get(runtime).map(|entry| entry.clone())
    }
}

/// Refuses a launch of a version the adapter refuses, unless the start
/// allows it (then it is logged).
fn refuse_version(descriptor: &Descriptor, detection: &Detection, plan: &LaunchPlan) -> Result<(), ErrorBody> {
    let Some(range) = descriptor.refusal(detection.version.as_deref()) else { return Ok(()) };
    let version = detection.version.as_deref().unwrap_or("?");
    if plan.allow_refused_version {
        tracing::warn!(
            runtime = %plan.runtime,
            version,
            reason = %range.reason,
            "starting a refused version: the client allowed it"
        );
        return Ok(());
    }
    let message = format!(
        "runtime {}: the installed version ({}) is one panehost refuses ({}): {}; install another version, or start it anyway with allow_refused_version",
        plan.runtime,
        version,
        range.describe(),
        range.reason
    );
    Err(ErrorBody::unsupported(limitation::VERSION_REFUSED, message))
}

async fn detect_blocking(catalog: &Arc<Catalog>, descriptor: &Descriptor) -> Result<Detection, String> {
    let catalog = Arc::clone(catalog);
    let id = descriptor.id.clone();
    tokio::task::spawn_blocking(move || {
        let descriptor = catalog.descriptor(&id).ok_or("unknown runtime")?;
        detect(&catalog, descriptor)
    })
    .await
    .map_err(|err| err.to_string())?
}

/// Readiness, the sign-in reading and whether the receipt counts, from a
/// detection outcome (`None`: not installed; `Some(Err)`: installed but not
/// identified) and the last receipt.
fn judge(
    catalog: &Catalog,
    descriptor: &Descriptor,
    outcome: &Option<Result<Detection, String>>,
    receipt: Option<&Receipt>,
) -> (Readiness, SignInReading, bool) {
    let not_found = match outcome {
        None => Some(catalog.not_found_reason(descriptor)),
        Some(Err(reason)) => Some(reason.clone()),
        Some(Ok(_)) => None,
    };
    let detection = outcome.as_ref().and_then(|outcome| outcome.as_ref().ok());
    let sign_in = sign_in::observe(descriptor, catalog.environment());
    let standing = receipt_standing(receipt, detection, SystemTime::now());
    let evidence = Evidence { detection, not_found: not_found.as_deref(), sign_in: &sign_in, receipt: &standing };
    (readiness::assess(descriptor, evidence), sign_in, matches!(standing, ReceiptStanding::Valid(_)))
}

/// Where a stored receipt stands against the executable installed now.
pub(crate) fn receipt_standing(
    receipt: Option<&Receipt>,
    detection: Option<&Detection>,
    now: SystemTime,
) -> ReceiptStanding {
    let Some(receipt) = receipt else { return ReceiptStanding::Missing };
    if let Some(detection) = detection {
        if receipt.sha256 != detection.identity.sha256 {
            return ReceiptStanding::Void(format!(
                "taken from {} with SHA-256 {}, installed now {} with {}",
                receipt.path,
                short(&receipt.sha256),
                detection.identity.path.display(),
                short(&detection.identity.sha256)
            ));
        }
        let now = detection.fingerprint();
        match &receipt.fingerprint {
            None => {
                return ReceiptStanding::Void(
                    "taken by an older host, which did not record what ran (its version and installed package)".into(),
                )
            }
            Some(taken) if *taken != now => {
                let installed = match &detection.installation {
                    Some(installation) => format!("{}, ", installation.description),
                    None => String::new(),
                };
                return ReceiptStanding::Void(format!(
                    "taken from {} at version {} with fingerprint {}; installed now: {installed}version {}, fingerprint {}",
                    receipt.path,
                    receipt.version.as_deref().unwrap_or("?"),
                    short(taken),
                    detection.version.as_deref().unwrap_or("?"),
                    short(&now)
                ));
            }
            Some(_) => {}
        }
    }
    if !receipt.passed {
        return ReceiptStanding::Failed(receipt.detail.clone());
    }
    let taken = SystemTime::UNIX_EPOCH + Duration::from_millis(receipt.taken_at_ms);
    let age = now.duration_since(taken).unwrap_or_default();
    if age > RECEIPT_VALIDITY {
        ReceiptStanding::Stale(age)
    } else {
        ReceiptStanding::Valid(age)
    }
}

fn short(sha256: &str) -> &str {
    sha256.get(..12).unwrap_or(sha256)
}

/// `None`: not installed. `Some(Err)`: installed but not identified.
fn runtime_info(
    catalog: &Catalog,
    descriptor: &Descriptor,
    outcome: Option<Result<Detection, String>>,
    receipt: Option<Receipt>,
) -> RuntimeInfo {
    let (readiness, sign_in, receipt_valid) = judge(catalog, descriptor, &outcome, receipt.as_ref());
    let not_found = match &outcome {
        None => Some(catalog.not_found_reason(descriptor)),
        Some(Err(reason)) => Some(reason.clone()),
        Some(Ok(_)) => None,
    };
    let detection = outcome.and_then(Result::ok);
    RuntimeInfo {
        id: descriptor.id.clone(),
        display_name: descriptor.display_name.clone(),
        supported: descriptor.supported,
        available: detection.is_some(),
        path: detection.as_ref().map(|d| d.identity.path.display().to_string()),
        version: detection.as_ref().and_then(|d| d.version.clone()),
        unavailable_reason: not_found.or_else(|| detection.as_ref().and_then(|d| d.version_error.clone())),
        resume_modes: descriptor.resume_forms.iter().map(|form| form.mode.as_str().to_owned()).collect(),
        limitations: descriptor.limitations.clone(),
        sha256: detection.as_ref().map(|d| d.identity.sha256.clone()),
        version_floor: descriptor.version.floor.clone(),
        floor_status: detection.as_ref().map(|d| d.floor_status.as_str().to_owned()),
        readiness: readiness.state.as_str().to_owned(),
        readiness_gate: readiness.gate.map(|gate| gate.as_str().to_owned()),
        readiness_reason: readiness.reason,
        sign_in: sign_in.state.as_str().to_owned(),
        sign_in_detail: sign_in.detail,
        receipt,
        receipt_valid,
        // What a pane started now reports (a bash gets prompt marks; hooks
        // need the host's notify command), not the descriptor's declaration.
        completion: match &detection {
            Some(detection) => launch_completion(descriptor, &detection.identity.path, catalog.environment()),
            None => descriptor.completion,
        }
        .as_str()
        .to_owned(),
        login: match descriptor.login {
            LoginForm::InTerminal { .. } => login_form::IN_TERMINAL,
            LoginForm::OutsideTerminal => login_form::OUTSIDE_TERMINAL,
            LoginForm::NotRequired => login_form::NOT_REQUIRED,
        }
        .to_owned(),
        evidence: descriptor.evidence.kind().to_owned(),
        permission_profiles: descriptor
            .enforced_profiles()
            .into_iter()
            .map(|profile| profile.as_str().to_owned())
            .collect(),
        default_permission_profile: descriptor.default_profile().map(|profile| profile.as_str().to_owned()),
        version_refused: detection.as_ref().and_then(|d| descriptor.refusal(d.version.as_deref())).map(|range| {
            VersionRefusal { from: range.from.clone(), before: range.before.clone(), reason: range.reason.clone() }
        }),
        package: detection.as_ref().and_then(|d| d.installation.as_ref()).map(|i| i.description.clone()),
        fingerprint: detection.as_ref().map(Detection::fingerprint),
    }
}
