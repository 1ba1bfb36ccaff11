//! The parts of the host's own environment a child may see.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// Variables copied from the host's environment into every child, when set.
/// Everything else a child sees is set explicitly by its descriptor or by
/// the host (`TERM`, `COLORTERM`, the pane's own variables).
pub const INHERITED_VARIABLES: &[&str] =
    &["HOME", "USER", "LOGNAME", "SHELL", "PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "TMPDIR"];

/// The terminal type every pane advertises.
pub const TERM: &str = "xterm-256color";

/// A snapshot of the host's environment, taken once, from which launch
/// environments are built. Tests build one by hand.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostEnvironment {
    /// Variables of the host process (all of them; filtering happens when a
    /// launch environment is built).
    pub variables: BTreeMap<String, String>,
    /// The program a CLI's hooks run to reach the host (`panehost`, whose
    /// `notify` subcommand reports a turn signal). Without it, runtimes
    /// whose completion needs hooks launch without them.
    pub notify_command: Option<PathBuf>,
    /// A directory of the host's own where it writes the settings files
    /// and plugin directories that inject hooks into CLIs that read them
    /// only from files. Without it, those runtimes launch without hooks.
    pub hook_dir: Option<PathBuf>,
}

impl HostEnvironment {
    /// Captures the current process's environment (variables that are not
    /// valid UTF-8 are left out).
    pub fn capture() -> Self {
        HostEnvironment { variables: std::env::vars().collect(), notify_command: None, hook_dir: None }
    }

    /// One variable, if set and not empty.
    pub fn get(&self, name: &str) -> Option<&str> {
        self.variables.get(name).map(String::as_str).filter(|value| !value.is_empty())
    }

    /// The user's home directory, or `/` when unknown.
    pub fn home(&self) -> PathBuf {
        PathBuf::from(self.get("HOME").unwrap_or("/"))
    }

    /// The launch environment: the inherited allow-list, then `extra`
    /// (which may override), then the terminal variables. Sorted by name.
    pub fn launch_environment(&self, extra: &[(String, String)]) -> Vec<(String, String)> {
        let mut env: BTreeMap<String, String> = INHERITED_VARIABLES
            .iter()
            .filter_map(|name| self.get(name).map(|value| ((*name).to_owned(), value.to_owned())))
            .collect();
        env.extend(extra.iter().cloned());
        env.insert("TERM".to_owned(), TERM.to_owned());
        env.insert("COLORTERM".to_owned(), "truecolor".to_owned());
        env.into_iter().collect()
    }
}
