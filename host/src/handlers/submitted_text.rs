//! What a submission's text may hold.
//!
//! A submission (`ask`, `send` with `enter`) types its text as a paste:
//! text, never keys. Inside a bracketed paste a program reads every other
//! control character as text (bash echoes a Ctrl-U in one), but the
//! terminal's line discipline acts on a few before any program reads
//! them, whatever the program asked for: Ctrl-C (SIGINT, and the input not
//! read yet is thrown away), Ctrl-\ (SIGQUIT), Ctrl-Z (SIGTSTP), Ctrl-S
//! and Ctrl-Q (output stopped and started). Inside text from a web form
//! or a model's answer, a Ctrl-C cut the paste short and what followed it
//! ran as typed keys. A submission whose text holds one is refused; keys
//! go in `bytes`.
//!
//! A program that has not turned bracketed paste on gets the text as
//! typed keys: there a carriage return or a line feed is an Enter (`ls\r
//! rm -rf ~` ran two commands), an escape starts a key's sequence (an
//! Up-arrow recalls history), Ctrl-D ends the input of a program reading
//! lines, Ctrl-U and Ctrl-W and DEL edit the line. Text for such a program
//! may hold no control character but a tab, or it is refused.

use panehost_ipc::{ErrorBody, ErrorCode};

/// The characters the line discipline acts on whatever mode the program
/// set (with its default settings: `ISIG` and `IXON`).
const ACTED_ON_BY_THE_TERMINAL: [char; 5] = ['\x03', '\x1c', '\x1a', '\x13', '\x11'];

/// Refuses `text` when it holds a character the terminal would act on
/// rather than pass to the program (see the module's documentation).
pub(crate) fn check_submitted_text(text: &str) -> Result<(), ErrorBody> {
    let Some((at, control)) = text.char_indices().find(|(_, c)| ACTED_ON_BY_THE_TERMINAL.contains(c)) else {
        return Ok(());
    };
    Err(ErrorBody::new(
        ErrorCode::InvalidArgument,
        format!(
            "the text holds Ctrl-{} (U+{:04X}, byte {at}), which the terminal acts on (a signal or a stop) rather \
             than types; a submission's text is text: send keys as `bytes`, without `enter`",
            char::from(b'@' + control as u8),
            u32::from(control)
        ),
    ))
}

/// Refuses `text` for a program that reads it as typed keys (no
/// bracketed paste): it may hold no control character but a tab.
pub(crate) fn check_unpasted_text(text: &str) -> Result<(), ErrorBody> {
    let Some((at, control)) = text.char_indices().find(|(_, c)| c.is_ascii_control() && *c != '\t') else {
        return Ok(());
    };
    let name = match control {
        '\r' => "a carriage return (an Enter)".to_owned(),
        '\n' => "a line feed (an Enter)".to_owned(),
        '\x1b' => "an escape (the start of a key's sequence)".to_owned(),
        '\x7f' => "DEL (an erase)".to_owned(),
        other => format!("Ctrl-{}", char::from(b'@' + other as u8)),
    };
    Err(ErrorBody::new(
        ErrorCode::InvalidArgument,
        format!(
            "the text holds {name} (U+{:04X}, byte {at}), and the program has not turned bracketed paste on, so it \
             would read it as a key; text for it holds no control character but a tab: send keys as `bytes`, \
             without `enter`",
            u32::from(control)
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpasted_text_refuses_every_key_but_a_tab() {
        assert!(check_unpasted_text("ls -la\tand 日本語 é").is_ok());
        for (text, named) in [
            ("ls\rrm -rf ~", "a carriage return"),
            ("one\ntwo", "a line feed"),
            ("x\x1b[A", "an escape"),
            ("end\x04", "Ctrl-D"),
            ("a\x15b", "Ctrl-U"),
            ("a\x7f", "DEL"),
        ] {
            let refused = check_unpasted_text(text).unwrap_err();
            assert_eq!(refused.code, ErrorCode::InvalidArgument.as_str());
            assert!(refused.message.contains(named), "{text:?}: {}", refused.message);
        }
    }

    #[test]
    fn signals_and_stops_are_refused_and_their_place_named() {
        for control in ACTED_ON_BY_THE_TERMINAL {
            let text = format!("echo \"summarise: {control}  touch INJECTED\"");
            let refused = check_submitted_text(&text).unwrap_err();
            assert_eq!(refused.code, ErrorCode::InvalidArgument.as_str());
            assert!(refused.message.contains(&format!("U+{:04X}, byte 17", u32::from(control))), "{}", refused.message);
        }
        assert!(check_submitted_text("\x03").unwrap_err().message.contains("Ctrl-C"));
        assert!(check_submitted_text("x\x1a").unwrap_err().message.contains("Ctrl-Z"));
    }

    #[test]
    fn other_controls_lines_tabs_escapes_and_any_script_are_text() {
        for text in
            ["", "ls -la", "line one\nline two\r\n\tindented", "\x1b[31mred\x1b[0m", "日本語 é 🙂", "a\x15b\x04\x7f"]
        {
            assert!(check_submitted_text(text).is_ok(), "{text:?}");
        }
    }
}
