//! What a descriptor's launcher actually does, and the limitations that
//! follows from it.
//!
//! The contract suite compares [`implied_limitations`] (computed from the
//! plans the launcher produces, never from the declaration) with a
//! descriptor's declared `limitations`, for every descriptor.

use crate::admission::AdmissionError;
use crate::descriptor::{CompletionSignal, Descriptor, PermissionProfile};
use crate::environment::HostEnvironment;
use crate::launch_plan::LaunchPlan;
use crate::launcher::{self, StartRequest};
use panehost_ipc::{limitation, ResumeRequest};
use std::collections::BTreeSet;
use std::path::PathBuf;

/// A reference no pattern accepts: it only tells whether the launcher has a
/// reference form at all (an `Unsupported` refusal) or checks references
/// (an `InvalidArgument` refusal).
const PROBE_REFERENCE: &str = "\u{0}";

/// The plans (or refusals) the launcher produces for one descriptor.
#[derive(Debug)]
pub struct LaunchFacts {
    /// A plain start, with no model.
    pub start: Result<LaunchPlan, AdmissionError>,
    /// A resume by exact reference (with a reference no pattern accepts).
    pub resume_reference: Result<LaunchPlan, AdmissionError>,
    /// A resume of the latest session.
    pub resume_latest: Result<LaunchPlan, AdmissionError>,
    /// The runtime's own sign-in.
    pub login: Result<LaunchPlan, AdmissionError>,
    /// A start with each permission profile (not accepting a weaker
    /// boundary), in the order of [`PermissionProfile::ALL`].
    pub profiles: Vec<(PermissionProfile, Result<LaunchPlan, AdmissionError>)>,
    /// A completion receipt's one-shot run (accepting a weaker boundary, so
    /// that only a missing one-shot mode refuses it).
    pub receipt: Result<LaunchPlan, AdmissionError>,
    /// The interrupt keys leave the request to the model open (the
    /// descriptor's own account of what was seen live).
    pub interrupt_keeps_request: bool,
    /// Resume by exact reference was proven with the real program (the
    /// descriptor's own account, [`Descriptor::references_proven_live`]).
    pub references_proven_live: bool,
}

impl LaunchFacts {
    /// Runs the launcher for `descriptor` with a stand-in program path, as
    /// a host that offers a notify command would.
    pub fn gather(descriptor: &Descriptor, environment: &HostEnvironment) -> LaunchFacts {
        let mut environment = environment.clone();
        environment.notify_command.get_or_insert_with(|| PathBuf::from("/nonexistent/panehost"));
        environment.hook_dir.get_or_insert_with(|| PathBuf::from("/nonexistent/hooks"));
        let environment = &environment;
        let program = PathBuf::from("/nonexistent/program");
        let cwd = PathBuf::from("/");
        let start =
            launcher::plan_start(descriptor, program.clone(), cwd.clone(), &StartRequest::default(), environment);
        // A runtime that needs a model is asked about resume with one, so
        // that one limitation does not hide the others.
        let model = matches!(
            &start,
            Err(AdmissionError::Unsupported { limitation, .. }) if *limitation == limitation::START_REQUIRES_RESOLVED_MODEL
        )
        .then(|| "model".to_owned());
        let start_with = |resume, permission_profile| {
            let request =
                StartRequest { model: model.clone(), resume, permission_profile, accept_weaker_boundary: false };
            launcher::plan_start(descriptor, program.clone(), cwd.clone(), &request, environment)
        };
        LaunchFacts {
            start,
            resume_reference: start_with(Some(ResumeRequest::Reference(PROBE_REFERENCE.into())), None),
            resume_latest: start_with(Some(ResumeRequest::Latest), None),
            login: launcher::plan_login(descriptor, program.clone(), cwd.clone(), environment),
            profiles: PermissionProfile::ALL
                .into_iter()
                .map(|profile| (profile, start_with(None, Some(profile))))
                .collect(),
            receipt: launcher::plan_receipt(descriptor, program, cwd, "prompt", model.as_deref(), true, environment)
                .map(|(plan, _)| plan),
            interrupt_keeps_request: descriptor.interrupt_keeps_request,
            references_proven_live: descriptor.references_proven_live,
        }
    }

    /// True when the launcher can resume an exact reference (it checks the
    /// reference rather than refusing the mode).
    pub fn resumes_references(&self) -> bool {
        !matches!(self.resume_reference, Err(AdmissionError::Unsupported { .. }))
    }

    /// True when the launcher can resume the latest session.
    pub fn resumes_latest(&self) -> bool {
        self.resume_latest.is_ok()
    }

    /// The permission profiles the launcher enforces (a start with them
    /// is not refused as unsupported).
    pub fn enforced_profiles(&self) -> Vec<PermissionProfile> {
        self.profiles
            .iter()
            .filter(|(_, plan)| !matches!(plan, Err(AdmissionError::Unsupported { .. })))
            .map(|(profile, _)| *profile)
            .collect()
    }
}

/// The limitations that follow from `facts`.
pub fn implied_limitations(facts: &LaunchFacts) -> BTreeSet<String> {
    let mut implied = BTreeSet::new();
    let mut add = |code: &str| {
        implied.insert(code.to_owned());
    };
    if let Err(AdmissionError::Unsupported { limitation, .. }) = &facts.start {
        add(limitation);
    }
    if let Err(AdmissionError::Unsupported { limitation, .. }) = &facts.resume_reference {
        add(limitation);
    }
    if let Err(AdmissionError::Unsupported { limitation, .. }) = &facts.resume_latest {
        if facts.resumes_references() {
            add(limitation);
        }
    }
    if !facts.resumes_references() && !facts.resumes_latest() {
        add(limitation::HOST_LOSS_RESTARTS_FRESH);
    }
    if facts.resumes_references() && !facts.references_proven_live {
        add(limitation::REFERENCE_PENDING_LIVE_PROOF);
    }
    if let Err(AdmissionError::Unsupported { limitation, .. }) = &facts.login {
        add(limitation);
    }
    // A profile the launcher refuses is one the runtime cannot enforce.
    for (_, plan) in &facts.profiles {
        if let Err(AdmissionError::Unsupported { limitation, .. }) = plan {
            add(limitation);
        }
    }
    if let Err(AdmissionError::Unsupported { limitation, .. }) = &facts.receipt {
        add(limitation);
    }
    let completion = facts.start.as_ref().map(|plan| plan.completion).unwrap_or(CompletionSignal::Unobserved);
    if completion == CompletionSignal::Unobserved {
        add(limitation::COMPLETION_UNOBSERVED);
    }
    if facts.interrupt_keeps_request {
        add(limitation::INTERRUPT_KEEPS_REQUEST);
    }
    implied
}

/// The declared limitations, as a set.
pub fn declared_limitations(descriptor: &Descriptor) -> BTreeSet<String> {
    descriptor.limitations.iter().cloned().collect()
}
