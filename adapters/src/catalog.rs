//! The set of runtimes a host can start, and admission of start requests.

use crate::admission::AdmissionError;
use crate::descriptor::{CommandPolicy, Descriptor, Executable, ResumeMode, REFERENCE_PLACEHOLDER};
use crate::environment::HostEnvironment;
use crate::launch_plan::LaunchPlan;
use crate::resolve::resolve_executable;
use crate::runtimes;
use panehost_ipc::{limitation, ResumeRequest, RuntimeInfo, StartParams};
use std::path::{Path, PathBuf};

/// Longest resume reference accepted before the descriptor's own pattern
/// is even consulted.
const MAX_REFERENCE_LEN: usize = 256;

/// The runtimes a host knows, with the host environment they launch from.
#[derive(Debug, Clone)]
pub struct Catalog {
    descriptors: Vec<Descriptor>,
    environment: HostEnvironment,
}

impl Catalog {
    /// The built-in runtimes, launching from `environment`.
    pub fn built_in(environment: HostEnvironment) -> Self {
        Catalog { descriptors: runtimes::BUILT_IN.to_vec(), environment }
    }

    /// A catalog of exactly these descriptors.
    pub fn new(descriptors: Vec<Descriptor>, environment: HostEnvironment) -> Self {
        Catalog { descriptors, environment }
    }

    /// The descriptor with this id.
    pub fn descriptor(&self, id: &str) -> Option<&Descriptor> {
        self.descriptors.iter().find(|descriptor| descriptor.id == id)
    }

    /// Every runtime as `runtimes` reports it.
    pub fn runtime_infos(&self) -> Vec<RuntimeInfo> {
        self.descriptors
            .iter()
            .map(|descriptor| {
                let path = self.resolve(descriptor);
                RuntimeInfo {
                    id: descriptor.id.to_owned(),
                    display_name: descriptor.display_name.to_owned(),
                    supported: descriptor.supported,
                    available: path.is_some(),
                    unavailable_reason: path.is_none().then(|| not_found_reason(descriptor)),
                    path: path.map(|path| path.display().to_string()),
                    version: None,
                    resume_modes: descriptor.resume_forms.iter().map(|form| form.mode.as_str().to_owned()).collect(),
                    limitations: descriptor.limitations.iter().map(|code| (*code).to_owned()).collect(),
                }
            })
            .collect()
    }

    /// Checks a start request and builds what to spawn. Refusals come in a
    /// fixed order: unknown runtime, not available, not supported, then the
    /// request's own fields. Nothing is spawned here.
    ///
    /// # Errors
    /// Returns the [`AdmissionError`] that explains the refusal.
    pub fn admit(&self, params: &StartParams) -> Result<LaunchPlan, AdmissionError> {
        let descriptor = self
            .descriptor(&params.runtime)
            .ok_or_else(|| AdmissionError::UnknownRuntime(params.runtime.clone()))?;
        let program = self.resolve(descriptor).ok_or_else(|| AdmissionError::NotAvailable {
            runtime: descriptor.id.to_owned(),
            reason: not_found_reason(descriptor),
        })?;
        if !descriptor.supported {
            return Err(AdmissionError::NotSupported(descriptor.id.to_owned()));
        }
        let cwd = self.working_directory(params.cwd.as_deref())?;
        let (program, args) = match (descriptor.command_policy, params.command.split_first()) {
            (CommandPolicy::ClientMayGiveCommand, Some((command, command_args))) => {
                let search_path = self.environment.get("PATH");
                let program = resolve_executable(command, search_path, &[]).ok_or_else(|| {
                    AdmissionError::InvalidArgument(format!("command {command:?} was not found on PATH"))
                })?;
                (program, command_args.to_vec())
            }
            (CommandPolicy::HostBuildsArgv, Some(_)) => {
                return Err(AdmissionError::InvalidArgument(format!(
                    "runtime {} does not take a command: the host builds its argv",
                    descriptor.id
                )))
            }
            (_, None) => (program, self.runtime_args(descriptor, params)?),
        };
        let extra: Vec<(String, String)> =
            descriptor.environment.iter().map(|(name, value)| ((*name).to_owned(), (*value).to_owned())).collect();
        Ok(LaunchPlan {
            runtime: descriptor.id.to_owned(),
            program,
            args,
            cwd,
            env: self.environment.launch_environment(&extra),
            interrupt_keys: descriptor.interrupt_keys.to_vec(),
        })
    }

    fn runtime_args(&self, descriptor: &Descriptor, params: &StartParams) -> Result<Vec<String>, AdmissionError> {
        let mut args: Vec<String> = descriptor.base_args.iter().map(|arg| (*arg).to_owned()).collect();
        if let Some(model) = &params.model {
            let flag = descriptor.model_flag.ok_or_else(|| {
                AdmissionError::InvalidArgument(format!("runtime {} does not take a model", descriptor.id))
            })?;
            if !is_plain_value(model) {
                return Err(AdmissionError::InvalidArgument(format!("model {model:?} is not a plain value")));
            }
            args.push(flag.to_owned());
            args.push(model.clone());
        }
        if let Some(resume) = &params.resume {
            args.extend(resume_args(descriptor, resume)?);
        }
        Ok(args)
    }

    fn resolve(&self, descriptor: &Descriptor) -> Option<PathBuf> {
        match descriptor.executable {
            Executable::Named { names, known_paths } => names
                .iter()
                .find_map(|name| resolve_executable(name, self.environment.get("PATH"), known_paths)),
            Executable::FromVariable { variable, fallback } => {
                let named = self.environment.get(variable).unwrap_or(fallback);
                resolve_executable(named, None, &[]).or_else(|| resolve_executable(fallback, None, &[]))
            }
        }
    }

    fn working_directory(&self, requested: Option<&str>) -> Result<PathBuf, AdmissionError> {
        let cwd = requested.map(PathBuf::from).unwrap_or_else(|| self.environment.home());
        if !cwd.is_absolute() {
            return Err(AdmissionError::InvalidArgument(format!("working directory {} is not absolute", cwd.display())));
        }
        if !Path::new(&cwd).is_dir() {
            return Err(AdmissionError::InvalidArgument(format!("working directory {} is not a directory", cwd.display())));
        }
        Ok(cwd)
    }
}

fn resume_args(descriptor: &Descriptor, resume: &ResumeRequest) -> Result<Vec<String>, AdmissionError> {
    let has = |mode| descriptor.resume_form(mode).is_some();
    let refusal = |wanted: &str| {
        let limitation = if descriptor.resume_forms.is_empty() {
            limitation::NATIVE_RESUME_UNSUPPORTED
        } else if has(ResumeMode::ProviderSelection) {
            limitation::PROVIDER_SELECTION_ONLY
        } else if has(ResumeMode::InteractivePicker) {
            limitation::PROVIDER_SELECTION_INTERACTIVE_PICKER
        } else {
            limitation::NATIVE_RESUME_UNSUPPORTED
        };
        AdmissionError::Unsupported {
            limitation,
            message: format!("runtime {} cannot resume {wanted}", descriptor.id),
        }
    };
    match resume {
        ResumeRequest::Reference(reference) => {
            let form = descriptor.resume_form(ResumeMode::Reference).ok_or_else(|| refusal("an exact session reference"))?;
            if reference.len() > MAX_REFERENCE_LEN || !(descriptor.reference_is_valid)(reference) {
                return Err(AdmissionError::InvalidArgument(format!(
                    "{:?} is not a session reference runtime {} accepts",
                    truncate(reference),
                    descriptor.id
                )));
            }
            Ok(form
                .args
                .iter()
                .map(|arg| if *arg == REFERENCE_PLACEHOLDER { reference.clone() } else { (*arg).to_owned() })
                .collect())
        }
        ResumeRequest::Latest => {
            let form = descriptor
                .resume_form(ResumeMode::ProviderSelection)
                .ok_or_else(|| refusal("its latest session"))?;
            Ok(form.args.iter().map(|arg| (*arg).to_owned()).collect())
        }
    }
}

fn not_found_reason(descriptor: &Descriptor) -> String {
    match descriptor.executable {
        Executable::Named { names, .. } => format!("none of {names:?} was found on PATH or at a known path"),
        Executable::FromVariable { variable, fallback } => format!("neither ${variable} nor {fallback} is executable"),
    }
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
