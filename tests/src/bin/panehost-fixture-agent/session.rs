//! The session store: one append-only log per session, and a `latest` pointer.
//!
//! ```text
//! <store>/fx-0123456789abcdef.log   "prompt: <text>\n" "answer: <text>\n" per turn
//! <store>/latest                    "<id>\n", replaced atomically (temp file + rename)
//! ```

use std::fmt;
use std::fs::{self, File, OpenOptions};
use std::io::{self, Read, Write};
use std::path::{Path, PathBuf};

use crate::output::report;

const ID_PREFIX: &str = "fx-";
const ID_HEX_DIGITS: usize = 16;
const LOG_EXTENSION: &str = "log";
const LATEST_FILE: &str = "latest";
const RANDOM_SOURCE: &str = "/dev/urandom";
/// New ids are random; a clash with an existing log just draws again, this many times.
const ID_ATTEMPTS: usize = 8;

/// A session id: `fx-` and 16 lowercase hex digits, so it is always a safe file name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SessionId(String);

impl SessionId {
    /// Accepts exactly `^fx-[0-9a-f]{16}$`.
    pub fn parse(text: &str) -> Option<Self> {
        let hex = text.strip_prefix(ID_PREFIX)?;
        let well_formed = hex.len() == ID_HEX_DIGITS && hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
        well_formed.then(|| SessionId(text.to_owned()))
    }

    /// A fresh id from the system's random source.
    fn random() -> io::Result<Self> {
        let mut bytes = [0u8; ID_HEX_DIGITS / 2];
        File::open(RANDOM_SOURCE)?.read_exact(&mut bytes)?;
        let hex: String = bytes.iter().map(|byte| format!("{byte:02x}")).collect();
        Ok(SessionId(format!("{ID_PREFIX}{hex}")))
    }
}

impl fmt::Display for SessionId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// One line of a session log.
#[derive(Debug, PartialEq)]
pub enum Entry {
    Prompt(String),
    Answer(String),
}

impl Entry {
    const PROMPT_TAG: &'static str = "prompt: ";
    const ANSWER_TAG: &'static str = "answer: ";

    fn parse(line: &str) -> Option<Self> {
        if let Some(text) = line.strip_prefix(Self::PROMPT_TAG) {
            Some(Entry::Prompt(text.to_owned()))
        } else {
            line.strip_prefix(Self::ANSWER_TAG).map(|text| Entry::Answer(text.to_owned()))
        }
    }
}

/// As stored, and as re-printed on resume: `prompt: <text>` or `answer: <text>`.
impl fmt::Display for Entry {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Entry::Prompt(text) => write!(f, "{}{text}", Self::PROMPT_TAG),
            Entry::Answer(text) => write!(f, "{}{text}", Self::ANSWER_TAG),
        }
    }
}

/// A session store directory.
pub struct Store {
    dir: PathBuf,
}

impl Store {
    /// Opens the store at `dir`, creating the directory if needed.
    pub fn open(dir: PathBuf) -> io::Result<Self> {
        fs::create_dir_all(&dir)?;
        Ok(Store { dir })
    }

    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Starts a new session: a fresh id with an empty log, marked as the latest.
    pub fn create_session(&self) -> io::Result<SessionId> {
        for _ in 0..ID_ATTEMPTS {
            let id = SessionId::random()?;
            match OpenOptions::new().write(true).create_new(true).open(self.log_path(&id)) {
                Ok(_) => {
                    self.mark_latest(&id)?;
                    return Ok(id);
                }
                Err(error) if error.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(error) => return Err(error),
            }
        }
        Err(io::Error::new(io::ErrorKind::AlreadyExists, "no unused session id found"))
    }

    /// Whether the store holds a log for `id`.
    pub fn contains(&self, id: &SessionId) -> bool {
        self.log_path(id).is_file()
    }

    /// The session that `latest` names, if it names one that exists.
    /// A malformed or dangling `latest` is reported and ignored.
    pub fn latest(&self) -> Option<SessionId> {
        let path = self.dir.join(LATEST_FILE);
        let content = match fs::read_to_string(&path) {
            Ok(content) => content,
            Err(error) if error.kind() == io::ErrorKind::NotFound => return None,
            Err(error) => {
                report(&format!("warning: cannot read {}: {error}; ignored", path.display()));
                return None;
            }
        };
        let Some(id) = SessionId::parse(content.trim_end()) else {
            report(&format!("warning: {} is malformed; ignored", path.display()));
            return None;
        };
        if !self.contains(&id) {
            report(&format!("warning: {} names a session with no log; ignored", path.display()));
            return None;
        }
        Some(id)
    }

    /// Points `latest` at `id`, atomically: write a temporary file, then rename it.
    pub fn mark_latest(&self, id: &SessionId) -> io::Result<()> {
        let temporary = self.dir.join(format!(".{LATEST_FILE}.{}.tmp", std::process::id()));
        let written =
            fs::write(&temporary, format!("{id}\n")).and_then(|()| fs::rename(&temporary, self.dir.join(LATEST_FILE)));
        if written.is_err() {
            // Best effort: the temporary file may not even exist.
            let _ = fs::remove_file(&temporary);
        }
        written
    }

    /// The conversation so far. Malformed lines are reported and skipped.
    pub fn history(&self, id: &SessionId) -> Vec<Entry> {
        let path = self.log_path(id);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(error) => {
                report(&format!("warning: cannot read {}: {error}; history skipped", path.display()));
                return Vec::new();
            }
        };
        let mut entries = Vec::new();
        for (index, line) in bytes.split(|&byte| byte == b'\n').enumerate() {
            if line.is_empty() {
                continue;
            }
            match std::str::from_utf8(line).ok().and_then(Entry::parse) {
                Some(entry) => entries.push(entry),
                None => report(&format!("warning: {} line {}: malformed record skipped", path.display(), index + 1)),
            }
        }
        entries
    }

    /// Appends one turn to the session's log (in a single write) and marks the session latest.
    pub fn append_turn(&self, id: &SessionId, prompt: &str, answer: &str) -> io::Result<()> {
        let record = format!("{}\n{}\n", Entry::Prompt(prompt.into()), Entry::Answer(answer.into()));
        OpenOptions::new().append(true).create(true).open(self.log_path(id))?.write_all(record.as_bytes())?;
        self.mark_latest(id)
    }

    fn log_path(&self, id: &SessionId) -> PathBuf {
        self.dir.join(format!("{id}.{LOG_EXTENSION}"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_must_be_fx_and_sixteen_lowercase_hex_digits() {
        assert!(SessionId::parse("fx-0123456789abcdef").is_some());
        for bad in [
            "",
            "fx-",
            "fx-0123456789abcde",
            "fx-0123456789abcdef0",
            "fx-0123456789ABCDEF",
            "fy-0123456789abcdef",
            "fx-0123456789abcdeg",
            "-x; rm",
            "fx-../../../etc/pa",
        ] {
            assert!(SessionId::parse(bad).is_none(), "{bad:?} accepted");
        }
    }

    #[test]
    fn random_ids_are_well_formed() {
        let id = SessionId::random().unwrap();
        assert!(SessionId::parse(&id.to_string()).is_some(), "{id}");
    }

    #[test]
    fn a_turn_round_trips_and_malformed_lines_are_skipped() {
        let dir = std::env::temp_dir().join(format!("fixture-agent-store-{}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        let store = Store::open(dir.clone()).unwrap();
        let id = store.create_session().unwrap();
        assert_eq!(store.latest(), Some(id.clone()));
        store.append_turn(&id, "hello", "olleh").unwrap();
        fs::OpenOptions::new()
            .append(true)
            .open(store.log_path(&id))
            .unwrap()
            .write_all(b"garbage\n\xff\xfe\n")
            .unwrap();
        assert_eq!(store.history(&id), vec![Entry::Prompt("hello".into()), Entry::Answer("olleh".into())]);
        fs::write(dir.join(LATEST_FILE), "fx-nothex\n").unwrap();
        assert_eq!(store.latest(), None);
        fs::remove_dir_all(&dir).unwrap();
    }
}
