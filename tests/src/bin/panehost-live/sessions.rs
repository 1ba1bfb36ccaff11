//! Finding the session a CLI recorded, in its own store under the scratch
//! HOME, by listing it (nothing here asks the CLI):
//!
//! | runtime | store | reference |
//! |---|---|---|
//! | claude | `<home>/.claude/projects/<project>/<uuid>.jsonl` | the file's name |
//! | codex | `<home>/.codex/sessions/YYYY/MM/DD/rollout-<time>-<uuid>.jsonl` | the name's last 36 characters |
//! | qwen | `<home>/.qwen/projects/<project>/chats/<uuid>.jsonl` | the file's name |
//! | copilot | `<home>/.copilot/session-state/<uuid>/` | the directory's name |
//! | opencode | `<home>/.local/share/opencode/log/*.log` (the sessions themselves are in an SQLite database) | the last `ses_…` id the newest log names |
//!
//! The newest entry written since the runtime's first pane started wins,
//! and the reference must pass the adapter's own pattern.

use panehost_adapters::descriptor::Descriptor;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// A session reference and how it was found.
#[derive(Debug, Clone)]
pub struct Found {
    pub reference: String,
    pub how: String,
}

/// Every file and directory under `dir` (symbolic links are not followed),
/// with its modification time.
fn walk(dir: &Path) -> Vec<(PathBuf, SystemTime, bool)> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            let Ok(meta) = entry.path().symlink_metadata() else { continue };
            let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
            if meta.is_dir() {
                pending.push(entry.path());
                found.push((entry.path(), modified, true));
            } else if meta.is_file() {
                found.push((entry.path(), modified, false));
            }
        }
    }
    found
}

fn is_uuid(text: &str) -> bool {
    let groups: Vec<&str> = text.split('-').collect();
    groups.len() == 5
        && groups
            .iter()
            .zip([8, 4, 4, 4, 12])
            .all(|(g, n)| g.len() == n && g.chars().all(|c| c.is_ascii_hexdigit() && !c.is_ascii_uppercase()))
}

fn name(path: &Path) -> &str {
    path.file_name().and_then(|n| n.to_str()).unwrap_or_default()
}

/// The newest of `candidates` (reference, path, time) written since `since`.
fn newest(candidates: Vec<(String, PathBuf, SystemTime)>, since: SystemTime) -> Option<(String, PathBuf)> {
    let since = since.checked_sub(Duration::from_secs(2)).unwrap_or(since);
    candidates
        .into_iter()
        .filter(|(_, _, time)| *time >= since)
        .max_by_key(|(_, _, time)| *time)
        .map(|(r, p, _)| (r, p))
}

/// Finds the session `descriptor`'s CLI recorded in `home` since `since`.
pub fn find(descriptor: &Descriptor, home: &Path, since: SystemTime) -> Result<Found, String> {
    let relative = |path: &Path| format!("<home>/{}", path.strip_prefix(home).unwrap_or(path).display());
    let (store, found) = match descriptor.id.as_str() {
        "claude" => {
            let store = home.join(".claude/projects");
            let candidates = walk(&store)
                .into_iter()
                .filter(|(path, _, dir)| !dir && name(path).ends_with(".jsonl"))
                .filter_map(|(path, time, _)| {
                    let stem = name(&path).trim_end_matches(".jsonl").to_owned();
                    is_uuid(&stem).then_some((stem, path, time))
                })
                .collect();
            (store, newest(candidates, since))
        }
        "codex" => {
            let store = home.join(".codex/sessions");
            let candidates = walk(&store)
                .into_iter()
                .filter(|(path, _, dir)| !dir && name(path).starts_with("rollout-") && name(path).ends_with(".jsonl"))
                .filter_map(|(path, time, _)| {
                    let stem = name(&path).trim_end_matches(".jsonl");
                    let id = stem.get(stem.len().checked_sub(36)?..)?.to_owned();
                    is_uuid(&id).then_some((id, path, time))
                })
                .collect();
            (store, newest(candidates, since))
        }
        "qwen" => {
            let store = home.join(".qwen/projects");
            let candidates = walk(&store)
                .into_iter()
                .filter(|(path, _, dir)| {
                    !dir && name(path).ends_with(".jsonl") && path.parent().is_some_and(|p| name(p) == "chats")
                })
                .filter_map(|(path, time, _)| {
                    let stem = name(&path).trim_end_matches(".jsonl").to_owned();
                    is_uuid(&stem).then_some((stem, path, time))
                })
                .collect();
            (store, newest(candidates, since))
        }
        "copilot" => {
            let store = home.join(".copilot/session-state");
            let candidates = std::fs::read_dir(&store)
                .into_iter()
                .flatten()
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| path.is_dir() && is_uuid(name(path)))
                .map(|path| {
                    // A directory's own time moves only when entries come and
                    // go; its files' times say when the session was written.
                    let time = walk(&path).into_iter().map(|(_, t, _)| t).max().unwrap_or(SystemTime::UNIX_EPOCH);
                    (name(&path).to_owned(), path, time)
                })
                .collect();
            (store, newest(candidates, since))
        }
        "opencode" => {
            let store = home.join(".local/share/opencode/log");
            let logs: Vec<(String, PathBuf, SystemTime)> = walk(&store)
                .into_iter()
                .filter(|(path, _, dir)| !dir && name(path).ends_with(".log"))
                .filter_map(|(path, time, _)| {
                    let text = std::fs::read_to_string(&path).ok()?;
                    let last = text.match_indices("ses_").filter_map(|(at, _)| {
                        let id: String =
                            text[at..].chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect();
                        (id.len() > 4).then_some(id)
                    });
                    Some((last.last()?, path, time))
                })
                .collect();
            (store, newest(logs, since))
        }
        other => return Err(format!("the runner knows no session store of {other}")),
    };
    let Some((reference, path)) = found else {
        return Err(format!("no session written since the first pane started under {}", relative(&store)));
    };
    let accepted = descriptor.reference_pattern.as_ref().is_some_and(|pattern| pattern.accepts(&reference));
    if !accepted {
        return Err(format!("{reference:?} (from {}) does not pass the adapter's reference pattern", relative(&path)));
    }
    let how = match descriptor.id.as_str() {
        "opencode" => format!("the last ses_ id named in {}", relative(&path)),
        "copilot" => format!("the newest session directory, {}", relative(&path)),
        _ => format!("the newest session file, {}", relative(&path)),
    };
    Ok(Found { reference, how })
}
