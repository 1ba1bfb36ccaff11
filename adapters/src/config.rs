//! Custom runtimes declared by an operator in a TOML file, so a CLI can be
//! added without recompiling.
//!
//! The file holds one `[runtime.<id>]` table per runtime (the format is in
//! `docs/CONFIG.md`). Loading never fails as a whole: it returns the
//! runtimes that are valid and a [`ConfigProblem`] for everything else, each
//! with the line it is about. A syntax error is one problem for the whole
//! file; after that, each runtime is read on its own, so one bad runtime
//! does not take the others down.
//!
//! A custom runtime is held to the same contract as the built-in ones: its
//! declared `limitations` must be exactly the set that
//! [`contract::implied_limitations`](crate::contract::implied_limitations)
//! computes from what the launcher produces for it.

mod locate;
mod runtime;

use crate::descriptor::Descriptor;
use crate::environment::HostEnvironment;
use locate::Locator;
use std::fmt;
use std::io::ErrorKind;
use std::path::{Path, PathBuf};

/// The file's name, as problems name it.
pub const FILE_NAME: &str = "config.toml";

/// The table that holds the runtimes.
const RUNTIME_TABLE: &str = "runtime";

/// What loading the file gave: the valid custom runtimes, in the order the
/// file declares them, and what was wrong with the rest.
#[derive(Debug, Clone, Default)]
pub struct ConfigLoad {
    /// The runtimes that passed every check, ready for a catalog.
    pub runtimes: Vec<Descriptor>,
    /// Everything refused, in the order of the file.
    pub problems: Vec<ConfigProblem>,
}

/// One thing wrong with the file. Displayed as
/// `config.toml:12: runtime "mycli": message`; the line and the runtime are
/// left out when unknown or when the problem is about the whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigProblem {
    /// The line (from 1) the problem is about, when known.
    pub line: Option<usize>,
    /// The runtime the problem is about, if it is about one.
    pub runtime: Option<String>,
    /// A sentence for the operator.
    pub message: String,
}

impl fmt::Display for ConfigProblem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(FILE_NAME)?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        f.write_str(": ")?;
        if let Some(runtime) = &self.runtime {
            write!(f, "runtime {runtime:?}: ")?;
        }
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigProblem {}

/// Where the file is looked for: `$XDG_CONFIG_HOME/panehost/config.toml`
/// when that variable holds an absolute path, else
/// `$HOME/.config/panehost/config.toml`.
pub fn default_config_path(env: &HostEnvironment) -> PathBuf {
    let base = env
        .get("XDG_CONFIG_HOME")
        .map(PathBuf::from)
        .filter(|path| path.is_absolute())
        .unwrap_or_else(|| env.home().join(".config"));
    base.join("panehost").join(FILE_NAME)
}

/// The largest configuration file read.
pub const MAX_CONFIG_BYTES: u64 = 1024 * 1024;

/// Reads and loads the file at `path`. A missing file declares no runtime
/// and is not a problem; any other failure to read it (a directory, no
/// permission, text that is not UTF-8) is one problem.
pub fn load_file(path: &Path, built_in_ids: &[&str]) -> ConfigLoad {
    // Bounded before it is read: a configuration is a few KiB, and a path
    // that names a device or a huge file must not stall or fill the host.
    match std::fs::metadata(path) {
        Ok(metadata) if !metadata.is_file() || metadata.len() > MAX_CONFIG_BYTES => {
            return ConfigLoad {
                runtimes: Vec::new(),
                problems: vec![ConfigProblem {
                    line: None,
                    runtime: None,
                    message: format!(
                        "cannot read {}: not a regular file of at most {MAX_CONFIG_BYTES} bytes",
                        path.display()
                    ),
                }],
            };
        }
        _ => {}
    }
    match std::fs::read_to_string(path) {
        Ok(text) => load_custom_runtimes(&text, built_in_ids),
        Err(error) if error.kind() == ErrorKind::NotFound => ConfigLoad::default(),
        Err(error) => ConfigLoad {
            runtimes: Vec::new(),
            problems: vec![ConfigProblem {
                line: None,
                runtime: None,
                message: format!("cannot read {}: {error}", path.display()),
            }],
        },
    }
}

/// Loads the custom runtimes the text declares. `built_in_ids` are the ids
/// a custom runtime may not take.
pub fn load_custom_runtimes(text: &str, built_in_ids: &[&str]) -> ConfigLoad {
    let mut locator = Locator::new(text);
    let document = match text.parse::<toml::Table>() {
        Ok(document) => document,
        Err(error) => {
            return ConfigLoad {
                runtimes: Vec::new(),
                problems: vec![ConfigProblem {
                    line: error.span().map(|span| locator.line_of_offset(span.start)),
                    runtime: None,
                    message: format!("not valid TOML: {}", error.message().trim()),
                }],
            }
        }
    };
    locator.index_keys(text);

    let mut load = ConfigLoad::default();
    for key in document.keys() {
        if key == RUNTIME_TABLE {
            continue;
        }
        let mut message = format!("unknown top-level key `{key}`: this file holds `[{RUNTIME_TABLE}.<id>]` tables");
        if let Some(close) = runtime::closest(key, &[RUNTIME_TABLE]) {
            message.push_str(&format!(" (did you mean `{close}`?)"));
        }
        load.problems.push(ConfigProblem { line: locator.line_of_key(&[key]), runtime: None, message });
    }

    match document.get(RUNTIME_TABLE) {
        None => {}
        Some(toml::Value::Table(runtimes)) => {
            let mut declared: Vec<(&String, &toml::Value)> = runtimes.iter().collect();
            declared.sort_by_key(|(id, _)| {
                let line = locator.line_of_key(&[RUNTIME_TABLE, id]);
                (line.is_none(), line)
            });
            for (id, value) in declared {
                match runtime::read(id, value, built_in_ids, &locator) {
                    Ok(descriptor) => load.runtimes.push(descriptor),
                    Err(problems) => load.problems.extend(problems),
                }
            }
        }
        Some(other) => load.problems.push(ConfigProblem {
            line: locator.line_of_key(&[RUNTIME_TABLE]),
            runtime: None,
            message: format!("`{RUNTIME_TABLE}` must be a table of runtimes, not {}", runtime::a_type(other)),
        }),
    }

    load.problems.sort_by_key(|problem| (problem.line.is_none(), problem.line));
    load
}
