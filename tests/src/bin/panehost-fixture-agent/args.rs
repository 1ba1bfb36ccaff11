//! The command line: `[--store DIR] [--resume ID | --continue]`, `--print PROMPT`, `--version`, `--help`.

use std::ffi::{OsStr, OsString};
use std::path::PathBuf;

pub const USAGE: &str = "\
usage: panehost-fixture-agent [--store DIR] [--resume ID | --continue]
       panehost-fixture-agent --print PROMPT
       panehost-fixture-agent --version | --help
";

pub const HELP: &str = "\
options:
  --store DIR   session store directory (default: $HOME/.panehost-fixture-agent)
  --resume ID   resume the session ID (fx- followed by 16 lowercase hex digits)
  --continue    resume the most recent session in the store
  --print PROMPT  answer PROMPT once on stdout and exit (no terminal, no session)
  --version     print the version and exit
  --help        print this help and exit
";

/// What the command line asks for.
#[derive(Debug, PartialEq)]
pub enum Action {
    Run(Options),
    /// `--print PROMPT`: one answer, then exit.
    Print(String),
    Version,
    Help,
}

/// How to run a session.
#[derive(Debug, PartialEq)]
pub struct Options {
    /// `--store DIR`, when given.
    pub store: Option<PathBuf>,
    pub start: Start,
}

/// Which session to run.
#[derive(Debug, PartialEq)]
pub enum Start {
    New,
    /// `--resume ID`, exactly as given (validated later).
    Resume(OsString),
    /// `--continue`.
    Continue,
}

/// A command line that cannot be run; the text says why.
#[derive(Debug, PartialEq)]
pub struct UsageError(pub String);

/// Parses the arguments that follow the program name.
///
/// Options take their value either as the next argument or after `=`
/// (`--store DIR`, `--store=DIR`). `--help` and `--version` win as soon as
/// they are seen.
pub fn parse(args: impl IntoIterator<Item = OsString>) -> Result<Action, UsageError> {
    let mut args = args.into_iter();
    let mut store = None;
    let mut start = Start::New;

    while let Some(arg) = args.next() {
        let (name, inline_value) = split_inline_value(&arg);
        let mut value = |name: &str| {
            inline_value.clone().or_else(|| args.next()).ok_or_else(|| UsageError(format!("{name} needs a value")))
        };
        match name.as_str() {
            "--help" | "-h" => return Ok(Action::Help),
            "--version" | "-V" => return Ok(Action::Version),
            "--print" => {
                let prompt = value("--print")?;
                return match prompt.into_string() {
                    Ok(prompt) => Ok(Action::Print(prompt)),
                    Err(_) => Err(UsageError("--print needs UTF-8 text".into())),
                };
            }
            "--store" => {
                if store.is_some() {
                    return Err(UsageError("--store given twice".into()));
                }
                store = Some(PathBuf::from(value("--store")?));
            }
            "--resume" => {
                let id = value("--resume")?;
                start = choose_start(start, Start::Resume(id))?;
            }
            "--continue" if inline_value.is_none() => {
                start = choose_start(start, Start::Continue)?;
            }
            _ => return Err(UsageError(format!("unexpected argument {arg:?}"))),
        }
    }
    Ok(Action::Run(Options { store, start }))
}

/// Splits `--name=value` into its name and value; any other argument is all name.
fn split_inline_value(arg: &OsStr) -> (String, Option<OsString>) {
    let Some(text) = arg.to_str() else {
        return (arg.to_string_lossy().into_owned(), None);
    };
    match text.split_once('=') {
        Some((name, value)) if name.starts_with("--") => (name.to_owned(), Some(OsString::from(value))),
        _ => (text.to_owned(), None),
    }
}

/// `--resume` and `--continue` each choose the session; only one may be given, once.
fn choose_start(current: Start, requested: Start) -> Result<Start, UsageError> {
    match current {
        Start::New => Ok(requested),
        _ => Err(UsageError("give at most one of --resume and --continue".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse_strs(args: &[&str]) -> Result<Action, UsageError> {
        parse(args.iter().map(OsString::from))
    }

    #[test]
    fn no_arguments_start_a_new_session_in_the_default_store() {
        let expected = Action::Run(Options { store: None, start: Start::New });
        assert_eq!(parse_strs(&[]), Ok(expected));
    }

    #[test]
    fn store_and_resume_take_values_in_both_forms() {
        let expected = Action::Run(Options {
            store: Some(PathBuf::from("/s")),
            start: Start::Resume("fx-0123456789abcdef".into()),
        });
        assert_eq!(parse_strs(&["--store", "/s", "--resume", "fx-0123456789abcdef"]), Ok(expected));
        let expected = Action::Run(Options {
            store: Some(PathBuf::from("/s")),
            start: Start::Resume("fx-0123456789abcdef".into()),
        });
        assert_eq!(parse_strs(&["--store=/s", "--resume=fx-0123456789abcdef"]), Ok(expected));
    }

    #[test]
    fn a_value_that_looks_like_a_flag_is_still_the_value() {
        let expected = Action::Run(Options { store: None, start: Start::Resume("-x; rm".into()) });
        assert_eq!(parse_strs(&["--resume", "-x; rm"]), Ok(expected));
    }

    #[test]
    fn bad_command_lines_are_usage_errors() {
        assert!(parse_strs(&["--bogus"]).is_err());
        assert!(parse_strs(&["positional"]).is_err());
        assert!(parse_strs(&["--resume"]).is_err());
        assert!(parse_strs(&["--continue", "--resume", "fx-0123456789abcdef"]).is_err());
        assert!(parse_strs(&["--continue=yes"]).is_err());
        assert!(parse_strs(&["--store", "a", "--store", "b"]).is_err());
    }

    #[test]
    fn help_and_version_win() {
        assert_eq!(parse_strs(&["--continue", "--version"]), Ok(Action::Version));
        assert_eq!(parse_strs(&["--help"]), Ok(Action::Help));
    }
}
