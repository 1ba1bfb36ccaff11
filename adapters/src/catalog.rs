//! The set of runtimes a host can start, and the order in which a start
//! request is checked against them.

use crate::admission::AdmissionError;
use crate::completion::HookInjection;
use crate::descriptor::{CommandPolicy, Descriptor, Executable, PermissionProfile};
use crate::environment::HostEnvironment;
use crate::launch_plan::{LaunchPlan, LaunchPurpose};
use crate::launcher::{self, StartRequest};
use crate::resolve::resolve_executable;
use crate::runtimes;
use panehost_ipc::StartParams;
use std::path::{Path, PathBuf};

/// The runtimes a host knows, with the host environment they launch from.
#[derive(Debug, Clone)]
pub struct Catalog {
    descriptors: Vec<Descriptor>,
    environment: HostEnvironment,
}

impl Catalog {
    /// The built-in runtimes, launching from `environment`.
    pub fn built_in(environment: HostEnvironment) -> Self {
        Catalog { descriptors: runtimes::built_in(), environment }
    }

    /// A catalog of exactly these descriptors.
    pub fn new(descriptors: Vec<Descriptor>, environment: HostEnvironment) -> Self {
        Catalog { descriptors, environment }
    }

    /// Every descriptor, in the order `runtimes` reports them.
    pub fn descriptors(&self) -> &[Descriptor] {
        &self.descriptors
    }

    /// The descriptor with this id.
    pub fn descriptor(&self, id: &str) -> Option<&Descriptor> {
        self.descriptors.iter().find(|descriptor| descriptor.id == id)
    }

    /// The environment launches are built from.
    pub fn environment(&self) -> &HostEnvironment {
        &self.environment
    }

    /// Where the runtime's executable is, if it is installed.
    pub fn resolve(&self, descriptor: &Descriptor) -> Option<PathBuf> {
        match &descriptor.executable {
            Executable::Named { names, known_paths } => {
                let home = self.environment.home();
                let known: Vec<String> = known_paths.iter().map(|path| expand_home(path, &home)).collect();
                let known: Vec<&str> = known.iter().map(String::as_str).collect();
                names.iter().find_map(|name| resolve_executable(name, self.environment.get("PATH"), &known))
            }
            Executable::FromVariable { variable, fallback } => {
                let named = self.environment.get(variable).unwrap_or(fallback);
                resolve_executable(named, None, &[]).or_else(|| resolve_executable(fallback, None, &[]))
            }
        }
    }

    /// Why the runtime's executable was not found, naming where the host
    /// looked: the directories of its search path and the known paths.
    pub fn not_found_reason(&self, descriptor: &Descriptor) -> String {
        match &descriptor.executable {
            Executable::Named { names, known_paths } => {
                let home = self.environment.home();
                let known: Vec<String> = known_paths.iter().map(|path| expand_home(path, &home)).collect();
                let searched = match self.environment.get("PATH") {
                    Some(path) => format!("PATH ({path})"),
                    None => "PATH (unset)".to_owned(),
                };
                if known.is_empty() {
                    format!("none of {names:?} was found on {searched}")
                } else {
                    format!("none of {names:?} was found on {searched} or at {}", known.join(", "))
                }
            }
            Executable::FromVariable { variable, fallback } => {
                format!("neither ${variable} nor {fallback} is executable")
            }
        }
    }

    /// This catalog as a client sees the machine: the host's own `PATH`,
    /// then the directories of `client_path` (the client's `PATH`) that it
    /// lacks, each once; launches built from it get that `PATH` too, so a
    /// CLI installed after the host started in a directory only the client
    /// searches (and an interpreter installed beside it) is found and runs.
    /// The host's directories come first: what the host found before it
    /// still finds, whichever client asks. Only absolute directories of the
    /// client's are taken: a relative one means the client's working
    /// directory, which the host does not share. `None` when the client's
    /// `PATH` adds no directory.
    pub fn with_client_search_path(&self, client_path: &str) -> Option<Catalog> {
        let host_path = self.environment.get("PATH").unwrap_or("");
        let host_dirs: Vec<&str> = host_path.split(':').filter(|dir| !dir.is_empty()).collect();
        let mut added: Vec<&str> = Vec::new();
        for dir in client_path.split(':').filter(|dir| dir.starts_with('/')) {
            if !host_dirs.contains(&dir) && !added.contains(&dir) {
                added.push(dir);
            }
        }
        if added.is_empty() {
            return None;
        }
        let combined = if host_dirs.is_empty() {
            added.join(":")
        } else {
            format!("{}:{}", host_path.trim_end_matches(':'), added.join(":"))
        };
        let mut environment = self.environment.clone();
        environment.variables.insert("PATH".to_owned(), combined);
        Some(Catalog { descriptors: self.descriptors.clone(), environment })
    }

    /// Checks a start request and builds what to spawn. Refusals come in a
    /// fixed order: unknown runtime, not available, not supported (before
    /// any argv is built), then the request's own fields. Nothing is
    /// spawned here.
    ///
    /// # Errors
    /// Returns the [`AdmissionError`] that explains the refusal.
    pub fn admit(&self, params: &StartParams) -> Result<LaunchPlan, AdmissionError> {
        let (descriptor, program) = self.admit_runtime(&params.runtime)?;
        let cwd = self.working_directory(params.cwd.as_deref())?;
        let permission_profile = permission_profile(params.permission_profile.as_deref())?;
        if !params.env.is_empty() && !descriptor.takes_client_environment() {
            return Err(AdmissionError::InvalidArgument(format!(
                "runtime {} builds its environment from scratch and takes none from a client; `env` is for \
                 `shell` and runtimes from the configuration file",
                descriptor.id
            )));
        }
        let mut plan = self.plan_admitted(descriptor, program, cwd, permission_profile, params)?;
        // Over what the host sets; the host's own PANEHOST_ variables are
        // added at spawn, and a client may not name them (`check_client_env`).
        for (name, value) in &params.env {
            plan.env.retain(|(existing, _)| existing != name);
            plan.env.push((name.clone(), value.clone()));
        }
        plan.allow_refused_version = params.allow_refused_version;
        Ok(plan)
    }

    fn plan_admitted(
        &self,
        descriptor: &Descriptor,
        program: PathBuf,
        cwd: PathBuf,
        permission_profile: Option<PermissionProfile>,
        params: &StartParams,
    ) -> Result<LaunchPlan, AdmissionError> {
        match (descriptor.command_policy, params.command.split_first()) {
            (CommandPolicy::ClientMayGiveCommand, Some((command, command_args))) => {
                if params.resume.is_some() || params.model.is_some() {
                    return Err(AdmissionError::InvalidArgument("a command takes no model and no resume".into()));
                }
                // No profile's arguments apply to a client's own command.
                if let Some(profile) = permission_profile.filter(|_| !params.accept_weaker_boundary) {
                    return Err(launcher::unenforced(descriptor, profile));
                }
                let program = resolve_executable(command, self.environment.get("PATH"), &[]).ok_or_else(|| {
                    AdmissionError::InvalidArgument(format!("command {command:?} was not found on PATH"))
                })?;
                let mut plan =
                    launcher::plan_start(descriptor, program, cwd, &StartRequest::default(), &self.environment)?;
                plan.args = command_args.to_vec();
                plan.purpose = LaunchPurpose::Start;
                // A client's own command runs as given: no prompt marks.
                if plan.hook_injection == Some(HookInjection::BashPromptMarks) {
                    plan.hook_injection = None;
                    plan.files.clear();
                    plan.completion = descriptor.completion;
                }
                plan.unenforced_profile = permission_profile;
                Ok(plan)
            }
            (CommandPolicy::HostBuildsArgv, Some(_)) => Err(AdmissionError::InvalidArgument(format!(
                "runtime {} does not take a command: the host builds its argv",
                descriptor.id
            ))),
            (_, None) => {
                let request = StartRequest {
                    model: params.model.clone(),
                    resume: params.resume.clone(),
                    permission_profile,
                    accept_weaker_boundary: params.accept_weaker_boundary,
                };
                launcher::plan_start(descriptor, program, cwd, &request, &self.environment)
            }
        }
    }

    /// Checks a login request and builds the plan of the runtime's own
    /// sign-in, in the same refusal order as [`admit`](Self::admit).
    ///
    /// # Errors
    /// Returns the [`AdmissionError`] that explains the refusal.
    pub fn admit_login(&self, runtime: &str, cwd: Option<&str>) -> Result<LaunchPlan, AdmissionError> {
        let (descriptor, program) = self.admit_runtime(runtime)?;
        let cwd = self.working_directory(cwd)?;
        launcher::plan_login(descriptor, program, cwd, &self.environment)
    }

    /// Checks a receipt probe and builds its one-shot plan in `scratch`,
    /// in the same refusal order as [`admit`](Self::admit); the second
    /// value tells whether the read-only boundary is enforced.
    ///
    /// # Errors
    /// Returns the [`AdmissionError`] that explains the refusal.
    pub fn admit_receipt(
        &self,
        runtime: &str,
        scratch: PathBuf,
        prompt: &str,
        model: Option<&str>,
        accept_weaker_boundary: bool,
    ) -> Result<(LaunchPlan, bool), AdmissionError> {
        let (descriptor, program) = self.admit_runtime(runtime)?;
        launcher::plan_receipt(descriptor, program, scratch, prompt, model, accept_weaker_boundary, &self.environment)
    }

    fn admit_runtime(&self, runtime: &str) -> Result<(&Descriptor, PathBuf), AdmissionError> {
        let descriptor = self.descriptor(runtime).ok_or_else(|| AdmissionError::UnknownRuntime(runtime.to_owned()))?;
        let program = self.resolve(descriptor).ok_or_else(|| AdmissionError::NotAvailable {
            runtime: descriptor.id.clone(),
            reason: self.not_found_reason(descriptor),
        })?;
        if !descriptor.supported {
            return Err(AdmissionError::NotSupported(descriptor.id.clone()));
        }
        Ok((descriptor, program))
    }

    fn working_directory(&self, requested: Option<&str>) -> Result<PathBuf, AdmissionError> {
        let cwd = requested.map(PathBuf::from).unwrap_or_else(|| self.environment.home());
        if !cwd.is_absolute() {
            return Err(AdmissionError::InvalidArgument(format!(
                "working directory {} is not absolute",
                cwd.display()
            )));
        }
        if !Path::new(&cwd).is_dir() {
            return Err(AdmissionError::InvalidArgument(format!(
                "working directory {} is not a directory",
                cwd.display()
            )));
        }
        Ok(cwd)
    }
}

/// The permission profile a start names, if any.
fn permission_profile(name: Option<&str>) -> Result<Option<PermissionProfile>, AdmissionError> {
    let Some(name) = name else { return Ok(None) };
    PermissionProfile::parse(name).map(Some).ok_or_else(|| {
        let known: Vec<&str> = PermissionProfile::ALL.iter().map(|profile| profile.as_str()).collect();
        let shown: String = name.chars().take(64).collect();
        AdmissionError::InvalidArgument(format!(
            "{shown:?} is not a permission profile; the profiles are {}",
            known.join(", ")
        ))
    })
}

fn expand_home(path: &str, home: &Path) -> String {
    match path.strip_prefix("~/") {
        Some(rest) => home.join(rest).display().to_string(),
        None => path.to_owned(),
    }
}

#[cfg(test)]
mod client_search_path_tests {
    use super::*;

    fn catalog_with_path(path: &str) -> Catalog {
        let mut environment = HostEnvironment::default();
        environment.variables.insert("PATH".to_owned(), path.to_owned());
        environment.variables.insert("HOME".to_owned(), "/home/ada".to_owned());
        Catalog::built_in(environment)
    }

    #[test]
    fn the_clients_directories_follow_the_hosts_each_once_and_only_absolute_ones() {
        let catalog = catalog_with_path("/usr/bin:/bin");
        let seen =
            catalog.with_client_search_path("/opt/new/bin:.:bin:/usr/bin::/home/ada/.npm/bin:/opt/new/bin").unwrap();
        assert_eq!(seen.environment().get("PATH"), Some("/usr/bin:/bin:/opt/new/bin:/home/ada/.npm/bin"));
        assert!(catalog.with_client_search_path("/usr/bin:/bin").is_none());
        assert!(catalog.with_client_search_path("relative:.").is_none());
    }

    #[test]
    fn a_runtime_not_found_says_where_the_host_looked() {
        let catalog = catalog_with_path("/usr/bin:/bin");
        let claude = catalog.descriptor("claude").unwrap();
        let reason = catalog.not_found_reason(claude);
        assert!(reason.contains("PATH (/usr/bin:/bin)"), "{reason}");
        assert!(reason.contains("/home/ada/"), "the known paths, expanded: {reason}");
    }
}
