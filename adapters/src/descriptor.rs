//! The declaration of one runtime.

/// How a runtime's executable is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Executable {
    /// The first of these names found on `PATH`, then the known paths.
    Named {
        /// Executable names, in order of preference.
        names: &'static [&'static str],
        /// Absolute paths tried after `PATH`.
        known_paths: &'static [&'static str],
    },
    /// The program an environment variable of the host names (the user's
    /// shell), else a fallback path.
    FromVariable {
        /// The variable, such as `SHELL`.
        variable: &'static str,
        /// Used when the variable is unset.
        fallback: &'static str,
    },
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
    /// The mode's name on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            ResumeMode::Reference => "REFERENCE",
            ResumeMode::ProviderSelection => "PROVIDER_SELECTION",
            ResumeMode::InteractivePicker => "INTERACTIVE_PICKER",
        }
    }
}

/// How a runtime resumes in one mode: the arguments added to its argv.
/// In `Reference` mode, the argument `{reference}` is replaced by the
/// validated reference.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ResumeForm {
    /// The mode.
    pub mode: ResumeMode,
    /// The arguments, appended after the base arguments.
    pub args: &'static [&'static str],
}

/// The placeholder a `Reference` resume form's arguments carry.
pub const REFERENCE_PLACEHOLDER: &str = "{reference}";

/// Everything panehost knows about one runtime.
#[derive(Debug, Clone, Copy)]
pub struct Descriptor {
    /// The id clients use, such as `shell`.
    pub id: &'static str,
    /// A name for people.
    pub display_name: &'static str,
    /// How the executable is found.
    pub executable: Executable,
    /// Whether policy allows starting it.
    pub supported: bool,
    /// Whether clients may give the command.
    pub command_policy: CommandPolicy,
    /// Arguments every start passes first.
    pub base_args: &'static [&'static str],
    /// The flag that names a model, if the CLI takes one.
    pub model_flag: Option<&'static str>,
    /// Native-resume forms; empty when the CLI cannot resume.
    pub resume_forms: &'static [ResumeForm],
    /// Accepts a reference before it may reach argv. It must match the
    /// whole string (anchored at both ends).
    pub reference_is_valid: fn(&str) -> bool,
    /// Bytes that ask the CLI to stop what it is doing.
    pub interrupt_keys: &'static [u8],
    /// Variables set in the child's environment, beyond the inherited
    /// allow-list.
    pub environment: &'static [(&'static str, &'static str)],
    /// Declared limitation codes.
    pub limitations: &'static [&'static str],
}

impl Descriptor {
    /// The resume form for a mode, if the runtime has one.
    pub fn resume_form(&self, mode: ResumeMode) -> Option<&ResumeForm> {
        self.resume_forms.iter().find(|form| form.mode == mode)
    }
}

/// A reference check that accepts nothing, for runtimes without a
/// `Reference` resume form.
pub fn no_reference(_: &str) -> bool {
    false
}
