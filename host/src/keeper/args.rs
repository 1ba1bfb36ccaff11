//! The keeper's command line (`--sockets DIR`) and the words of a pane
//! request (`--socket PATH --cols C --rows R --cwd DIR [--env NAME=VALUE]...
//! -- PROGRAM [ARGS...]`).

use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// One line saying how the keeper is invoked, for error messages.
pub const USAGE: &str = "usage: panehost-keeper --sockets DIR (pane requests on stdin)";

/// The words a pane request is made of, for error messages.
pub const PANE_USAGE: &str =
    "a pane request is --socket PATH --cols C --rows R --cwd DIR [--env NAME=VALUE]... -- PROGRAM [ARGS...]";

/// Parses the arguments after the keeper's own name: exactly
/// `--sockets DIR`, the directory every pane's socket must be in.
pub fn parse_keeper(args: impl Iterator<Item = OsString>) -> Result<PathBuf, String> {
    let args: Vec<OsString> = args.collect();
    match args.as_slice() {
        [flag, dir] if flag == "--sockets" && !dir.is_empty() => Ok(PathBuf::from(dir)),
        _ => Err(USAGE.to_owned()),
    }
}

/// One pane the host asks the keeper to start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PaneRequest {
    /// Where the keeper listens for this pane's host.
    pub socket: PathBuf,
    /// The PTY's width in columns.
    pub cols: u16,
    /// The PTY's height in rows.
    pub rows: u16,
    /// The child's working directory.
    pub cwd: PathBuf,
    /// The child's whole environment, in order.
    pub env: Vec<(OsString, OsString)>,
    /// The program to run in the PTY.
    pub program: OsString,
    /// The program's arguments (not including its name).
    pub program_args: Vec<OsString>,
}

/// Parses a pane request's words. `--socket`, `--cols`, `--rows` and
/// `--cwd` appear exactly once each and `--env` any number of times, in any
/// order, before `--`; everything after `--` is the child's argv. The
/// socket must be a file directly inside `sockets`.
pub fn parse_pane(mut words: impl Iterator<Item = OsString>, sockets: &Path) -> Result<PaneRequest, String> {
    let mut socket = None;
    let mut cols = None;
    let mut rows = None;
    let mut cwd = None;
    let mut env = Vec::new();
    loop {
        let Some(word) = words.next() else {
            return Err(format!("missing `--` and PROGRAM; {PANE_USAGE}"));
        };
        if word == "--" {
            break;
        }
        let name = word.to_string_lossy().into_owned();
        let value = words.next().ok_or_else(|| format!("{name} needs a value; {PANE_USAGE}"))?;
        let slot_taken = match name.as_str() {
            "--socket" => socket.replace(PathBuf::from(value)).is_some(),
            "--cwd" => cwd.replace(PathBuf::from(value)).is_some(),
            "--cols" => cols.replace(dimension(&name, &value)?).is_some(),
            "--rows" => rows.replace(dimension(&name, &value)?).is_some(),
            "--env" => {
                env.push(variable(&value)?);
                false
            }
            _ => return Err(format!("unknown option {name}; {PANE_USAGE}")),
        };
        if slot_taken {
            return Err(format!("{name} given twice"));
        }
    }
    let program = words.next().ok_or_else(|| format!("missing PROGRAM after `--`; {PANE_USAGE}"))?;
    let missing = |name: &str| format!("missing {name}; {PANE_USAGE}");
    let socket = socket.ok_or_else(|| missing("--socket"))?;
    if socket.parent() != Some(sockets) || socket.file_name().is_none() {
        return Err(format!("the socket {} is not a file in {}", socket.display(), sockets.display()));
    }
    Ok(PaneRequest {
        socket,
        cols: cols.ok_or_else(|| missing("--cols"))?,
        rows: rows.ok_or_else(|| missing("--rows"))?,
        cwd: cwd.ok_or_else(|| missing("--cwd"))?,
        env,
        program,
        program_args: words.collect(),
    })
}

/// A terminal dimension: a whole number from 2 to 1000 (the bounds of a
/// pane's size; the host checks the cells too).
fn dimension(name: &str, value: &OsStr) -> Result<u16, String> {
    value
        .to_str()
        .and_then(|text| text.parse::<u16>().ok())
        .filter(|n| (MIN_DIMENSION..=MAX_DIMENSION).contains(n))
        .ok_or_else(|| {
            format!("{name} must be a number from {MIN_DIMENSION} to {MAX_DIMENSION}, not {}", value.to_string_lossy())
        })
}

/// The smallest terminal dimension a keeper accepts.
const MIN_DIMENSION: u16 = 2;
/// The largest terminal dimension a keeper accepts.
const MAX_DIMENSION: u16 = 1000;

/// `NAME=VALUE`, split at the first `=`; the name may not be empty.
fn variable(value: &OsStr) -> Result<(OsString, OsString), String> {
    let bytes = value.as_bytes();
    match bytes.iter().position(|&byte| byte == b'=') {
        Some(equals) if equals > 0 => {
            Ok((OsStr::from_bytes(&bytes[..equals]).to_owned(), OsStr::from_bytes(&bytes[equals + 1..]).to_owned()))
        }
        _ => Err(format!("--env needs NAME=VALUE, not {}", value.to_string_lossy())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(words: &[&str]) -> Result<PaneRequest, String> {
        parse_pane(words.iter().map(OsString::from), Path::new("/d"))
    }

    #[test]
    fn parses_a_full_pane_request() {
        let request = parse_strs(&[
            "--rows", "24", "--socket", "/d/s", "--env", "A=1=2", "--cwd", "/w", "--cols", "80", "--env", "B=", "--",
            "sh", "-c", "x",
        ])
        .unwrap();
        assert_eq!(request.socket, PathBuf::from("/d/s"));
        assert_eq!((request.cols, request.rows), (80, 24));
        assert_eq!(request.cwd, PathBuf::from("/w"));
        assert_eq!(request.env, vec![("A".into(), "1=2".into()), ("B".into(), "".into())]);
        assert_eq!(request.program, "sh");
        assert_eq!(request.program_args, vec![OsString::from("-c"), OsString::from("x")]);
    }

    #[test]
    fn refuses_bad_pane_requests() {
        assert!(parse_strs(&["--socket", "/d/s", "--cols", "80", "--rows", "24", "--cwd", "/"]).is_err());
        assert!(parse_strs(&["--socket", "/d/s", "--cols", "80", "--rows", "24", "--cwd", "/", "--"]).is_err());
        for cols in ["0", "1", "1001", "65535", "99999"] {
            let words = ["--socket", "/d/s", "--cols", cols, "--rows", "24", "--cwd", "/", "--", "sh"];
            assert!(parse_strs(&words).is_err(), "--cols {cols}");
        }
        let smallest = parse_strs(&["--socket", "/d/s", "--cols", "2", "--rows", "2", "--cwd", "/", "--", "sh"]);
        assert_eq!(smallest.map(|request| (request.cols, request.rows)), Ok((2, 2)));
        let largest = parse_strs(&["--socket", "/d/s", "--cols", "1000", "--rows", "1000", "--cwd", "/", "--", "sh"]);
        assert!(largest.is_ok());
        assert!(parse_strs(&["--socket", "/d/s", "--cols", "80", "--cwd", "/", "--", "sh"]).is_err());
        assert!(parse_strs(&[
            "--socket", "/d/s", "--socket", "/d/t", "--cols", "80", "--rows", "24", "--cwd", "/", "--", "sh"
        ])
        .is_err());
        assert!(parse_strs(&["--bogus", "1", "--", "sh"]).is_err());
        let env = ["--cols", "80", "--rows", "24", "--cwd", "/", "--env"];
        assert!(parse_strs(&[&["--socket", "/d/s"], &env[..], &["=x", "--", "sh"]].concat()).is_err());
        assert!(parse_strs(&[&["--socket", "/d/s"], &env[..], &["NOEQUALS", "--", "sh"]].concat()).is_err());
        let elsewhere = parse_strs(&["--socket", "/e/s", "--cols", "80", "--rows", "24", "--cwd", "/", "--", "sh"]);
        assert!(elsewhere.unwrap_err().contains("not a file in /d"));
        let nested = parse_strs(&["--socket", "/d/x/s", "--cols", "80", "--rows", "24", "--cwd", "/", "--", "sh"]);
        assert!(nested.is_err());
    }

    #[test]
    fn the_keeper_takes_only_its_sockets_directory() {
        let parse = |words: &[&str]| parse_keeper(words.iter().map(OsString::from));
        assert_eq!(parse(&["--sockets", "/d"]), Ok(PathBuf::from("/d")));
        assert!(parse(&[]).is_err());
        assert!(parse(&["--sockets"]).is_err());
        assert!(parse(&["--sockets", ""]).is_err());
        assert!(parse(&["--sockets", "/d", "--", "sh"]).is_err());
    }
}
