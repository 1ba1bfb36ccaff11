//! Pointing a CLI's own completion signals at the host, per launch, without
//! touching the user's configuration files.
//!
//! A hook runs `panehost notify --event EVENT` inside the pane; that command
//! finds its pane through `PANEHOST_PANE`, `PANEHOST_NOTIFY_TOKEN` and
//! `PANEHOST_SOCKET`, which the host sets for every pane.
//!
//! Some CLIs take their hooks on the command line; others only read them
//! from a settings file or a plugin directory. For those, the launch names
//! a file of the host's own (in its hook directory) through an argument or
//! a variable the CLI reads, and the plan carries the file's contents for
//! the host to write before it spawns the CLI: the user's files are never
//! touched.

use crate::environment::HostEnvironment;
use crate::notify_payload::ReportedTurn;
use crate::system_defaults::{self, DefaultsLocation};
use std::path::{Path, PathBuf};

/// How a runtime's hooks are injected into a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookInjection {
    /// Hooks written in the runtime's own file (`runtimes/<id>.rs`): how a
    /// launch carries them, and how their payloads are read.
    Runtime(&'static RuntimeHooks),
    /// An interactive bash: `--rcfile <file>` names a startup file of the
    /// host's that reads the user's own and adds prompt marks (OSC 133),
    /// which the host reads from the output (`shell_integration.rs`).
    BashPromptMarks,
    /// Hooks the descriptor declares as data ([`DeclaredHooks`], a custom
    /// runtime's `completion_args` and `completion_environment` in
    /// config.toml).
    Declared,
}

impl HookInjection {
    /// What a payload of these hooks says about the turn it reports (see
    /// [`RuntimeHooks::reads_turn`]); empty for hooks whose payloads name
    /// no thread.
    pub fn reported_turn(&self, payload: &str) -> ReportedTurn {
        match self {
            HookInjection::Runtime(RuntimeHooks { reads_turn: Some(read), .. }) => read(payload),
            // A runtime's declared hooks: what they pipe to `notify` is the
            // CLI's own; nothing in it is read.
            HookInjection::Runtime(_) | HookInjection::BashPromptMarks | HookInjection::Declared => {
                ReportedTurn::default()
            }
        }
    }

    /// The flags the injection passes, which the CLI's help must list (the
    /// declared hooks' flags are the descriptor's arguments, read there).
    pub fn flags(&self) -> &'static [&'static str] {
        match self {
            HookInjection::Runtime(hooks) => hooks.flags,
            HookInjection::BashPromptMarks => &[crate::shell_integration::RCFILE_FLAG],
            HookInjection::Declared => &[],
        }
    }
}

/// A built-in runtime's hooks, defined in its own file beside its
/// descriptor: which flags they pass, how one launch carries them, and
/// how their payloads are read.
pub struct RuntimeHooks {
    /// What the injection is, for logs and tests (`claude-settings`).
    pub name: &'static str,
    /// The flags the injection passes, which the CLI's help must list.
    /// Variables naming the host's files are not listed: no help shows them.
    pub flags: &'static [&'static str],
    /// The arguments, variables and files that point the CLI's hooks at
    /// the host for one launch; `None` when it needs a hook directory and
    /// the host offers none.
    pub inject: fn(&HookTarget<'_>) -> Option<Injection>,
    /// Reads what a payload says about its turn, for a CLI whose hooks also
    /// report turns of threads other than the conversation's; `None` when
    /// every report counts.
    pub reads_turn: Option<fn(&str) -> ReportedTurn>,
}

impl PartialEq for RuntimeHooks {
    fn eq(&self, other: &Self) -> bool {
        self.name == other.name
    }
}

impl Eq for RuntimeHooks {}

impl std::fmt::Debug for RuntimeHooks {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeHooks").field("name", &self.name).field("flags", &self.flags).finish_non_exhaustive()
    }
}

/// Where a launch's hooks report: the host's notify command and the
/// directory for the files that carry hooks, with the shapes of hook
/// settings several CLIs share.
#[derive(Debug, Clone, Copy)]
pub struct HookTarget<'a> {
    /// The host's executable, which hooks run as `<it> notify`.
    pub notify_command: &'a Path,
    /// The host's hook directory, where files that carry hooks go.
    pub hook_dir: Option<&'a Path>,
    /// The host's environment (where a CLI's own settings files are found).
    pub environment: &'a HostEnvironment,
}

impl HookTarget<'_> {
    /// The notify command's path, unquoted (for a hook the CLI runs as an
    /// argv).
    pub fn program(&self) -> String {
        self.notify_command.display().to_string()
    }

    /// `'<panehost>' notify --event EVENT`, quoted for a POSIX shell (for a
    /// hook the CLI runs through a shell).
    pub fn command(&self, event: &str) -> String {
        format!("{} notify --event {event}", shell_quote(&self.program()))
    }

    /// Hook settings in the shape Claude Code, Gemini CLI and Qwen Code
    /// share (`{"EVENT": [{"hooks": [{"type": "command", "command": …}]}]}`),
    /// the three events named reporting a turn's start, its end and a
    /// notification.
    pub fn command_hooks(
        &self,
        started: &str,
        completed: &str,
        notification: &str,
    ) -> serde_json::Map<String, serde_json::Value> {
        let nested =
            |event: &str| serde_json::json!([{ "hooks": [{ "type": "command", "command": self.command(event) }] }]);
        let mut hooks = serde_json::Map::new();
        hooks.insert(started.to_owned(), nested("turn_started"));
        hooks.insert(completed.to_owned(), nested("turn_completed"));
        hooks.insert(notification.to_owned(), nested("notification"));
        hooks
    }

    /// A system-defaults file of the host's, `name` in its hook directory,
    /// holding the machine's own system defaults with `added` hooks, and
    /// named to the CLI by `location`'s variable.
    pub fn system_defaults(
        &self,
        location: &DefaultsLocation,
        name: &str,
        added: serde_json::Map<String, serde_json::Value>,
    ) -> Option<Injection> {
        let settings = system_defaults::with_hooks(location, self.environment, added);
        let path = self.hook_dir?.join(name);
        Some(Injection {
            args: Vec::new(),
            environment: vec![(location.variable.to_owned(), path.display().to_string())],
            files: vec![LaunchFile { path, contents: pretty_json(&settings) }],
        })
    }
}

/// Where declared hooks name the host's notify command: `{notify}` becomes
/// `'<panehost>' notify`, quoted for a POSIX shell (for a hook the CLI runs
/// through a shell: `{notify} --event turn_completed`).
pub const NOTIFY_COMMAND_PLACEHOLDER: &str = "{notify}";
/// Where declared hooks name the host's executable alone (for a hook the
/// CLI runs as an argv: `["{notify_program}", "notify", "--event",
/// "turn_completed"]`).
pub const NOTIFY_PROGRAM_PLACEHOLDER: &str = "{notify_program}";

/// Hooks a runtime declares as data: arguments and variables added to
/// every start, in which [`NOTIFY_COMMAND_PLACEHOLDER`] and
/// [`NOTIFY_PROGRAM_PLACEHOLDER`] become the host's notify command. The CLI
/// runs them when its turns start and end (`notify --event turn_started`,
/// `turn_completed`, or `notification`), as a built-in runtime's hooks do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DeclaredHooks {
    /// Arguments added to the start arguments.
    pub args: Vec<String>,
    /// Variables set for the launch.
    pub environment: Vec<(String, String)>,
}

impl DeclaredHooks {
    /// Whether any argument or value names the notify command (hooks that
    /// name none cannot reach the host).
    pub fn names_the_host(&self) -> bool {
        let names = |text: &str| text.contains(NOTIFY_COMMAND_PLACEHOLDER) || text.contains(NOTIFY_PROGRAM_PLACEHOLDER);
        self.args.iter().any(|arg| names(arg)) || self.environment.iter().any(|(_, value)| names(value))
    }

    /// The injection for a host whose notify command is `notify_command`.
    pub fn expand(&self, notify_command: &Path) -> Injection {
        let program = notify_command.display().to_string();
        let command = format!("{} notify", shell_quote(&program));
        let fill = |text: &str| {
            text.replace(NOTIFY_COMMAND_PLACEHOLDER, &command).replace(NOTIFY_PROGRAM_PLACEHOLDER, &program)
        };
        Injection {
            args: self.args.iter().map(|arg| fill(arg)).collect(),
            environment: self.environment.iter().map(|(name, value)| (name.clone(), fill(value))).collect(),
            files: Vec::new(),
        }
    }
}

/// A file the host writes before spawning a launch that names it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchFile {
    /// Where it goes (inside the host's hook directory).
    pub path: PathBuf,
    /// Its contents.
    pub contents: String,
}

/// What a launch adds to inject the hooks.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Injection {
    /// Arguments added to the start arguments.
    pub args: Vec<String>,
    /// Variables set for the launch.
    pub environment: Vec<(String, String)>,
    /// Files the host writes before the spawn.
    pub files: Vec<LaunchFile>,
}

/// The injection that makes the CLI's hooks call the host's notify
/// command, with any files placed in its hook directory. `None` when the
/// host offers no notify command, when the injection needs files and the
/// host offers no directory for them, and for the forms the launcher
/// builds itself (prompt marks depend on the program, declared hooks are
/// the descriptor's data).
pub fn injection(injection: HookInjection, environment: &HostEnvironment) -> Option<Injection> {
    let HookInjection::Runtime(hooks) = injection else { return None };
    let target = HookTarget {
        notify_command: environment.notify_command.as_deref()?,
        hook_dir: environment.hook_dir.as_deref(),
        environment,
    };
    (hooks.inject)(&target)
}

/// JSON for a file, pretty and ending in a newline.
pub fn pretty_json(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

/// Quotes a path for a POSIX shell command line.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A host whose notify command is `notify`, with hook directory `hook_dir`.
    pub(crate) fn host(notify: &str, hook_dir: Option<&str>) -> HostEnvironment {
        HostEnvironment {
            notify_command: Some(PathBuf::from(notify)),
            hook_dir: hook_dir.map(PathBuf::from),
            ..HostEnvironment::default()
        }
    }

    /// The JSON in the injected file whose path ends with `name`.
    pub(crate) fn files_json(injection: &Injection, name: &str) -> serde_json::Value {
        let file = injection.files.iter().find(|file| file.path.ends_with(name)).expect(name);
        serde_json::from_str(&file.contents).unwrap()
    }

    #[test]
    fn declared_hooks_get_the_notify_command_where_they_name_it() {
        let hooks = DeclaredHooks {
            args: vec!["--on-stop".into(), "{notify} --event turn_completed".into(), "--plain".into()],
            environment: vec![("HOOK_ARGV".into(), "{notify_program} notify".into())],
        };
        assert!(hooks.names_the_host());
        let injected = hooks.expand(Path::new("/opt/it's/panehost"));
        assert_eq!(injected.args, ["--on-stop", r"'/opt/it'\''s/panehost' notify --event turn_completed", "--plain"]);
        assert_eq!(injected.environment, [("HOOK_ARGV".to_owned(), "/opt/it's/panehost notify".to_owned())]);
        assert!(injected.files.is_empty());
        let silent = DeclaredHooks { args: vec!["--hook".into(), "echo done".into()], environment: Vec::new() };
        assert!(!silent.names_the_host());
        // Declared hooks are the descriptor's data, not a runtime's own form.
        assert!(injection(HookInjection::Declared, &host("/opt/panehost", Some("/h"))).is_none());
        assert!(injection(HookInjection::BashPromptMarks, &host("/opt/panehost", Some("/h"))).is_none());
    }

    #[test]
    fn hook_settings_report_each_event_through_the_quoted_notify_command() {
        let environment = host("/opt/it's/panehost", None);
        let target =
            HookTarget { notify_command: Path::new("/opt/it's/panehost"), hook_dir: None, environment: &environment };
        let hooks = target.command_hooks("Begin", "End", "Note");
        let command = |event: &str| hooks[event][0]["hooks"][0]["command"].as_str().unwrap().to_owned();
        assert_eq!(command("End"), r"'/opt/it'\''s/panehost' notify --event turn_completed");
        assert_eq!(command("Begin"), r"'/opt/it'\''s/panehost' notify --event turn_started");
        assert_eq!(command("Note"), r"'/opt/it'\''s/panehost' notify --event notification");
        // A system-defaults file needs the host's hook directory.
        let location = DefaultsLocation { variable: "CLI_DEFAULTS", unix: "/nonexistent", macos: "/nonexistent" };
        assert!(target.system_defaults(&location, "cli.json", hooks).is_none());
    }
}
