//! Finding the session a CLI recorded, in its own session store under the
//! user's home directory, by listing it: nothing here runs or asks the CLI.
//!
//! A descriptor whose CLI reports its session reference neither in its
//! output nor in a hook payload declares where the CLI writes its sessions
//! ([`SessionStore`]); the host then takes the entry created most recently
//! since the pane's process started among those whose reference passes the
//! runtime's anchored reference pattern (a store holds other things too:
//! copilot 1.0.102 keeps a `.session-operation-locks` directory beside its
//! sessions). Creation, not modification: a
//! session another pane of the same CLI still writes to was created before
//! this pane started, and is not taken for this pane's.

use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Most entries one search looks at: a store the size of a user's whole
/// history is cut off rather than walked for seconds.
const MAX_ENTRIES: usize = 20_000;

/// Slack for file times, which the kernel takes from a coarser clock than
/// the one the start time was read from.
const CLOCK_SLACK: Duration = Duration::from_millis(100);

/// Where a CLI writes its sessions, and how an entry names its reference.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionStore {
    /// The store's directory, relative to the home directory.
    pub dir: String,
    /// A variable that moves the store when set, and the store's directory
    /// relative to where it points (`CODEX_HOME`, `sessions`).
    pub moved_by: Option<(String, String)>,
    /// Which entries are sessions, and what their reference is.
    pub entry: SessionEntry,
}

/// The shape of one session in a store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionEntry {
    /// A file anywhere below the store, `<prefix>…<reference><suffix>`: the
    /// reference is the last `reference_len` characters before the suffix
    /// (all of them after the prefix when `None`). With `parent`, only
    /// files in a directory of that name count.
    File {
        /// The start of the file's name.
        prefix: String,
        /// The end of the file's name.
        suffix: String,
        /// How many characters before the suffix make the reference.
        reference_len: Option<usize>,
        /// The name the file's directory must have.
        parent: Option<String>,
    },
    /// A directory directly in the store whose name is the reference; its
    /// files' times say when it was written.
    Directory,
    /// A directory anywhere below the store, in a directory named `parent`,
    /// whose name is the reference (reasonix 1.38.11:
    /// `projects/<dir>/sessions-v4/<id>/`, beside `.query-cache/<id>/`).
    NestedDirectory {
        /// The name the session directory's own directory must have.
        parent: String,
    },
}

/// A session found in a store.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FoundSession {
    /// The reference, not yet checked against the runtime's pattern.
    pub reference: String,
    /// The entry it came from.
    pub path: PathBuf,
}

impl SessionStore {
    /// The store's directory for a process with environment `env` (its
    /// `HOME`, and the variable that moves the store); `None` without a
    /// home.
    pub fn location(&self, env: &[(String, String)]) -> Option<PathBuf> {
        let get = |name: &str| env.iter().find(|(key, value)| key == name && !value.is_empty()).map(|(_, v)| v);
        if let Some((variable, under)) = &self.moved_by {
            if let Some(moved) = get(variable) {
                return Some(Path::new(moved).join(under));
            }
        }
        get("HOME").map(|home| Path::new(home).join(&self.dir))
    }

    /// The session created most recently since `since` (the time just
    /// before the process was started) in the store at `store` (see
    /// [`location`](Self::location)), among the entries whose reference
    /// `accepts` takes (the runtime's reference pattern).
    pub fn newest_since(
        &self,
        store: &Path,
        since: SystemTime,
        accepts: &dyn Fn(&str) -> bool,
    ) -> Option<FoundSession> {
        let store = store.to_path_buf();
        let since = since.checked_sub(CLOCK_SLACK).unwrap_or(since);
        let candidates: Vec<(String, PathBuf, SystemTime)> = match &self.entry {
            SessionEntry::File { prefix, suffix, reference_len, parent } => walk(&store)
                .into_iter()
                .filter(|entry| !entry.is_dir && entry.time >= since)
                .filter(|entry| parent.as_ref().is_none_or(|wanted| parent_name(&entry.path) == Some(wanted)))
                .filter_map(|entry| {
                    let stem = file_name(&entry.path).strip_prefix(prefix.as_str())?.strip_suffix(suffix.as_str())?;
                    let reference = match reference_len {
                        Some(len) => stem.get(stem.len().checked_sub(*len)?..)?,
                        None => stem,
                    };
                    Some((reference.to_owned(), entry.path, entry.time))
                })
                .collect(),
            SessionEntry::Directory => std::fs::read_dir(&store)
                .into_iter()
                .flatten()
                .flatten()
                .map(|entry| entry.path())
                .filter(|path| path.is_dir())
                .filter_map(|path| {
                    let time = created(&path.symlink_metadata().ok()?);
                    (time >= since).then(|| (file_name(&path).to_owned(), path, time))
                })
                .collect(),
            SessionEntry::NestedDirectory { parent } => walk(&store)
                .into_iter()
                .filter(|entry| entry.is_dir && entry.time >= since && parent_name(&entry.path) == Some(parent))
                .map(|entry| (file_name(&entry.path).to_owned(), entry.path, entry.time))
                .collect(),
        };
        candidates
            .into_iter()
            .filter(|(reference, _, _)| accepts(reference))
            .max_by_key(|(_, _, time)| *time)
            .map(|(reference, path, _)| FoundSession { reference, path })
    }
}

struct Entry {
    path: PathBuf,
    /// When it was created (see [`created`]).
    time: SystemTime,
    is_dir: bool,
}

/// When an entry was created; its modification time where the file
/// system keeps no creation time.
fn created(meta: &std::fs::Metadata) -> SystemTime {
    meta.created().or_else(|_| meta.modified()).unwrap_or(SystemTime::UNIX_EPOCH)
}

/// Every file and directory under `dir` (links are not followed), up to
/// [`MAX_ENTRIES`].
fn walk(dir: &Path) -> Vec<Entry> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries.flatten() {
            if found.len() >= MAX_ENTRIES {
                return found;
            }
            let Ok(meta) = entry.path().symlink_metadata() else { continue };
            let time = created(&meta);
            if meta.is_dir() {
                pending.push(entry.path());
            }
            if meta.is_dir() || meta.is_file() {
                found.push(Entry { path: entry.path(), time, is_dir: meta.is_dir() });
            }
        }
    }
    found
}

fn file_name(path: &Path) -> &str {
    path.file_name().and_then(|name| name.to_str()).unwrap_or_default()
}

fn parent_name(path: &Path) -> Option<&str> {
    path.parent().map(file_name)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn home() -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "panehost-session-store-{}-{}",
            std::process::id(),
            SystemTime::now().duration_since(SystemTime::UNIX_EPOCH).unwrap().as_nanos()
        ));
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn a_file_store_names_the_newest_session_since_the_start() {
        let home = home();
        let store = SessionStore {
            dir: ".cli/sessions".into(),
            moved_by: None,
            entry: SessionEntry::File {
                prefix: "rollout-".into(),
                suffix: ".jsonl".into(),
                reference_len: Some(4),
                parent: Some("chats".into()),
            },
        };
        let start = SystemTime::now();
        let env = vec![("HOME".to_owned(), home.display().to_string())];
        let location = store.location(&env).unwrap();
        assert_eq!(location, home.join(".cli/sessions"));
        assert_eq!(store.newest_since(&location, start, &any), None);
        write(&home.join(".cli/sessions/a/chats/rollout-2026-abcd.jsonl"), "{}");
        write(&home.join(".cli/sessions/a/other/rollout-2026-zzzz.jsonl"), "{}");
        write(&home.join(".cli/sessions/a/chats/notes.txt"), "");
        let found = store.newest_since(&location, start, &any).unwrap();
        assert_eq!(found.reference, "abcd");
        // Nothing written since a later start.
        assert_eq!(store.newest_since(&location, start + Duration::from_secs(60), &any), None);
        // A variable that moves the store wins over the home directory.
        let moved = SessionStore { moved_by: Some(("CLI_HOME".into(), "sessions".into())), ..store };
        let env = vec![("HOME".to_owned(), "/h".to_owned()), ("CLI_HOME".to_owned(), "/elsewhere".to_owned())];
        assert_eq!(moved.location(&env).unwrap(), Path::new("/elsewhere/sessions"));
        std::fs::remove_dir_all(&home).unwrap();
    }

    #[test]
    fn a_session_another_process_still_writes_is_not_taken() {
        let home = home();
        let store = SessionStore {
            dir: "s".into(),
            moved_by: None,
            entry: SessionEntry::File {
                prefix: String::new(),
                suffix: ".jsonl".into(),
                reference_len: None,
                parent: None,
            },
        };
        let older = home.join("s/older.jsonl");
        write(&older, "{}");
        // This pane starts once the older session's creation is past the slack.
        let created = std::fs::metadata(&older).unwrap().created().unwrap();
        while SystemTime::now() < created + CLOCK_SLACK * 2 {
            std::thread::yield_now();
        }
        let start = SystemTime::now();
        let mut appending = std::fs::OpenOptions::new().append(true).open(&older).unwrap();
        std::io::Write::write_all(&mut appending, b"{}\n").unwrap();
        assert_eq!(store.newest_since(&home.join("s"), start, &any), None, "written to, but created before the start");
        write(&home.join("s/mine.jsonl"), "{}");
        std::io::Write::write_all(&mut appending, b"{}\n").unwrap();
        assert_eq!(store.newest_since(&home.join("s"), start, &any).unwrap().reference, "mine");
        std::fs::remove_dir_all(&home).unwrap();
    }

    fn any(_: &str) -> bool {
        true
    }

    #[test]
    fn entries_that_are_not_sessions_are_passed_over() {
        let home = home();
        let start = SystemTime::now();
        let directories = SessionStore { dir: ".cli/state".into(), moved_by: None, entry: SessionEntry::Directory };
        let uuid = "11111111-2222-3333-4444-555555555555";
        write(&home.join(format!(".cli/state/{uuid}/events.jsonl")), "{}");
        // Created after the session: newest, but no session.
        std::fs::create_dir_all(home.join(".cli/state/.session-operation-locks")).unwrap();
        let is_uuid = |reference: &str| reference.len() == 36 && !reference.starts_with('.');
        let found = directories.newest_since(&home.join(".cli/state"), start, &is_uuid).unwrap();
        assert_eq!(found.reference, uuid);
        std::fs::remove_dir_all(&home).unwrap();
    }

    #[test]
    fn a_directory_store_names_the_directory() {
        let home = home();
        let start = SystemTime::now();
        let directories = SessionStore { dir: ".cli/state".into(), moved_by: None, entry: SessionEntry::Directory };
        write(&home.join(".cli/state/11111111-2222-3333-4444-555555555555/events.jsonl"), "{}");
        assert_eq!(
            directories.newest_since(&home.join(".cli/state"), start, &any).unwrap().reference,
            "11111111-2222-3333-4444-555555555555"
        );
        std::fs::remove_dir_all(&home).unwrap();
    }

    #[test]
    fn a_nested_directory_store_names_the_directory_in_its_parent() {
        let home = home();
        let start = SystemTime::now();
        let store = SessionStore {
            dir: ".cli/projects".into(),
            moved_by: None,
            entry: SessionEntry::NestedDirectory { parent: "sessions-v4".into() },
        };
        let id = "09e658159f522f12c9ee4bc49461a9d4";
        write(&home.join(format!(".cli/projects/-work/sessions-v4/{id}/manifest.json")), "{}");
        write(&home.join(format!(".cli/projects/-work/sessions-v4/.{id}.ownership.lock")), "");
        // Created later, with a session's name, but not in `sessions-v4`;
        // `.query-cache` itself is, and the pattern turns it away.
        write(&home.join(format!(".cli/projects/-work/sessions-v4/.query-cache/{id}/catalog.json")), "{}");
        let hex = |reference: &str| reference.len() == 32 && reference.bytes().all(|b| b.is_ascii_hexdigit());
        let found = store.newest_since(&home.join(".cli/projects"), start, &hex).unwrap();
        assert_eq!(found.reference, id);
        assert_eq!(found.path, home.join(format!(".cli/projects/-work/sessions-v4/{id}")));
        assert_eq!(store.newest_since(&home.join(".cli/projects"), start + Duration::from_secs(60), &hex), None);
        std::fs::remove_dir_all(&home).unwrap();
    }
}
