//! The declaration of one runtime: data only. What a declaration means for
//! a launch is the [launcher](crate::launcher)'s business.

use crate::reference_pattern::ReferencePattern;
use panehost_ipc::runtime::{evidence, permission_profile, resume_mode};
use panehost_ipc::turn::completion;

/// How a runtime's executable is found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Executable {
    /// The first of these names found on `PATH`, then the known paths.
    Named {
        /// Executable names, in order of preference.
        names: Vec<String>,
        /// Absolute paths tried after `PATH` (`~/` means the user's home).
        known_paths: Vec<String>,
    },
    /// The program an environment variable of the host names (the user's
    /// shell), else a fallback path.
    FromVariable {
        /// The variable, such as `SHELL`.
        variable: String,
        /// Used when the variable is unset.
        fallback: String,
    },
}

/// How the version is read, and the oldest version the adapter's flags are
/// known to hold for.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct VersionProbe {
    /// Arguments that make the CLI print its version and exit; empty when
    /// the runtime has no version to probe.
    pub args: Vec<String>,
    /// The version floor, as dotted numbers (`2.1.197`).
    pub floor: Option<String>,
}

/// Versions an adapter refuses to start, and why: releases known to do
/// harm when started as panehost starts them (a retirement release that
/// runs a remote installer, say). Detection reports such a version as not
/// ready; a start is refused unless the client allows a refused version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RefusedVersions {
    /// The first version refused, as dotted numbers (`1.52.0`).
    pub from: String,
    /// The first version no longer refused; `None`: every later one is.
    pub before: Option<String>,
    /// Why, for people.
    pub reason: String,
}

impl RefusedVersions {
    /// Whether `version` (a CLI's output, read as [`crate::version`]
    /// reads it) falls in the range. A version that cannot be read is not
    /// in any range: it is judged `indeterminate` instead.
    pub fn contains(&self, version: &str) -> bool {
        let Some(version) = crate::version::parse_version(version) else { return false };
        let at_or_after = |bound: &str| {
            crate::version::parse_version(bound)
                .is_some_and(|bound| crate::version::compare(&version, &bound) != std::cmp::Ordering::Less)
        };
        at_or_after(&self.from) && !self.before.as_deref().is_some_and(at_or_after)
    }

    /// The range as people read it: `from 1.52.0`, `1.51.0 to before 1.53.0`.
    pub fn describe(&self) -> String {
        match &self.before {
            None => format!("from {}", self.from),
            Some(before) => format!("{} to before {before}", self.from),
        }
    }
}

/// Whether a client may name the command a pane runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommandPolicy {
    /// A client may give a command (program and arguments) to run instead
    /// of the runtime's default; used by `shell` only.
    ClientMayGiveCommand,
    /// The host builds the whole argv; a client-given command is refused.
    HostBuildsArgv,
}

/// How a model is chosen at start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelForm {
    /// The CLI takes no model on its command line.
    NotTaken,
    /// `flag MODEL` when a model is given; the CLI's own default otherwise.
    Optional {
        /// The flag, such as `--model`.
        flag: String,
    },
    /// A start must name a model (`flag MODEL`).
    Required {
        /// The flag.
        flag: String,
    },
}

/// A native-resume mode, as the protocol names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResumeMode {
    /// Resume an exact recorded session reference.
    Reference,
    /// The CLI picks ("continue the latest").
    ProviderSelection,
    /// The CLI opens an interactive picker.
    InteractivePicker,
}

impl ResumeMode {
    /// Every mode, in the order they are reported.
    pub const ALL: [ResumeMode; 3] =
        [ResumeMode::Reference, ResumeMode::ProviderSelection, ResumeMode::InteractivePicker];

    /// The mode's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ResumeMode::Reference => resume_mode::REFERENCE,
            ResumeMode::ProviderSelection => resume_mode::PROVIDER_SELECTION,
            ResumeMode::InteractivePicker => resume_mode::INTERACTIVE_PICKER,
        }
    }
}

/// The placeholder a `Reference` resume form's arguments carry.
pub const REFERENCE_PLACEHOLDER: &str = "{reference}";

/// How a runtime resumes in one mode: arguments added to the start
/// arguments. In `Reference` mode, an argument containing `{reference}` has
/// it replaced by the validated reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResumeForm {
    /// The mode.
    pub mode: ResumeMode,
    /// The arguments.
    pub args: Vec<String>,
    /// True when the arguments are a subcommand that leads the argv (the
    /// start arguments follow them); false when they follow the start
    /// arguments.
    pub leads: bool,
}

/// What an agent may do, as a start asks for it. Each runtime maps the
/// profiles it can enforce onto its own sandbox and approval controls, for
/// one launch, through its arguments and environment; the user's own
/// configuration is never touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PermissionProfile {
    /// The agent may read, but not write files or run mutating commands.
    ReadOnly,
    /// The agent may write inside the working directory and run commands
    /// there, asking before anything outside it.
    WorkspaceWrite,
    /// No sandbox and no approvals.
    FullAccess,
}

impl PermissionProfile {
    /// Every profile, from the narrowest to the widest.
    pub const ALL: [PermissionProfile; 3] =
        [PermissionProfile::ReadOnly, PermissionProfile::WorkspaceWrite, PermissionProfile::FullAccess];

    /// What a start that names no profile gets, on every runtime that
    /// enforces it: the agent writes inside the working directory and asks
    /// before anything outside it. One meaning for every CLI and version:
    /// a CLI release that changes the CLI's own default (to an auto-approval
    /// mode, say) does not change what "no profile" means.
    pub const HOST_DEFAULT: PermissionProfile = PermissionProfile::WorkspaceWrite;

    /// The profile's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            PermissionProfile::ReadOnly => permission_profile::READ_ONLY,
            PermissionProfile::WorkspaceWrite => permission_profile::WORKSPACE_WRITE,
            PermissionProfile::FullAccess => permission_profile::FULL_ACCESS,
        }
    }

    /// The profile with this wire name.
    pub fn parse(name: &str) -> Option<PermissionProfile> {
        PermissionProfile::ALL.into_iter().find(|profile| profile.as_str() == name)
    }
}

/// How a runtime enforces one permission profile: what a launch with it
/// adds to the arguments (after the self-update arguments) and to the
/// environment.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProfileForm {
    /// Arguments added to the start arguments.
    pub args: Vec<String>,
    /// Variables set for the launch.
    pub environment: Vec<(String, String)>,
}

/// The strongest signal of a finished turn the host uses for a runtime.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CompletionSignal {
    /// The CLI's own hooks, pointed at the host.
    Hook,
    /// The CLI's notify program, pointed at the host.
    NotifyProgram,
    /// Terminal notifications in the output (OSC 9, OSC 777, BEL).
    TerminalNotification,
    /// A screen-stability heuristic.
    ScreenHeuristic,
    /// Nothing: the host cannot tell when a turn ends.
    Unobserved,
    /// Prompt marks (OSC 133) of a shell the host set up: the end of each
    /// command, with its exit status.
    ShellIntegration,
}

impl CompletionSignal {
    /// The signal's name in reports.
    pub fn as_str(self) -> &'static str {
        match self {
            CompletionSignal::Hook => completion::HOOK,
            CompletionSignal::NotifyProgram => completion::NOTIFY_PROGRAM,
            CompletionSignal::TerminalNotification => completion::TERMINAL_NOTIFICATION,
            CompletionSignal::ScreenHeuristic => completion::SCREEN_HEURISTIC,
            CompletionSignal::Unobserved => completion::UNOBSERVED,
            CompletionSignal::ShellIntegration => completion::SHELL_INTEGRATION,
        }
    }

    /// True when the signal reports the end of a turn an interrupt stopped,
    /// as it reports any other end: then output going quiet after an
    /// interrupt proves nothing (the program may run on in silence), and
    /// only the signal, or the program's end, confirms the stop. Hooks and
    /// notify programs of CLIs do not fire for a cancelled turn, and a
    /// terminal notification may not come; prompt marks always do.
    pub fn ends_interrupted_turns(self) -> bool {
        match self {
            CompletionSignal::ShellIntegration => true,
            CompletionSignal::Hook
            | CompletionSignal::NotifyProgram
            | CompletionSignal::TerminalNotification
            | CompletionSignal::ScreenHeuristic
            | CompletionSignal::Unobserved => false,
        }
    }
}

/// How a user signs in to the runtime's provider.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LoginForm {
    /// An interactive sign-in that runs in the terminal: the CLI with these
    /// arguments (possibly none: the CLI's first screen signs in).
    InTerminal {
        /// Arguments after the program.
        args: Vec<String>,
    },
    /// Signing in happens outside the terminal (a browser, a web console,
    /// a configuration file).
    OutsideTerminal,
    /// The runtime needs no sign-in.
    NotRequired,
}

/// Where a signed-in user leaves a trace that can be read without asking
/// the provider anything: credential files the CLI's own sign-in writes, and
/// variables that carry a key. Only whether they exist is looked at; their
/// contents are never read.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SignInTraces {
    /// The variable that moves the CLI's configuration directory, if any.
    pub config_dir_variable: Option<String>,
    /// The configuration directory when that variable is not set, relative
    /// to the home directory.
    pub config_dir: String,
    /// Files in the configuration directory that the CLI's sign-in writes.
    pub credential_files: Vec<String>,
    /// Variables that hold a key or token the CLI signs in with.
    pub credential_variables: Vec<String>,
}

/// How the CLI answers one prompt with no terminal, for the completion
/// receipt (see [`crate::receipt`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiptForm {
    /// The command line after the program: [`PROMPT_PLACEHOLDER`] stands
    /// for the prompt and [`READ_ONLY_PLACEHOLDER`] for the arguments that
    /// hold the read-only boundary.
    pub args: Vec<String>,
    /// The read-only boundary in this mode, when it is not the interactive
    /// read-only profile's arguments (a one-shot mode may not take them
    /// all).
    pub read_only_args: Option<Vec<String>>,
}

/// Whether and how a completion receipt can be taken.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReceiptSupport {
    /// Not an agent (a shell): it has no turns to prove, and readiness
    /// does not ask for a receipt.
    NotAnAgent,
    /// An agent with no one-shot mode: no receipt can be taken, and it
    /// declares `RECEIPT_UNAVAILABLE`.
    Unavailable,
    /// An agent whose one-shot mode takes the receipt.
    OneShot(ReceiptForm),
}

/// Stands for the prompt in a [`ReceiptForm`].
pub const PROMPT_PLACEHOLDER: &str = "{prompt}";
/// Stands for the read-only boundary's arguments in a [`ReceiptForm`].
pub const READ_ONLY_PLACEHOLDER: &str = "{read_only}";

/// What switches off a CLI's own self-update for a launch.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct SelfUpdateOff {
    /// Arguments added to every launch.
    pub args: Vec<String>,
    /// Variables set for every launch.
    pub environment: Vec<(String, String)>,
    /// What is known when neither can do it (for example "settings file
    /// only"), for the reports.
    pub note: Option<String>,
}

/// Where the facts a descriptor relies on come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Evidence {
    /// Checked against the real CLI's help, recorded in
    /// `adapters/evidence/<file>`.
    CapturedHelp {
        /// The record's file name.
        file: String,
    },
    /// Declared from the CLI's public documentation; not checked here.
    Documentation,
    /// A program of this repository, exercised by its own tests.
    ThisRepository,
    /// Declared by an operator in the configuration file.
    Operator,
}

impl Evidence {
    /// The evidence kind's name in reports.
    pub fn kind(&self) -> &'static str {
        match self {
            Evidence::CapturedHelp { .. } => evidence::CAPTURED_HELP,
            Evidence::Documentation => evidence::DOCUMENTATION,
            Evidence::ThisRepository => evidence::THIS_REPOSITORY,
            Evidence::Operator => evidence::OPERATOR,
        }
    }
}

/// Everything panehost knows about one runtime.
#[derive(Debug, Clone)]
pub struct Descriptor {
    /// The id clients use, such as `shell`.
    pub id: String,
    /// A name for people.
    pub display_name: String,
    /// How the executable is found.
    pub executable: Executable,
    /// How the version is read, and the floor.
    pub version: VersionProbe,
    /// Whether policy allows starting it.
    pub supported: bool,
    /// Whether clients may give the command.
    pub command_policy: CommandPolicy,
    /// Arguments every start passes first.
    pub base_args: Vec<String>,
    /// How a model is chosen.
    pub model: ModelForm,
    /// Native-resume forms; empty when the CLI cannot resume.
    pub resume_forms: Vec<ResumeForm>,
    /// What a reference must match, whole, before it reaches argv.
    pub reference_pattern: Option<ReferencePattern>,
    /// Resume by exact reference has been proven with the real program:
    /// the fixture agent's by this repository's end-to-end tests, an agent
    /// CLI's by the live-proof runner (`tests/live-records/`). A launcher
    /// that resumes references without it implies
    /// `REFERENCE_PENDING_LIVE_PROOF` ([`crate::contract`]).
    pub references_proven_live: bool,
    /// Bytes that ask the CLI to stop what it is doing.
    pub interrupt_keys: Vec<u8>,
    /// How many times the keys must be pressed (a short gap apart).
    pub interrupt_presses: u8,
    /// The keys stop the answer on the screen but leave the CLI's request
    /// to the model open (seen live); declared as `INTERRUPT_KEEPS_REQUEST`.
    pub interrupt_keeps_request: bool,
    /// How the end of a turn is observed.
    pub completion: CompletionSignal,
    /// How the CLI's hooks are pointed at the host, for `Hook` and
    /// `NotifyProgram` completion.
    pub hook_injection: Option<crate::completion::HookInjection>,
    /// The hooks themselves, when `hook_injection` is
    /// [`HookInjection::Declared`](crate::completion::HookInjection::Declared).
    pub declared_hooks: Option<crate::completion::DeclaredHooks>,
    /// The CLI loses input typed before its prompt is drawn: a send waits
    /// until the pane has shown output and gone quiet.
    pub drops_early_input: bool,
    /// The CLI reads its keys itself, with the terminal in raw mode (a
    /// full-screen program): until it has put the terminal so, what is
    /// typed goes to the terminal's own line editing, which turns the
    /// Enter into a newline the CLI does not take as Enter. A submission
    /// waits until the terminal is in raw mode.
    pub reads_raw_input: bool,
    /// Text the CLI's screen shows once its input box reads a submission
    /// (an input box's placeholder, on one line): the first submission
    /// waits, once the terminal is in raw mode, until the screen shows it
    /// and the output has then been quiet a moment. Without one, it waits
    /// until the output has been quiet a moment, which a CLI that prints a
    /// line, pauses, and only then draws its input box passes too early
    /// (Qwen Code 0.24.4 in the canary's sandbox: what was typed in the
    /// pause was lost).
    pub ready_marker: Option<String>,
    /// How a user signs in.
    pub login: LoginForm,
    /// What shows that a user has signed in; `None` when the CLI leaves no
    /// trace that can be read without a provider request.
    pub sign_in: Option<SignInTraces>,
    /// How a completion receipt is taken, if one can be.
    pub receipt: ReceiptSupport,
    /// Variables the CLI reads (credentials, endpoints, config homes); they
    /// pass from the host's environment to the child when set.
    pub reads_environment: Vec<String>,
    /// Variables set for every launch (beyond self-update settings).
    pub environment: Vec<(String, String)>,
    /// What switches off the CLI's self-update.
    pub self_update_off: SelfUpdateOff,
    /// The permission profiles the runtime enforces, each with what a
    /// launch adds for it; a profile not listed is not enforced.
    pub permission_profiles: Vec<(PermissionProfile, ProfileForm)>,
    /// Declared limitation codes; the contract suite checks them against
    /// what the launcher produces.
    pub limitations: Vec<String>,
    /// Where the declared flags come from.
    pub evidence: Evidence,
    /// The npm package the CLI is published as, when it is one: the canary
    /// stages a candidate version of it (`PACKAGE@VERSION`) and asks the
    /// registry for the published version. The executable is the first of
    /// the [`Executable::Named`] names in the package's `node_modules/.bin`.
    pub npm_package: Option<String>,
    /// The PyPI distribution the CLI is installed from, when it is one:
    /// the fingerprint a receipt is bound to covers that distribution's
    /// files (its `RECORD`), found from the launcher's interpreter.
    pub pypi_distribution: Option<String>,
    /// Versions panehost refuses to start, each range with its reason.
    pub refused_versions: Vec<RefusedVersions>,
    /// Where the session's native reference is captured.
    pub reference_capture: ReferenceCapture,
    /// Who owns the conversation's context. Always the CLI: it compacts its
    /// own context, and the host adds no second layer.
    pub context_owner: ContextOwner,
    /// The runtime exists for this repository's tests (the fixture agent):
    /// `panehost runtimes` lists it only when asked for `--all`.
    pub for_tests: bool,
}

/// Where the host learns a running session's native reference (so that a
/// pane whose process is lost can resume exactly that session).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReferenceCapture {
    /// Not captured.
    None,
    /// The reference follows this text in the CLI's output.
    OutputMarker(String),
    /// The reference is this field of the CLI's hook payloads.
    HookField(String),
    /// The reference is the newest session the CLI wrote to its store since
    /// the pane's process started.
    SessionStore(crate::session_store::SessionStore),
}

/// Who owns an agent's conversation context.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContextOwner {
    /// The CLI keeps and compacts its own context.
    Cli,
}

impl Descriptor {
    /// Whether a start may add environment variables (`shell`, and
    /// runtimes an operator declared in the configuration file). Agent
    /// runtimes get only what their descriptor declares: a variable a
    /// client sets could change where the CLI sends its requests or which
    /// credentials it uses, under an adapter's declared limitations.
    pub fn takes_client_environment(&self) -> bool {
        self.command_policy == CommandPolicy::ClientMayGiveCommand || self.evidence == Evidence::Operator
    }

    /// The resume form for a mode, if the runtime has one.
    pub fn resume_form(&self, mode: ResumeMode) -> Option<&ResumeForm> {
        self.resume_forms.iter().find(|form| form.mode == mode)
    }

    /// How the runtime enforces a permission profile, if it can.
    pub fn profile_form(&self, profile: PermissionProfile) -> Option<&ProfileForm> {
        self.permission_profiles.iter().find(|(declared, _)| *declared == profile).map(|(_, form)| form)
    }

    /// The refused range `version` falls in, if any.
    pub fn refusal(&self, version: Option<&str>) -> Option<&RefusedVersions> {
        let version = version?;
        self.refused_versions.iter().find(|range| range.contains(version))
    }

    /// The profile a start that names none gets: the host's default,
    /// [`PermissionProfile::HOST_DEFAULT`], when this runtime enforces it;
    /// `None` when it does not (the CLI then runs with its own defaults).
    pub fn default_profile(&self) -> Option<PermissionProfile> {
        self.profile_form(PermissionProfile::HOST_DEFAULT).map(|_| PermissionProfile::HOST_DEFAULT)
    }

    /// The profiles the runtime enforces, in the order of
    /// [`PermissionProfile::ALL`].
    pub fn enforced_profiles(&self) -> Vec<PermissionProfile> {
        PermissionProfile::ALL.into_iter().filter(|profile| self.profile_form(*profile).is_some()).collect()
    }
}
