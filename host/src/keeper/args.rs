//! The keeper's command line: `--sockets DIR`. (A pane request's words are
//! the keeper's wire: `keeper_wire/pane_request.rs`.)

use std::ffi::OsString;
use std::path::PathBuf;

/// One line saying how the keeper is invoked, for error messages.
pub(super) const USAGE: &str = "usage: panehost-keeper --sockets DIR (pane requests on stdin)";

/// Parses the arguments after the keeper's own name: exactly
/// `--sockets DIR`, the directory every pane's socket must be in.
pub(super) fn parse_keeper(args: impl Iterator<Item = OsString>) -> Result<PathBuf, String> {
    let args: Vec<OsString> = args.collect();
    match args.as_slice() {
        [flag, dir] if flag == "--sockets" && !dir.is_empty() => Ok(PathBuf::from(dir)),
        _ => Err(USAGE.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
