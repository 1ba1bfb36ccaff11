//! The command line: `--socket PATH --cols C --rows R --cwd DIR -- PROGRAM [ARGS...]`.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

/// One line saying how the keeper is invoked, for error messages.
pub const USAGE: &str = "usage: panehost-keeper --socket PATH --cols C --rows R --cwd DIR -- PROGRAM [ARGS...]";

/// What the keeper was asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Args {
    /// Where the keeper listens for its host.
    pub socket: PathBuf,
    /// The PTY's width in columns.
    pub cols: u16,
    /// The PTY's height in rows.
    pub rows: u16,
    /// The child's working directory.
    pub cwd: PathBuf,
    /// The program to run in the PTY.
    pub program: OsString,
    /// The program's arguments (not including its name).
    pub program_args: Vec<OsString>,
}

/// Parses the arguments after the keeper's own name. Each option appears
/// exactly once, in any order, before `--`; everything after `--` is the
/// child's argv.
pub fn parse(mut args: impl Iterator<Item = OsString>) -> Result<Args, String> {
    let mut socket = None;
    let mut cols = None;
    let mut rows = None;
    let mut cwd = None;
    loop {
        let Some(arg) = args.next() else {
            return Err(format!("missing `--` and PROGRAM; {USAGE}"));
        };
        if arg == "--" {
            break;
        }
        let name = arg.to_string_lossy().into_owned();
        let value = args.next().ok_or_else(|| format!("{name} needs a value; {USAGE}"))?;
        let slot_taken = match name.as_str() {
            "--socket" => socket.replace(PathBuf::from(value)).is_some(),
            "--cwd" => cwd.replace(PathBuf::from(value)).is_some(),
            "--cols" => cols.replace(dimension(&name, &value)?).is_some(),
            "--rows" => rows.replace(dimension(&name, &value)?).is_some(),
            _ => return Err(format!("unknown option {name}; {USAGE}")),
        };
        if slot_taken {
            return Err(format!("{name} given twice"));
        }
    }
    let program = args.next().ok_or_else(|| format!("missing PROGRAM after `--`; {USAGE}"))?;
    let missing = |name: &str| format!("missing {name}; {USAGE}");
    Ok(Args {
        socket: socket.ok_or_else(|| missing("--socket"))?,
        cols: cols.ok_or_else(|| missing("--cols"))?,
        rows: rows.ok_or_else(|| missing("--rows"))?,
        cwd: cwd.ok_or_else(|| missing("--cwd"))?,
        program,
        program_args: args.collect(),
    })
}

/// A terminal dimension: a whole number from 1 to 65535.
fn dimension(name: &str, value: &OsStr) -> Result<u16, String> {
    value
        .to_str()
        .and_then(|text| text.parse::<u16>().ok())
        .filter(|&n| n > 0)
        .ok_or_else(|| format!("{name} must be a number from 1 to 65535, not {}", value.to_string_lossy()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Args, String> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn parses_a_full_command_line() {
        let args =
            parse_strs(&["--rows", "24", "--socket", "/d/s", "--cwd", "/w", "--cols", "80", "--", "sh", "-c", "x"])
                .unwrap();
        assert_eq!(args.socket, PathBuf::from("/d/s"));
        assert_eq!((args.cols, args.rows), (80, 24));
        assert_eq!(args.cwd, PathBuf::from("/w"));
        assert_eq!(args.program, "sh");
        assert_eq!(args.program_args, vec![OsString::from("-c"), OsString::from("x")]);
    }

    #[test]
    fn refuses_bad_command_lines() {
        assert!(parse_strs(&["--socket", "/s", "--cols", "80", "--rows", "24", "--cwd", "/"]).is_err());
        assert!(parse_strs(&["--socket", "/s", "--cols", "80", "--rows", "24", "--cwd", "/", "--"]).is_err());
        assert!(parse_strs(&["--socket", "/s", "--cols", "0", "--rows", "24", "--cwd", "/", "--", "sh"]).is_err());
        assert!(parse_strs(&["--socket", "/s", "--cols", "80", "--cwd", "/", "--", "sh"]).is_err());
        assert!(parse_strs(&[
            "--socket", "/s", "--socket", "/t", "--cols", "80", "--rows", "24", "--cwd", "/", "--", "sh"
        ])
        .is_err());
        assert!(parse_strs(&["--bogus", "1", "--", "sh"]).is_err());
    }
}
