//! Shell integration: prompt marks (OSC 133, as modern terminals use them)
//! for an interactive bash the host starts, so that the host sees where
//! each command starts and ends, and with what exit status, instead of
//! guessing from quiet output.
//!
//! The launch names a startup file of the host's own (`--rcfile`, in its
//! hook directory). It reads what bash would have read (the system's
//! `/etc/bash.bashrc` where there is one, then the user's `~/.bashrc`),
//! then adds the marks around the user's prompt:
//!
//! - `OSC 133 ; C` after a command line is read, before it runs (`PS0`);
//! - `OSC 133 ; D ; <status>` when the prompt comes back, with `$?`, then
//!   `OSC 133 ; A` where the prompt starts (`PROMPT_COMMAND`, run first so
//!   that it sees the command's status). Where a whole line already waits
//!   in the terminal (typed while the command ran, and not read by it),
//!   the mark is `OSC 133 ; A ; input_waiting=1`: the line editor reads
//!   it at once, so a command is about to run, not a prompt to wait at.
//!   (`read -t 0` reads nothing: it says whether input is there, and the
//!   terminal, back in line mode between commands, says so only for a
//!   whole line.)
//! - `OSC 133 ; B` where the prompt ends and the user's input begins
//!   (the end of `PS1`).
//!
//! The user's files are never touched. Other shells, and a client's own
//! command, run without marks (their turns end by the screen heuristic).

use crate::completion::{Injection, LaunchFile};
use crate::environment::HostEnvironment;
use std::path::Path;

/// The bash flag that names the startup file (which bash's help must list).
pub const RCFILE_FLAG: &str = "--rcfile";

/// The startup file's name in the hook directory.
const RCFILE_NAME: &str = "bash-prompt-marks.bashrc";

/// What bash runs at start instead of `~/.bashrc`.
const RCFILE: &str = r#"# Written by the panehost host for the interactive bash of a pane: the
# startup files bash reads by default, then prompt marks (OSC 133) that
# tell the host where each command starts and ends, and its exit status.
if [ -f /etc/bash.bashrc ]; then . /etc/bash.bashrc; fi
if [ -f "$HOME/.bashrc" ]; then . "$HOME/.bashrc"; fi
__panehost_prompt_marks() {
    local status=$? waiting=
    if read -t 0; then waiting=';input_waiting=1'; fi
    printf '\033]133;D;%s\007\033]133;A%s\007' "$status" "$waiting"
    return "$status"
}
case ";${PROMPT_COMMAND-};" in
    *";__panehost_prompt_marks;"*) ;;
    *) PROMPT_COMMAND="__panehost_prompt_marks${PROMPT_COMMAND:+;$PROMPT_COMMAND}" ;;
esac
PS0="${PS0-}"$'\033]133;C\007'
PS1="${PS1-\$ }"$'\\[\033]133;B\007\\]'
"#;

/// The injection that gives `program` prompt marks: `None` unless it is
/// bash and the host offers a directory for its startup file.
pub fn bash_prompt_marks(program: &Path, environment: &HostEnvironment) -> Option<Injection> {
    if program.file_name().and_then(|name| name.to_str()) != Some("bash") {
        return None;
    }
    let path = environment.hook_dir.as_deref()?.join(RCFILE_NAME);
    Some(Injection {
        args: vec![RCFILE_FLAG.to_owned(), path.display().to_string()],
        environment: Vec::new(),
        files: vec![LaunchFile { path, contents: RCFILE.to_owned() }],
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    fn host(hook_dir: Option<&str>) -> HostEnvironment {
        HostEnvironment { hook_dir: hook_dir.map(PathBuf::from), ..HostEnvironment::default() }
    }

    #[test]
    fn only_bash_gets_marks_and_only_with_a_hook_directory() {
        let marks = bash_prompt_marks(Path::new("/usr/bin/bash"), &host(Some("/state/hooks"))).unwrap();
        assert_eq!(marks.args, ["--rcfile", "/state/hooks/bash-prompt-marks.bashrc"]);
        assert_eq!(marks.files[0].path, PathBuf::from("/state/hooks/bash-prompt-marks.bashrc"));
        assert!(marks.files[0].contents.contains("133;D;%s"));
        assert!(marks.files[0].contents.contains("read -t 0; then waiting=';input_waiting=1'"));
        for other in ["/bin/sh", "/usr/bin/zsh", "/usr/bin/fish", "/opt/bash-like"] {
            assert!(bash_prompt_marks(Path::new(other), &host(Some("/state/hooks"))).is_none(), "{other}");
        }
        assert!(bash_prompt_marks(Path::new("/bin/bash"), &host(None)).is_none());
    }
}
