//! `opencode`: OpenCode. Flags checked against `opencode --help` of
//! 1.18.33 (`adapters/evidence/opencode.json`): `-s, --session` continues an
//! exact session, `-c, --continue` the last one, `auth` manages providers
//! and credentials in the terminal.

use super::{agent_cli, profile, receipt, resume, strings, variables};
use crate::completion::{HookInjection, HookTarget, Injection, LaunchFile, RuntimeHooks};
use crate::descriptor::{
    CompletionSignal, Descriptor, Evidence, LoginForm, ModelForm, PermissionProfile, ReferenceCapture, ResumeMode,
    SelfUpdateOff, VersionProbe,
};
use crate::reference_pattern::ReferencePattern;
use panehost_ipc::limitation;

pub(super) fn descriptor() -> Descriptor {
    Descriptor {
        // Esc, pressed twice as separate presses, stops a running turn; Ctrl-C quits it. (seen live; tests/live-records)
        interrupt_keys: b"\x1b".to_vec(),
        interrupt_presses: 2,
        version: VersionProbe { args: strings(&["--version"]), floor: Some("1.18.33".into()) },
        model: ModelForm::Optional { flag: "-m".into() },
        resume_forms: vec![
            resume(ResumeMode::Reference, &["--session", "{reference}"]),
            resume(ResumeMode::ProviderSelection, &["--continue"]),
        ],
        reference_pattern: Some(ReferencePattern::constant("ses_[0-9A-Za-z]{8,64}")),
        // Its exact resume is proven live (`tests/live-records/opencode.json`, step `resume_reference`).
        references_proven_live: true,
        // The host's plugin names the session in every report; its
        // sessions themselves live in an SQLite database, and its one log
        // is shared by every run, so neither tells panes apart.
        reference_capture: ReferenceCapture::HookField("sessionID".into()),
        login: LoginForm::InTerminal { args: strings(&["auth", "login"]) },
        self_update_off: SelfUpdateOff {
            environment: variables(&[("OPENCODE_DISABLE_AUTOUPDATE", "1")]),
            ..SelfUpdateOff::default()
        },
        // It has no sandbox, and its help offers only `--auto` ("auto-approve
        // permissions that are not explicitly denied"): full access, and no
        // narrower profile.
        // `run` answers one message and exits. It has no read-only mode:
        // a receipt needs the weaker boundary accepted. Sign-in is not
        // observed: providers may carry their key in opencode.json.
        receipt: receipt(&["run", "{prompt}"]),
        permission_profiles: vec![profile(PermissionProfile::FullAccess, &["--auto"])],
        // A plugin of the host's, added to this run's configuration through
        // OPENCODE_CONFIG_CONTENT, reports its session going busy and idle.
        completion: CompletionSignal::Hook,
        hook_injection: Some(HookInjection::Runtime(&HOOKS)),
        limitations: strings(&[limitation::PERMISSION_PROFILE_UNENFORCED]),
        // Published on the npm registry (`adapters/evidence/opencode.json` names the same package).
        npm_package: Some("opencode-ai".into()),
        ..agent_cli("opencode", "OpenCode", &["opencode"], Evidence::CapturedHelp { file: "opencode.json".into() })
    }
}

/// `OPENCODE_CONFIG_CONTENT` adds a plugin of the host's (a JavaScript
/// module) to this run's configuration; it reports a session going busy
/// and idle (`session.status`, `session.idle`) for the sessions that are no
/// sub-agent's.
static HOOKS: RuntimeHooks = RuntimeHooks { name: "opencode-plugin", flags: &[], inject: plugin, reads_turn: None };

/// The plugin; `NOTIFY_PROGRAM` becomes the notify command, as a
/// JavaScript string. Reports run one after the other, in order, and never
/// hold up the CLI.
const PLUGIN: &str = r#"// Written by the panehost host: reports the start and end of each turn.
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

fn plugin(target: &HookTarget<'_>) -> Option<Injection> {
    let path = target.hook_dir?.join("opencode-plugin.js");
    let program = serde_json::Value::String(target.program()).to_string();
    let url = format!("file://{}", path.display().to_string().replace('%', "%25").replace(' ', "%20"));
    Some(Injection {
        args: Vec::new(),
        environment: vec![("OPENCODE_CONFIG_CONTENT".to_owned(), serde_json::json!({ "plugin": [url] }).to_string())],
        files: vec![LaunchFile { path, contents: PLUGIN.replace("NOTIFY_PROGRAM", &program) }],
    })
}

#[cfg(test)]
mod tests {
    use crate::completion::injection;
    use crate::completion::tests::host;
    use std::path::Path;

    #[test]
    fn opencode_gets_a_plugin_of_the_hosts_in_its_configuration() {
        let hooks = super::descriptor().hook_injection.unwrap();
        let opencode = injection(hooks, &host("/opt/\"x\"/panehost", Some("/state dir/hooks"))).unwrap();
        assert!(opencode.args.is_empty());
        assert_eq!(opencode.environment[0].0, "OPENCODE_CONFIG_CONTENT");
        let config: serde_json::Value = serde_json::from_str(&opencode.environment[0].1).unwrap();
        assert_eq!(config["plugin"][0], "file:///state%20dir/hooks/opencode-plugin.js");
        let plugin = &opencode.files[0];
        assert_eq!(plugin.path, Path::new("/state dir/hooks/opencode-plugin.js"));
        assert!(plugin.contents.contains(r#"const program = "/opt/\"x\"/panehost";"#), "{}", plugin.contents);
    }
}
