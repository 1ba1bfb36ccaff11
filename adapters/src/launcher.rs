//! Turning a descriptor and a request into a launch plan. This is the only
//! place argv and environments are built.

use crate::admission::AdmissionError;
use crate::completion::{injection, HookInjection, Injection};
use crate::descriptor::{
    CompletionSignal, Descriptor, LoginForm, ModelForm, PermissionProfile, ProfileForm, ReceiptSupport, ResumeMode,
    PROMPT_PLACEHOLDER, READ_ONLY_PLACEHOLDER, REFERENCE_PLACEHOLDER,
};
use crate::environment::HostEnvironment;
use crate::launch_plan::{LaunchPlan, LaunchPurpose};
use crate::reference_pattern::MAX_REFERENCE_LEN;
use crate::shell_integration;
use panehost_ipc::{limitation, ResumeRequest};
use std::path::{Path, PathBuf};

/// What a start asks of a runtime, after the catalog has checked the
/// runtime itself.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StartRequest {
    /// The model, if any.
    pub model: Option<String>,
    /// The session to resume, if any.
    pub resume: Option<ResumeRequest>,
    /// The permission profile the runtime must enforce, if any.
    pub permission_profile: Option<PermissionProfile>,
    /// Start without the profile when the runtime cannot enforce it,
    /// rather than refuse.
    pub accept_weaker_boundary: bool,
}

/// Builds the plan that starts (or resumes) `descriptor` with `program`.
///
/// # Errors
/// Refuses a missing required model, a model the runtime does not take, a
/// resume the runtime cannot do (naming the limitation), a reference its
/// anchored pattern does not accept, and a permission profile the runtime
/// cannot enforce (`PERMISSION_PROFILE_UNENFORCED`) unless the request
/// accepts a weaker boundary.
pub fn plan_start(
    descriptor: &Descriptor,
    program: PathBuf,
    cwd: PathBuf,
    request: &StartRequest,
    environment: &HostEnvironment,
) -> Result<LaunchPlan, AdmissionError> {
    let model_args = model_args(descriptor, request.model.as_deref())?;
    let (purpose, resume_args, leads) = match &request.resume {
        None => (LaunchPurpose::Start, Vec::new(), false),
        Some(resume) => {
            let (mode, args, leads) = resume_args(descriptor, resume)?;
            (LaunchPurpose::Resume(mode), args, leads)
        }
    };
    let profile = profile_form(descriptor, request)?;
    let mut args = Vec::new();
    if leads {
        args.extend(resume_args.iter().cloned());
    }
    args.extend(descriptor.base_args.iter().cloned());
    args.extend(descriptor.self_update_off.args.iter().cloned());
    if let Some((_, form)) = profile {
        args.extend(form.args.iter().cloned());
    }
    let hooks = launch_hooks(descriptor, &program, environment);
    let completion = observed_completion(descriptor.completion, hooks.is_some());
    let (hook_injection, injected) = match hooks {
        Some((how, injected)) => (Some(how), injected),
        None => (None, Default::default()),
    };
    args.extend(injected.args);
    args.extend(model_args);
    if !leads {
        args.extend(resume_args);
    }
    let mut launch_environment = profile.map(|(_, form)| form.environment.clone()).unwrap_or_default();
    launch_environment.extend(injected.environment);
    let mut plan = plan(descriptor, purpose, program, args, cwd, environment, &launch_environment);
    plan.completion = completion;
    plan.hook_injection = hook_injection;
    plan.files = injected.files;
    plan.permission_profile = profile.map(|(profile, _)| profile);
    plan.unenforced_profile =
        request.permission_profile.filter(|asked| profile.map(|(applied, _)| applied) != Some(*asked));
    Ok(plan)
}

/// How the end of a turn is observed for a pane of `descriptor` started
/// with `program` and no command of the client's: what its launch plan
/// says, and so what the pane reports. `runtimes` reports this, so that a
/// runtime and its panes say the same.
pub fn launch_completion(descriptor: &Descriptor, program: &Path, environment: &HostEnvironment) -> CompletionSignal {
    observed_completion(descriptor.completion, launch_hooks(descriptor, program, environment).is_some())
}

/// The hooks a launch of `descriptor` carries, if the host can point them
/// at itself.
fn launch_hooks(
    descriptor: &Descriptor,
    program: &Path,
    environment: &HostEnvironment,
) -> Option<(HookInjection, Injection)> {
    match (descriptor.completion, descriptor.hook_injection) {
        (CompletionSignal::Hook, Some(how @ HookInjection::Declared)) => descriptor
            .declared_hooks
            .as_ref()
            .zip(environment.notify_command.as_deref())
            .map(|(hooks, notify_command)| (how, hooks.expand(notify_command))),
        (CompletionSignal::Hook | CompletionSignal::NotifyProgram, Some(how)) => {
            injection(how, environment).map(|injected| (how, injected))
        }
        (CompletionSignal::ScreenHeuristic, Some(how @ HookInjection::BashPromptMarks)) => {
            shell_integration::bash_prompt_marks(program, environment).map(|injected| (how, injected))
        }
        _ => None,
    }
}

/// The signal a launch observes: the descriptor's, as far as its hooks
/// reach the host.
fn observed_completion(declared: CompletionSignal, hooked: bool) -> CompletionSignal {
    match (declared, hooked) {
        // Hooks cannot reach a host that offers no notify command (or no
        // directory for the files that carry them).
        (CompletionSignal::Hook | CompletionSignal::NotifyProgram, false) => CompletionSignal::Unobserved,
        // A shell with marks: its commands' ends are seen, not guessed.
        (CompletionSignal::ScreenHeuristic, true) => CompletionSignal::ShellIntegration,
        (other, _) => other,
    }
}

/// The profile a start asks for with the runtime's form of it. A start
/// that asks for none gets the host's default,
/// [`PermissionProfile::HOST_DEFAULT`], where the runtime enforces it, and
/// `None` where it does not; so does a start asking for a profile the
/// runtime cannot enforce, when it accepts a weaker boundary.
fn profile_form<'a>(
    descriptor: &'a Descriptor,
    request: &StartRequest,
) -> Result<Option<(PermissionProfile, &'a ProfileForm)>, AdmissionError> {
    let default =
        || descriptor.default_profile().and_then(|profile| Some((profile, descriptor.profile_form(profile)?)));
    let Some(profile) = request.permission_profile else { return Ok(default()) };
    match descriptor.profile_form(profile) {
        Some(form) => Ok(Some((profile, form))),
        None if request.accept_weaker_boundary => Ok(default()),
        None => Err(unenforced(descriptor, profile)),
    }
}

/// The refusal of a permission profile the runtime cannot enforce.
pub fn unenforced(descriptor: &Descriptor, profile: PermissionProfile) -> AdmissionError {
    let enforced: Vec<&str> = descriptor.enforced_profiles().into_iter().map(PermissionProfile::as_str).collect();
    let enforces = if enforced.is_empty() { "none".to_owned() } else { enforced.join(", ") };
    AdmissionError::Unsupported {
        limitation: limitation::PERMISSION_PROFILE_UNENFORCED,
        message: format!(
            "runtime {} cannot enforce permission profile {} (it enforces: {enforces}); accept a weaker boundary to start it without",
            descriptor.id,
            profile.as_str()
        ),
    }
}

/// Builds the plan that runs the runtime's own sign-in in a terminal.
///
/// # Errors
/// `Unsupported` with `LOGIN_NOT_IN_TERMINAL` when signing in happens
/// elsewhere; `NoLogin` when the runtime needs none.
pub fn plan_login(
    descriptor: &Descriptor,
    program: PathBuf,
    cwd: PathBuf,
    environment: &HostEnvironment,
) -> Result<LaunchPlan, AdmissionError> {
    match &descriptor.login {
        LoginForm::InTerminal { args } => {
            let mut login_args = args.clone();
            login_args.extend(descriptor.self_update_off.args.iter().cloned());
            let mut plan = plan(descriptor, LaunchPurpose::Login, program, login_args, cwd, environment, &[]);
            // A sign-in is no agent turn, and no hooks are injected into it.
            plan.completion = CompletionSignal::Unobserved;
            Ok(plan)
        }
        LoginForm::OutsideTerminal => Err(AdmissionError::Unsupported {
            limitation: limitation::LOGIN_NOT_IN_TERMINAL,
            message: format!("runtime {} signs in outside the terminal", descriptor.id),
        }),
        LoginForm::NotRequired => Err(AdmissionError::NoLogin(descriptor.id.clone())),
    }
}

/// Builds the plan that takes a completion receipt: the runtime's one-shot
/// mode asked `prompt`, inside the read-only boundary, in `cwd` (a scratch
/// directory). Returns whether the boundary is enforced.
///
/// # Errors
/// `RECEIPT_UNAVAILABLE` when the runtime has no one-shot mode;
/// `PERMISSION_PROFILE_UNENFORCED` when it cannot hold the read-only
/// boundary and a weaker one is not accepted; a model the runtime does not
/// take.
pub fn plan_receipt(
    descriptor: &Descriptor,
    program: PathBuf,
    cwd: PathBuf,
    prompt: &str,
    model: Option<&str>,
    accept_weaker_boundary: bool,
    environment: &HostEnvironment,
) -> Result<(LaunchPlan, bool), AdmissionError> {
    let form = match &descriptor.receipt {
        ReceiptSupport::OneShot(form) => form,
        ReceiptSupport::Unavailable => {
            return Err(AdmissionError::Unsupported {
                limitation: limitation::RECEIPT_UNAVAILABLE,
                message: format!("runtime {} has no one-shot mode to take a completion receipt with", descriptor.id),
            })
        }
        ReceiptSupport::NotAnAgent => {
            return Err(AdmissionError::InvalidArgument(format!(
                "runtime {} is not an agent: it has no turns to take a completion receipt of",
                descriptor.id
            )))
        }
    };
    let read_only = descriptor.profile_form(PermissionProfile::ReadOnly);
    let boundary = form.read_only_args.as_ref().or(read_only.map(|profile| &profile.args));
    if boundary.is_none() && !accept_weaker_boundary {
        return Err(unenforced(descriptor, PermissionProfile::ReadOnly));
    }
    let mut args = Vec::new();
    for arg in &form.args {
        match arg.as_str() {
            PROMPT_PLACEHOLDER => args.push(prompt.to_owned()),
            READ_ONLY_PLACEHOLDER => args.extend(boundary.into_iter().flatten().cloned()),
            _ => args.push(arg.clone()),
        }
    }
    args.extend(descriptor.self_update_off.args.iter().cloned());
    args.extend(model_args(descriptor, model)?);
    let profile_environment = read_only.map(|profile| profile.environment.as_slice()).unwrap_or_default();
    let mut plan = plan(descriptor, LaunchPurpose::Receipt, program, args, cwd, environment, profile_environment);
    plan.completion = CompletionSignal::Unobserved;
    plan.permission_profile = boundary.map(|_| PermissionProfile::ReadOnly);
    plan.unenforced_profile = boundary.is_none().then_some(PermissionProfile::ReadOnly);
    Ok((plan, boundary.is_some()))
}

fn plan(
    descriptor: &Descriptor,
    purpose: LaunchPurpose,
    program: PathBuf,
    args: Vec<String>,
    cwd: PathBuf,
    environment: &HostEnvironment,
    launch_environment: &[(String, String)],
) -> LaunchPlan {
    let mut extra: Vec<(String, String)> = descriptor
        .reads_environment
        .iter()
        .filter_map(|name| environment.get(name).map(|value| (name.clone(), value.to_owned())))
        .collect();
    extra.extend(descriptor.environment.iter().cloned());
    extra.extend(descriptor.self_update_off.environment.iter().cloned());
    extra.extend(launch_environment.iter().cloned());
    LaunchPlan {
        runtime: descriptor.id.clone(),
        purpose,
        program,
        args,
        cwd,
        env: environment.launch_environment(&extra),
        interrupt_keys: descriptor.interrupt_keys.clone(),
        interrupt_presses: descriptor.interrupt_presses,
        completion: descriptor.completion,
        hook_injection: None,
        files: Vec::new(),
        drops_early_input: descriptor.drops_early_input,
        reads_raw_input: descriptor.reads_raw_input,
        ready_marker: descriptor.ready_marker.clone(),
        reference_capture: descriptor.reference_capture.clone(),
        reference_pattern: descriptor.reference_pattern.clone(),
        permission_profile: None,
        unenforced_profile: None,
        allow_refused_version: false,
    }
}

fn model_args(descriptor: &Descriptor, model: Option<&str>) -> Result<Vec<String>, AdmissionError> {
    match (&descriptor.model, model) {
        (ModelForm::NotTaken, None) | (ModelForm::Optional { .. }, None) => Ok(Vec::new()),
        (ModelForm::Required { .. }, None) => Err(AdmissionError::Unsupported {
            limitation: limitation::START_REQUIRES_RESOLVED_MODEL,
            message: format!("runtime {} needs a model to start", descriptor.id),
        }),
        (ModelForm::NotTaken, Some(_)) => {
            Err(AdmissionError::InvalidArgument(format!("runtime {} does not take a model", descriptor.id)))
        }
        (ModelForm::Optional { flag } | ModelForm::Required { flag }, Some(model)) => {
            if !is_plain_value(model) {
                return Err(AdmissionError::InvalidArgument(format!(
                    "model {:?} is not a plain value",
                    truncate(model)
                )));
            }
            Ok(vec![flag.clone(), model.to_owned()])
        }
    }
}

/// The arguments, mode and placement of a resume.
fn resume_args(
    descriptor: &Descriptor,
    resume: &ResumeRequest,
) -> Result<(ResumeMode, Vec<String>, bool), AdmissionError> {
    match resume {
        ResumeRequest::Reference(reference) => {
            let form = descriptor
                .resume_form(ResumeMode::Reference)
                .ok_or_else(|| refusal(descriptor, "an exact session reference"))?;
            let accepted = descriptor.reference_pattern.as_ref().is_some_and(|pattern| pattern.accepts(reference));
            if !accepted {
                return Err(AdmissionError::InvalidArgument(format!(
                    "{:?} is not a session reference runtime {} accepts",
                    truncate(reference),
                    descriptor.id
                )));
            }
            let args = form.args.iter().map(|arg| arg.replace(REFERENCE_PLACEHOLDER, reference)).collect();
            Ok((ResumeMode::Reference, args, form.leads))
        }
        ResumeRequest::Latest => {
            let form = descriptor.resume_form(ResumeMode::ProviderSelection).ok_or_else(|| {
                if descriptor.resume_form(ResumeMode::Reference).is_some() {
                    AdmissionError::Unsupported {
                        limitation: limitation::PROVIDER_SELECTION_UNSUPPORTED,
                        message: format!(
                            "runtime {} resumes exact references only, not its latest session",
                            descriptor.id
                        ),
                    }
                } else {
                    refusal(descriptor, "its latest session")
                }
            })?;
            Ok((ResumeMode::ProviderSelection, form.args.clone(), form.leads))
        }
    }
}

/// The refusal of a resume the runtime has no form for, naming the
/// limitation that explains it.
fn refusal(descriptor: &Descriptor, wanted: &str) -> AdmissionError {
    let has = |mode| descriptor.resume_form(mode).is_some();
    let limitation = if has(ResumeMode::ProviderSelection) {
        limitation::PROVIDER_SELECTION_ONLY
    } else if has(ResumeMode::InteractivePicker) {
        limitation::PROVIDER_SELECTION_INTERACTIVE_PICKER
    } else {
        limitation::NATIVE_RESUME_UNSUPPORTED
    };
    AdmissionError::Unsupported { limitation, message: format!("runtime {} cannot resume {wanted}", descriptor.id) }
}

/// A value that cannot be mistaken for a flag or split into several.
fn is_plain_value(value: &str) -> bool {
    !value.is_empty()
        && value.len() <= MAX_REFERENCE_LEN
        && !value.starts_with('-')
        && value.chars().all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '/' | ':' | '@'))
}

fn truncate(text: &str) -> String {
    text.chars().take(64).collect()
}
