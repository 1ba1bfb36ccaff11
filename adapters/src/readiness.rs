//! Readiness: whether a runtime can be trusted with work now.
//!
//! A runtime passes five gates, in order: policy supports it; it is
//! installed and its executable identified; its version is not below the
//! adapter's floor nor in a range the adapter refuses; the user is signed in (where that can be seen without
//! asking the provider); and a completion receipt taken from this very
//! executable passed less than 24 hours ago. The first gate that fails
//! makes it `not_ready`, naming the gate. A version that cannot be read
//! makes it `reduced` instead: it can be started, but what needs a known
//! version is withheld (see [`REDUCED_WITHHOLDS`]).

use crate::descriptor::{Descriptor, ReceiptSupport};
use crate::detection::Detection;
use crate::sign_in::{SignInReading, SignInState};
use crate::version::FloorStatus;
use panehost_ipc::runtime::readiness_gate;
use std::time::Duration;

/// What a `reduced` runtime cannot do: resume (its flags may differ in a
/// version nobody identified) and enforce a permission profile (the
/// sandbox flags may have changed meaning), so a start asking for one is
/// treated as asking of a runtime that cannot enforce it.
pub const REDUCED_WITHHOLDS: &str = "native resume and permission profiles are withheld until the version can be read";

/// The readiness states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReadinessState {
    /// Every gate passes.
    Ready,
    /// A gate fails.
    NotReady,
    /// Every gate passes but the version could not be read.
    Reduced,
}

impl ReadinessState {
    /// The state as it travels on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ReadinessState::Ready => panehost_ipc::runtime::readiness::READY,
            ReadinessState::NotReady => panehost_ipc::runtime::readiness::NOT_READY,
            ReadinessState::Reduced => panehost_ipc::runtime::readiness::REDUCED,
        }
    }
}

/// The gates, in the order they are checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Gate {
    /// Policy allows starting the runtime.
    Supported,
    /// The executable is installed and identified.
    Installed,
    /// The version is not below the floor.
    Version,
    /// The user is signed in.
    SignIn,
    /// A valid completion receipt exists.
    Receipt,
}

impl Gate {
    /// The gate as it travels on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Gate::Supported => readiness_gate::SUPPORTED,
            Gate::Installed => readiness_gate::INSTALLED,
            Gate::Version => readiness_gate::VERSION,
            Gate::SignIn => readiness_gate::SIGN_IN,
            Gate::Receipt => readiness_gate::RECEIPT,
        }
    }
}

/// Where a runtime's last completion receipt stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReceiptStanding {
    /// A passed receipt of this executable, this old.
    Valid(Duration),
    /// None was taken (or it was lost).
    Missing,
    /// The last one failed; why.
    Failed(String),
    /// It passed, but longer ago than the validity allows.
    Stale(Duration),
    /// It was taken from another executable; what differs.
    Void(String),
}

/// A readiness verdict.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Readiness {
    /// The state.
    pub state: ReadinessState,
    /// The gate that stops (or reduces) the runtime.
    pub gate: Option<Gate>,
    /// Why, for people.
    pub reason: Option<String>,
}

impl Readiness {
    fn not_ready(gate: Gate, reason: String) -> Readiness {
        Readiness { state: ReadinessState::NotReady, gate: Some(gate), reason: Some(reason) }
    }

    /// Whether a start that requires a ready runtime may go ahead.
    pub fn admits_work(&self) -> bool {
        self.state != ReadinessState::NotReady
    }
}

/// Everything readiness is judged on.
#[derive(Debug, Clone, Copy)]
pub struct Evidence<'a> {
    /// The detection, when the executable was identified.
    pub detection: Option<&'a Detection>,
    /// Why it was not, when it was not.
    pub not_found: Option<&'a str>,
    /// The sign-in reading, taken now.
    pub sign_in: &'a SignInReading,
    /// The last receipt, judged against the executable now installed.
    pub receipt: &'a ReceiptStanding,
}

/// Judges the gates in order.
pub fn assess(descriptor: &Descriptor, evidence: Evidence<'_>) -> Readiness {
    if !descriptor.supported {
        return Readiness::not_ready(Gate::Supported, "not supported by policy".into());
    }
    let detection = match (evidence.detection, evidence.not_found) {
        (Some(detection), _) => detection,
        (None, Some(reason)) => return Readiness::not_ready(Gate::Installed, reason.to_owned()),
        (None, None) => return Readiness::not_ready(Gate::Installed, "not detected yet".into()),
    };
    if let Some(range) = descriptor.refusal(detection.version.as_deref()) {
        return Readiness::not_ready(
            Gate::Version,
            format!(
                "the installed version ({}) is refused ({}): {}",
                detection.version.as_deref().unwrap_or("?"),
                range.describe(),
                range.reason
            ),
        );
    }
    if detection.floor_status == FloorStatus::Below {
        return Readiness::not_ready(
            Gate::Version,
            format!(
                "version {} is below the floor {}",
                detection.version.as_deref().unwrap_or("?"),
                descriptor.version.floor.as_deref().unwrap_or("?")
            ),
        );
    }
    if evidence.sign_in.state == SignInState::SignedOut {
        let detail = evidence.sign_in.detail.clone().unwrap_or_default();
        return Readiness::not_ready(Gate::SignIn, format!("not signed in ({detail})"));
    }
    if let Some(reason) = receipt_problem(descriptor, evidence.receipt) {
        return Readiness::not_ready(Gate::Receipt, reason);
    }
    let reduced = detection.floor_status == FloorStatus::Indeterminate && !descriptor.version.args.is_empty();
    if reduced {
        let why = detection.version_error.as_deref().unwrap_or("its version could not be read");
        return Readiness {
            state: ReadinessState::Reduced,
            gate: Some(Gate::Version),
            reason: Some(format!("{why}; {REDUCED_WITHHOLDS}")),
        };
    }
    Readiness { state: ReadinessState::Ready, gate: None, reason: None }
}

fn receipt_problem(descriptor: &Descriptor, standing: &ReceiptStanding) -> Option<String> {
    match (&descriptor.receipt, standing) {
        (ReceiptSupport::NotAnAgent, _) | (_, ReceiptStanding::Valid(_)) => None,
        (ReceiptSupport::Unavailable, _) => {
            Some("no completion receipt can be taken: the runtime has no one-shot mode (RECEIPT_UNAVAILABLE)".into())
        }
        (ReceiptSupport::OneShot(_), ReceiptStanding::Missing) => {
            Some(format!("no completion receipt yet; take one with `panehost runtimes --probe {}`", descriptor.id))
        }
        (ReceiptSupport::OneShot(_), ReceiptStanding::Failed(detail)) => {
            Some(format!("the last completion receipt failed: {detail}"))
        }
        (ReceiptSupport::OneShot(_), ReceiptStanding::Stale(age)) => {
            Some(format!("the completion receipt is {} hours old (at most 24 count)", age.as_secs() / 3600))
        }
        (ReceiptSupport::OneShot(_), ReceiptStanding::Void(change)) => {
            Some(format!("the completion receipt was taken from another executable ({change})"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::identity::Identity;
    use crate::runtimes;
    use std::time::SystemTime;

    fn descriptor(id: &str) -> Descriptor {
        runtimes::built_in().into_iter().find(|d| d.id == id).unwrap()
    }

    fn detection(floor_status: FloorStatus) -> Detection {
        Detection {
            identity: Identity::of(std::path::Path::new("/bin/sh")).unwrap(),
            version: Some("9.9.9".into()),
            version_error: None,
            floor_status,
            detected_at: SystemTime::now(),
            installation: None,
        }
    }

    const SIGNED_IN: SignInReading = SignInReading { state: SignInState::SignedIn, detail: None };

    fn judge(id: &str, floor: FloorStatus, sign_in: &SignInReading, receipt: ReceiptStanding) -> Readiness {
        let detection = detection(floor);
        let evidence = Evidence { detection: Some(&detection), not_found: None, sign_in, receipt: &receipt };
        assess(&descriptor(id), evidence)
    }

    #[test]
    fn every_gate_passing_is_ready() {
        let verdict = judge("claude", FloorStatus::AtOrAbove, &SIGNED_IN, ReceiptStanding::Valid(Duration::ZERO));
        assert_eq!(verdict, Readiness { state: ReadinessState::Ready, gate: None, reason: None });
        assert!(verdict.admits_work());
    }

    #[test]
    fn the_first_failing_gate_is_named() {
        let signed_out = SignInReading { state: SignInState::SignedOut, detail: Some("none of ~/.x".into()) };
        let below = judge("claude", FloorStatus::Below, &signed_out, ReceiptStanding::Missing);
        assert_eq!(below.gate, Some(Gate::Version));
        let out = judge("claude", FloorStatus::AtOrAbove, &signed_out, ReceiptStanding::Missing);
        assert_eq!((out.state, out.gate), (ReadinessState::NotReady, Some(Gate::SignIn)));
        assert!(!out.admits_work());
        for standing in [
            ReceiptStanding::Missing,
            ReceiptStanding::Failed("wrong value".into()),
            ReceiptStanding::Stale(Duration::from_secs(25 * 3600)),
            ReceiptStanding::Void("sha256 differs".into()),
        ] {
            let verdict = judge("claude", FloorStatus::AtOrAbove, &SIGNED_IN, standing.clone());
            assert_eq!(verdict.gate, Some(Gate::Receipt), "{standing:?}");
        }
        let missing = Evidence {
            detection: None,
            not_found: Some("not on PATH"),
            sign_in: &SIGNED_IN,
            receipt: &ReceiptStanding::Missing,
        };
        assert_eq!(assess(&descriptor("claude"), missing).gate, Some(Gate::Installed));
        let mut unsupported = descriptor("claude");
        unsupported.supported = false;
        let evidence = Evidence { not_found: None, ..missing };
        assert_eq!(assess(&unsupported, evidence).gate, Some(Gate::Supported));
    }

    #[test]
    fn a_refused_version_is_not_ready_at_the_version_gate() {
        let mut detection = detection(FloorStatus::AtOrAbove);
        let receipt = ReceiptStanding::Valid(Duration::ZERO);
        let judge_version = |detection: &Detection| {
            let evidence =
                Evidence { detection: Some(detection), not_found: None, sign_in: &SIGNED_IN, receipt: &receipt };
            assess(&descriptor("kimi"), evidence)
        };
        for refused in ["kimi, version 1.52.0", "kimi, version 1.52.1", "2.0"] {
            detection.version = Some(refused.into());
            let verdict = judge_version(&detection);
            assert_eq!((verdict.state, verdict.gate), (ReadinessState::NotReady, Some(Gate::Version)), "{refused}");
            let reason = verdict.reason.unwrap();
            assert!(reason.contains("refused (from 1.52.0): retired; runs a remote installer at start"), "{reason}");
        }
        for allowed in ["kimi, version 1.50.0", "kimi, version 1.51.9"] {
            detection.version = Some(allowed.into());
            assert_eq!(judge_version(&detection).state, ReadinessState::Ready, "{allowed}");
        }
    }

    #[test]
    fn an_unreadable_version_reduces_and_a_shell_needs_no_receipt() {
        let verdict = judge("claude", FloorStatus::Indeterminate, &SIGNED_IN, ReceiptStanding::Valid(Duration::ZERO));
        assert_eq!((verdict.state, verdict.gate), (ReadinessState::Reduced, Some(Gate::Version)));
        assert!(verdict.admits_work());
        let not_required = SignInReading { state: SignInState::NotRequired, detail: None };
        // The shell has no version probe: indeterminate is not a reduction.
        let shell = judge("shell", FloorStatus::Indeterminate, &not_required, ReceiptStanding::Missing);
        assert_eq!(shell.state, ReadinessState::Ready);
    }
}
