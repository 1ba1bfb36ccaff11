//! A machine's own system-defaults settings, kept in the file the host
//! names instead.
//!
//! Gemini CLI and Qwen Code read a system-defaults settings file (the
//! lowest layer of their settings) from a path a variable can change. The
//! host points that variable at a file of its own to add its hooks; this
//! module reads the file the CLI would otherwise have read (the one the
//! variable names in the host's environment, else its usual place), so
//! that the host's file holds everything it held, with the hooks added.

use crate::environment::HostEnvironment;
use std::path::PathBuf;

/// The most of a machine's file that is read.
const MAX_DEFAULTS_BYTES: u64 = 1024 * 1024;

/// Where a CLI looks for its system-defaults file.
#[derive(Debug, Clone, Copy)]
pub struct DefaultsLocation {
    /// The variable that names the file.
    pub variable: &'static str,
    /// The file's usual place on Linux and other Unix systems…
    pub unix: &'static str,
    /// …and on macOS.
    pub macos: &'static str,
}

impl DefaultsLocation {
    /// The file the CLI would read without the host's variable.
    fn path(&self, environment: &HostEnvironment) -> PathBuf {
        match environment.get(self.variable) {
            Some(path) => PathBuf::from(path),
            None if cfg!(target_os = "macos") => PathBuf::from(self.macos),
            None => PathBuf::from(self.unix),
        }
    }
}

/// The machine's system-defaults settings with `added`'s hooks appended to
/// its own, event by event. A missing file counts as empty; one that is not
/// a JSON object is left out (with a warning): the CLI would not have
/// read it either.
pub fn with_hooks(
    location: &DefaultsLocation,
    environment: &HostEnvironment,
    added: serde_json::Map<String, serde_json::Value>,
) -> serde_json::Value {
    let path = location.path(environment);
    let mut settings = read(&path).unwrap_or_default();
    let hooks = settings.entry("hooks").or_insert_with(|| serde_json::json!({}));
    if !hooks.is_object() {
        *hooks = serde_json::json!({});
    }
    if let Some(hooks) = hooks.as_object_mut() {
        for (event, entries) in added {
            let list = hooks.entry(event).or_insert_with(|| serde_json::json!([]));
            if !list.is_array() {
                *list = serde_json::json!([]);
            }
            if let (Some(list), serde_json::Value::Array(entries)) = (list.as_array_mut(), entries) {
                list.extend(entries);
            }
        }
    }
    serde_json::Value::Object(settings)
}

/// The JSON object in `path`, if there is one.
fn read(path: &std::path::Path) -> Option<serde_json::Map<String, serde_json::Value>> {
    use std::io::Read;
    let mut text = String::new();
    std::fs::File::open(path).ok()?.take(MAX_DEFAULTS_BYTES).read_to_string(&mut text).ok()?;
    match serde_json::from_str::<serde_json::Value>(&text) {
        Ok(serde_json::Value::Object(settings)) => Some(settings),
        _ => {
            tracing::warn!(path = %path.display(), "system defaults that are no JSON object are left out of the host's file");
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_machines_settings_and_hooks_are_kept_and_the_hosts_added() {
        let dir = std::env::temp_dir().join(format!("panehost-system-defaults-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("system-defaults.json");
        std::fs::write(
            &file,
            r#"{"ui":{"theme":"x"},"hooks":{"AfterAgent":[{"hooks":[{"type":"command","command":"audit"}]}]}}"#,
        )
        .unwrap();
        let location = DefaultsLocation { variable: "CLI_DEFAULTS", unix: "/nonexistent", macos: "/nonexistent" };
        let mut environment = HostEnvironment::default();
        environment.variables.insert("CLI_DEFAULTS".into(), file.display().to_string());
        let mut added = serde_json::Map::new();
        added.insert("AfterAgent".into(), serde_json::json!([{"hooks": [{"type": "command", "command": "ours"}]}]));
        added.insert("BeforeAgent".into(), serde_json::json!([{"hooks": [{"type": "command", "command": "ours"}]}]));
        let merged = with_hooks(&location, &environment, added.clone());
        assert_eq!(merged["ui"]["theme"], "x");
        let after: Vec<&str> = merged["hooks"]["AfterAgent"]
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| entry["hooks"][0]["command"].as_str().unwrap())
            .collect();
        assert_eq!(after, ["audit", "ours"]);
        assert_eq!(merged["hooks"]["BeforeAgent"][0]["hooks"][0]["command"], "ours");

        std::fs::write(&file, "[not an object]").unwrap();
        assert_eq!(with_hooks(&location, &environment, added.clone()), serde_json::json!({ "hooks": added }));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
