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
use crate::system_defaults::{self, DefaultsLocation};
use std::path::{Path, PathBuf};

/// How a runtime's hooks are injected into a launch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookInjection {
    /// Claude Code: `--settings <json>` adds hooks for this run only
    /// (`UserPromptSubmit`, `Stop`, `Notification`).
    ClaudeSettings,
    /// Codex: `-c notify=[...]` sets the notify program for this run only;
    /// Codex calls it with a JSON payload after each turn.
    CodexNotify,
    /// Gemini CLI: `GEMINI_CLI_SYSTEM_DEFAULTS_PATH` names a settings file
    /// of the host's with the hooks `BeforeAgent`, `AfterAgent` and
    /// `Notification` (hooks are on by default). The system-defaults layer
    /// is the lowest: the user's own settings still apply over it.
    GeminiSystemDefaults,
    /// Qwen Code: `QWEN_CODE_SYSTEM_DEFAULTS_PATH` names a settings file of
    /// the host's with the hooks `UserPromptSubmit`, `Stop` and
    /// `Notification`.
    QwenSystemDefaults,
    /// GitHub Copilot CLI: `--plugin-dir <dir>` loads a plugin of the
    /// host's for this run only, whose `hooks/hooks.json` holds
    /// `userPromptSubmitted` and `agentStop`.
    CopilotPluginDir,
    /// OpenCode: `OPENCODE_CONFIG_CONTENT` adds a plugin of the host's (a
    /// JavaScript module) to this run's configuration; it reports a
    /// session going busy and idle (`session.status`, `session.idle`) for
    /// the sessions that are no sub-agent's.
    OpencodePlugin,
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
    /// Every way of injecting hooks.
    pub const ALL: [HookInjection; 8] = [
        HookInjection::ClaudeSettings,
        HookInjection::CodexNotify,
        HookInjection::GeminiSystemDefaults,
        HookInjection::QwenSystemDefaults,
        HookInjection::CopilotPluginDir,
        HookInjection::OpencodePlugin,
        HookInjection::BashPromptMarks,
        HookInjection::Declared,
    ];
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

/// The OpenCode plugin; `NOTIFY_PROGRAM` becomes the notify command, as a
/// JavaScript string. Reports run one after the other, in order, and never
/// hold up the CLI.
const OPENCODE_PLUGIN: &str = r#"// Written by the panehost host: reports the start and end of each turn.
import { spawn } from "node:child_process";

const program = NOTIFY_PROGRAM;

export const PanehostTurns = async () => {
  const subAgents = new Set();
  const busy = new Set();
  let queue = Promise.resolve();
  const report = (event, sessionID) => {
    const payload = JSON.stringify({ sessionID });
    queue = queue.then(() => new Promise((done) => {
      const child = spawn(program, ["notify", "--event", event, payload], { stdio: "ignore" });
      child.on("error", () => done());
      child.on("exit", () => done());
    }));
  };
  return {
    event: async ({ event }) => {
      const properties = event.properties || {};
      const sessionID = properties.sessionID;
      if (event.type === "session.created" && properties.info && properties.info.parentID) {
        subAgents.add(sessionID);
      }
      if (!sessionID || subAgents.has(sessionID)) {
        return;
      }
      if (event.type === "session.status" && properties.status && properties.status.type === "busy" && !busy.has(sessionID)) {
        busy.add(sessionID);
        report("turn_started", sessionID);
      } else if (event.type === "session.idle") {
        busy.delete(sessionID);
        report("turn_completed", sessionID);
      }
    },
  };
};
"#;

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

/// Gemini CLI's system-defaults file.
const GEMINI_DEFAULTS: DefaultsLocation = DefaultsLocation {
    variable: "GEMINI_CLI_SYSTEM_DEFAULTS_PATH",
    unix: "/etc/gemini-cli/system-defaults.json",
    macos: "/Library/Application Support/GeminiCli/system-defaults.json",
};

/// Qwen Code's system-defaults file.
const QWEN_DEFAULTS: DefaultsLocation = DefaultsLocation {
    variable: "QWEN_CODE_SYSTEM_DEFAULTS_PATH",
    unix: "/etc/qwen-code/system-defaults.json",
    macos: "/Library/Application Support/QwenCode/system-defaults.json",
};

/// The injection that makes the CLI's hooks call the host's notify
/// command, with any files placed in its hook directory. `None` when the
/// host offers no notify command, or the injection needs files and the
/// host offers no directory for them.
pub fn injection(injection: HookInjection, environment: &HostEnvironment) -> Option<Injection> {
    if injection == HookInjection::BashPromptMarks {
        // Marks in the output, not reports through `notify`; they depend
        // on the program (`shell_integration::bash_prompt_marks`).
        return None;
    }
    let notify_command = environment.notify_command.as_deref()?;
    let hook_dir = environment.hook_dir.as_deref();
    let program = shell_quote(&notify_command.display().to_string());
    let command = |event: &str| format!("{program} notify --event {event}");
    let nested = |event: &str| serde_json::json!([{ "hooks": [{ "type": "command", "command": command(event) }] }]);
    // Settings with the hooks named for a turn's start and end, and for a
    // notification, each reporting to the host.
    let hooks = |started: &str, completed: &str, notification: &str| {
        let mut hooks = serde_json::Map::new();
        hooks.insert(started.to_owned(), nested("turn_started"));
        hooks.insert(completed.to_owned(), nested("turn_completed"));
        hooks.insert(notification.to_owned(), nested("notification"));
        hooks
    };
    // A system-defaults file: the machine's own, with the hooks added.
    let defaults = |location: &DefaultsLocation, name: &str, added| {
        let settings = system_defaults::with_hooks(location, environment, added);
        Some(settings_file(hook_dir?, name, location.variable, settings))
    };
    match injection {
        HookInjection::ClaudeSettings => {
            let settings = serde_json::json!({ "hooks": hooks("UserPromptSubmit", "Stop", "Notification") });
            Some(Injection { args: vec!["--settings".to_owned(), settings.to_string()], ..Injection::default() })
        }
        HookInjection::CodexNotify => {
            let array =
                serde_json::json!([notify_command.display().to_string(), "notify", "--event", "turn_completed"]);
            Some(Injection { args: vec!["-c".to_owned(), format!("notify={array}")], ..Injection::default() })
        }
        HookInjection::GeminiSystemDefaults => defaults(
            &GEMINI_DEFAULTS,
            "gemini-system-defaults.json",
            hooks("BeforeAgent", "AfterAgent", "Notification"),
        ),
        HookInjection::QwenSystemDefaults => {
            defaults(&QWEN_DEFAULTS, "qwen-system-defaults.json", hooks("UserPromptSubmit", "Stop", "Notification"))
        }
        HookInjection::CopilotPluginDir => {
            let plugin = hook_dir?.join("copilot-plugin");
            let flat =
                |event: &str| serde_json::json!([{ "type": "command", "bash": command(event), "timeoutSec": 10 }]);
            let hooks = serde_json::json!({
                "version": 1,
                "hooks": {
                    "userPromptSubmitted": flat("turn_started"),
                    "agentStop": flat("turn_completed"),
                }
            });
            let manifest = serde_json::json!({
                "name": "panehost-turns",
                "description": "Reports the start and end of each turn to the panehost host.",
                "version": "1.0.0",
            });
            Some(Injection {
                args: vec!["--plugin-dir".to_owned(), plugin.display().to_string()],
                environment: Vec::new(),
                files: vec![
                    LaunchFile { path: plugin.join(".plugin").join("plugin.json"), contents: pretty(&manifest) },
                    LaunchFile { path: plugin.join("hooks").join("hooks.json"), contents: pretty(&hooks) },
                ],
            })
        }
        // Data of the descriptor's: the launcher expands it
        // (`DeclaredHooks::expand`).
        HookInjection::BashPromptMarks | HookInjection::Declared => None,
        HookInjection::OpencodePlugin => {
            let path = hook_dir?.join("opencode-plugin.js");
            let program = serde_json::Value::String(notify_command.display().to_string()).to_string();
            let url = format!("file://{}", path.display().to_string().replace('%', "%25").replace(' ', "%20"));
            Some(Injection {
                args: Vec::new(),
                environment: vec![(
                    "OPENCODE_CONFIG_CONTENT".to_owned(),
                    serde_json::json!({ "plugin": [url] }).to_string(),
                )],
                files: vec![LaunchFile { path, contents: OPENCODE_PLUGIN.replace("NOTIFY_PROGRAM", &program) }],
            })
        }
    }
}

/// A settings file in `hook_dir` named by `variable`.
fn settings_file(hook_dir: &Path, name: &str, variable: &str, settings: serde_json::Value) -> Injection {
    let path = hook_dir.join(name);
    Injection {
        args: Vec::new(),
        environment: vec![(variable.to_owned(), path.display().to_string())],
        files: vec![LaunchFile { path, contents: pretty(&settings) }],
    }
}

fn pretty(value: &serde_json::Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_default() + "\n"
}

/// Quotes a path for a POSIX shell command line.
fn shell_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn host(notify: &str, hook_dir: Option<&str>) -> HostEnvironment {
        HostEnvironment {
            notify_command: Some(PathBuf::from(notify)),
            hook_dir: hook_dir.map(PathBuf::from),
            ..HostEnvironment::default()
        }
    }

    fn files_json(injection: &Injection, name: &str) -> serde_json::Value {
        let file = injection.files.iter().find(|file| file.path.ends_with(name)).expect(name);
        serde_json::from_str(&file.contents).unwrap()
    }

    #[test]
    fn claude_gets_settings_json_with_three_hooks() {
        let args = injection(HookInjection::ClaudeSettings, &host("/opt/it's/panehost", None)).unwrap().args;
        assert_eq!(args[0], "--settings");
        let settings: serde_json::Value = serde_json::from_str(&args[1]).unwrap();
        let command = settings["hooks"]["Stop"][0]["hooks"][0]["command"].as_str().unwrap();
        assert_eq!(command, r"'/opt/it'\''s/panehost' notify --event turn_completed");
        assert!(settings["hooks"]["UserPromptSubmit"].is_array());
        assert!(settings["hooks"]["Notification"].is_array());
    }

    #[test]
    fn codex_gets_a_toml_array_of_strings() {
        let args = injection(HookInjection::CodexNotify, &host("/opt/panehost", None)).unwrap().args;
        assert_eq!(args, ["-c", r#"notify=["/opt/panehost","notify","--event","turn_completed"]"#]);
    }

    #[test]
    fn gemini_and_qwen_get_a_system_defaults_file_of_the_hosts() {
        let environment = host("/opt/panehost", Some("/state/hooks"));
        let gemini = injection(HookInjection::GeminiSystemDefaults, &environment).unwrap();
        assert!(gemini.args.is_empty());
        assert_eq!(
            gemini.environment,
            [("GEMINI_CLI_SYSTEM_DEFAULTS_PATH".to_owned(), "/state/hooks/gemini-system-defaults.json".to_owned())]
        );
        let settings = files_json(&gemini, "gemini-system-defaults.json");
        let command = settings["hooks"]["AfterAgent"][0]["hooks"][0]["command"].as_str().unwrap();
        assert_eq!(command, "'/opt/panehost' notify --event turn_completed");
        let qwen = injection(HookInjection::QwenSystemDefaults, &environment).unwrap();
        assert_eq!(qwen.environment[0].0, "QWEN_CODE_SYSTEM_DEFAULTS_PATH");
        assert!(files_json(&qwen, "qwen-system-defaults.json")["hooks"]["Stop"].is_array());
        assert!(injection(HookInjection::QwenSystemDefaults, &host("/opt/panehost", None)).is_none());
        assert!(injection(HookInjection::ClaudeSettings, &HostEnvironment::default()).is_none());
    }

    #[test]
    fn copilot_gets_a_plugin_directory_of_the_hosts() {
        let copilot = injection(HookInjection::CopilotPluginDir, &host("/opt/panehost", Some("/state/hooks"))).unwrap();
        assert_eq!(copilot.args, ["--plugin-dir", "/state/hooks/copilot-plugin"]);
        let hooks = files_json(&copilot, "hooks/hooks.json");
        assert_eq!(hooks["hooks"]["agentStop"][0]["bash"], "'/opt/panehost' notify --event turn_completed");
        assert_eq!(files_json(&copilot, ".plugin/plugin.json")["name"], "panehost-turns");
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
        // Declared hooks are the descriptor's data, not a built-in form.
        assert!(injection(HookInjection::Declared, &host("/opt/panehost", Some("/h"))).is_none());
    }

    #[test]
    fn opencode_gets_a_plugin_of_the_hosts_in_its_configuration() {
        let opencode =
            injection(HookInjection::OpencodePlugin, &host("/opt/\"x\"/panehost", Some("/state dir/hooks"))).unwrap();
        assert!(opencode.args.is_empty());
        assert_eq!(opencode.environment[0].0, "OPENCODE_CONFIG_CONTENT");
        let config: serde_json::Value = serde_json::from_str(&opencode.environment[0].1).unwrap();
        assert_eq!(config["plugin"][0], "file:///state%20dir/hooks/opencode-plugin.js");
        let plugin = &opencode.files[0];
        assert_eq!(plugin.path, Path::new("/state dir/hooks/opencode-plugin.js"));
        assert!(plugin.contents.contains(r#"const program = "/opt/\"x\"/panehost";"#), "{}", plugin.contents);
    }
}
