//! Finding the session a CLI recorded, in its own store under the scratch
//! HOME, by listing it (nothing here asks the CLI). Where the adapter
//! declares its session store (codex, qwen, copilot, opencode: the host
//! captures references from it), the runner uses that same declaration;
//! claude reports its reference in hook payloads instead, so its store is
//! listed here:
//!
//! | runtime | store | reference |
//! |---|---|---|
//! | claude | `<home>/.claude/projects/<project>/<uuid>.jsonl` | the file's name |
//!
//! The newest entry written since the runtime's first pane started wins,
//! and the reference must pass the adapter's own pattern.

use panehost_adapters::descriptor::{Descriptor, ReferenceCapture};
use panehost_adapters::session_store::{SessionEntry, SessionStore};
use panehost_ipc::PaneId;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// A session reference and how it was found.
#[derive(Debug, Clone)]
pub struct Found {
    pub reference: String,
    pub how: String,
}

/// Claude's store, which the adapter does not declare (hooks report its
/// reference).
fn claude_store() -> SessionStore {
    SessionStore {
        dir: ".claude/projects".into(),
        moved_by: None,
        entry: SessionEntry::File { prefix: String::new(), suffix: ".jsonl".into(), reference_len: None, parent: None },
    }
}

/// Finds the session `descriptor`'s CLI recorded in `home` since `since`.
pub fn find(descriptor: &Descriptor, home: &Path, since: SystemTime) -> Result<Found, String> {
    let relative = |path: &Path| format!("<home>/{}", path.strip_prefix(home).unwrap_or(path).display());
    let (declared, how) = match &descriptor.reference_capture {
        ReferenceCapture::SessionStore(declared) => (declared.clone(), "the newest session in the adapter's store"),
        _ if descriptor.id == "claude" => (claude_store(), "the newest session file"),
        _ => return Err(format!("the runner knows no session store of {}", descriptor.id)),
    };
    let env = vec![("HOME".to_owned(), home.display().to_string())];
    let store = declared.location(&env).ok_or("the store has no location")?;
    let accepts =
        |reference: &str| descriptor.reference_pattern.as_ref().is_none_or(|pattern| pattern.accepts(reference));
    let found = declared.newest_since(&store, since, &accepts).map(|found| (found.reference, found.path));
    checked(descriptor, &relative, &store, found, how)
}

/// The reference found, once it passes the adapter's pattern.
fn checked(
    descriptor: &Descriptor,
    relative: &dyn Fn(&Path) -> String,
    store: &Path,
    found: Option<(String, PathBuf)>,
    how: &str,
) -> Result<Found, String> {
    let Some((reference, path)) = found else {
        return Err(format!("no session written since the first pane started under {}", relative(store)));
    };
    let accepted = descriptor.reference_pattern.as_ref().is_some_and(|pattern| pattern.accepts(&reference));
    if !accepted {
        return Err(format!("{reference:?} (from {}) does not pass the adapter's reference pattern", relative(&path)));
    }
    Ok(Found { reference, how: format!("{how}, {}", relative(&path)) })
}

/// How long [`wait_saved`] waits for the CLI to save an answer.
const SAVE_WAIT: std::time::Duration = std::time::Duration::from_secs(15);

/// How deep [`wait_saved`] looks under the store for the session's file
/// (codex: `sessions/YYYY/MM/DD/rollout-…-<reference>.jsonl`).
const STORE_DEPTH: usize = 6;

/// Waits until the CLI's own store holds `text` in the file of session
/// `reference` (the answer saved, not only drawn), in a record of the
/// conversation ([`conversation_holds`]): a CLI killed between drawing an
/// answer and saving it loses that turn, which is the CLI's behaviour, not
/// the host's (Qwen Code 0.24.4 writes its `assistant` record 0.4 to 2 s
/// after the answer is on the screen). Says how long it took, or that it
/// was not seen (a store the runner does not know, or nothing saved within
/// [`SAVE_WAIT`]).
pub async fn wait_saved(descriptor: &Descriptor, home: &Path, reference: &str, text: &str) -> String {
    let declared = match &descriptor.reference_capture {
        ReferenceCapture::SessionStore(declared) => declared.clone(),
        _ if descriptor.id == "claude" => claude_store(),
        _ => return "the runner knows no session store to see the answer saved in".to_owned(),
    };
    let env = vec![("HOME".to_owned(), home.display().to_string())];
    let Some(store) = declared.location(&env) else { return "the store has no location".to_owned() };
    let started = std::time::Instant::now();
    loop {
        let mut files = Vec::new();
        session_files(&store, reference, STORE_DEPTH, &mut files);
        if files.iter().any(|file| std::fs::read_to_string(file).is_ok_and(|saved| conversation_holds(&saved, text))) {
            return format!("the CLI's store held the answer {} ms after it was drawn", started.elapsed().as_millis());
        }
        if started.elapsed() > SAVE_WAIT {
            return format!("the CLI's store did not hold the answer within {} s", SAVE_WAIT.as_secs());
        }
        crate::outcome::pause(100).await;
    }
}

/// Whether a session file holds `text` in a record of the conversation,
/// the part a resume redraws: a line of it that is not one of the CLI's
/// telemetry records. Qwen Code 0.24.4 first writes a `system` record of
/// subtype `ui_telemetry` whose `response_text` quotes the answer, and its
/// `assistant` record a moment later; killed in between, the resumed
/// session showed `> PING` and no answer (seen in the canary's sandbox,
/// and with the CLI alone, 2 kills in 4).
fn conversation_holds(saved: &str, text: &str) -> bool {
    saved.lines().filter(|line| line.contains(text)).any(|line| {
        let record = serde_json::from_str::<serde_json::Value>(line).ok();
        !record.is_some_and(|record| record["subtype"] == "ui_telemetry")
    })
}

/// The files under `dir` (at most `depth` levels down) whose names hold
/// `reference` (qwen keeps `<reference>.jsonl` beside
/// `<reference>.runtime.json`).
fn session_files(dir: &Path, reference: &str, depth: usize, found: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else { return };
    for entry in entries.flatten() {
        let path = entry.path();
        if entry.file_type().is_ok_and(|kind| kind.is_dir()) {
            if depth > 0 {
                session_files(&path, reference, depth - 1, found);
            }
        } else if entry.file_name().to_string_lossy().contains(reference) {
            found.push(path);
        }
    }
}

/// The session reference the host recorded for `pane` (from the CLI's
/// output or hook payloads), once it has one (within 30 s).
pub async fn recorded(state_dir: &Path, pane: &PaneId) -> Result<Found, String> {
    let path = state_dir.join("panes").join(format!("{pane}.json"));
    let started = std::time::Instant::now();
    loop {
        let reference = std::fs::read(&path)
            .ok()
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
            .and_then(|record| record["native_reference"].as_str().map(str::to_owned));
        if let Some(reference) = reference {
            return Ok(Found { reference, how: "the reference the host captured for the pane".into() });
        }
        if started.elapsed() > std::time::Duration::from_secs(30) {
            return Err(format!("the host captured no session reference for pane {pane} within 30 s"));
        }
        crate::outcome::pause(200).await;
    }
}

#[cfg(test)]
mod tests {
    use super::conversation_holds;

    /// Qwen Code 0.24.4's session file as a kill left it: the answer only
    /// in the telemetry record (lines shortened).
    const TELEMETRY_ONLY: &str = r#"{"type":"user","message":{"role":"user","parts":[{"text":"PING"}]}}
{"type":"system","subtype":"ui_telemetry","systemPayload":{"uiEvent":{"response_text":"PONG"}}}
"#;

    #[test]
    fn an_answer_quoted_only_by_telemetry_is_not_saved() {
        assert!(!conversation_holds(TELEMETRY_ONLY, "PONG"));
        let saved = format!(
            "{TELEMETRY_ONLY}{}\n",
            r#"{"type":"assistant","message":{"role":"model","parts":[{"text":"PONG"}]}}"#
        );
        assert!(conversation_holds(&saved, "PONG"));
    }

    #[test]
    fn a_line_that_is_not_json_counts_when_it_holds_the_text() {
        assert!(conversation_holds("PONG\n", "PONG"));
        assert!(!conversation_holds("PING\n", "PONG"));
    }
}
