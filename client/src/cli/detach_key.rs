//! Detach key names: `^\`, `^]`, `ctrl-a`, `C-x`, `0x1c`.

/// The default detach key: Ctrl-\ (byte 0x1c), which raw mode passes on
/// instead of raising SIGQUIT, and which few programs bind.
pub(crate) const DEFAULT_DETACH_KEY: &str = "^\\";
/// The byte [`DEFAULT_DETACH_KEY`] stands for (Ctrl-\\).
pub(crate) const DEFAULT_DETACH_KEY_BYTE: u8 = 0x1c;

/// Parses a detach key into the byte the terminal sends for it.
///
/// Accepted: `^X`, `ctrl-X`, `ctrl+X` or `C-X` where X is a letter or one
/// of `@ [ \ ] ^ _ ?` (`^?` is DEL), and `0xNN` for any byte.
pub(crate) fn parse_detach_key(text: &str) -> Result<u8, String> {
    let trimmed = text.trim();
    if let Some(hex) = trimmed.strip_prefix("0x").or_else(|| trimmed.strip_prefix("0X")) {
        return u8::from_str_radix(hex, 16).map_err(|_| format!("{text:?} is not a byte in hex, such as 0x1c"));
    }
    let lower = trimmed.to_ascii_lowercase();
    let key = ["^", "ctrl-", "ctrl+", "c-"]
        .iter()
        .find_map(|prefix| lower.starts_with(prefix).then(|| &trimmed[prefix.len()..]));
    let refuse = || format!("unknown key {text:?}: use ^X, ctrl-X or 0xNN, such as ^\\ or ^]");
    let key = key.ok_or_else(refuse)?;
    let mut chars = key.chars();
    let (Some(key), None) = (chars.next(), chars.next()) else {
        return Err(refuse());
    };
    match key.to_ascii_uppercase() {
        '?' => Ok(0x7f),
        key @ ('@' | 'A'..='Z' | '[' | '\\' | ']' | '^' | '_') => Ok(key as u8 ^ 0x40),
        _ => Err(refuse()),
    }
}

/// How a key is written for people: `^\` for control bytes, `0xNN` else.
pub(crate) fn describe_key(byte: u8) -> String {
    match byte {
        0x00..=0x1f => format!("^{}", (byte ^ 0x40) as char),
        0x7f => "^?".to_owned(),
        _ => format!("0x{byte:02x}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn caret_and_ctrl_forms() {
        assert_eq!(parse_detach_key("^\\"), Ok(0x1c));
        assert_eq!(parse_detach_key("^]"), Ok(0x1d));
        assert_eq!(parse_detach_key("^a"), Ok(0x01));
        assert_eq!(parse_detach_key("^A"), Ok(0x01));
        assert_eq!(parse_detach_key("ctrl-b"), Ok(0x02));
        assert_eq!(parse_detach_key("Ctrl+Q"), Ok(0x11));
        assert_eq!(parse_detach_key("C-@"), Ok(0x00));
        assert_eq!(parse_detach_key("^?"), Ok(0x7f));
        assert_eq!(parse_detach_key("^_"), Ok(0x1f));
    }

    #[test]
    fn hex_form() {
        assert_eq!(parse_detach_key("0x1c"), Ok(0x1c));
        assert_eq!(parse_detach_key("0XFF"), Ok(0xff));
        assert!(parse_detach_key("0x100").is_err());
    }

    #[test]
    fn refuses_everything_else() {
        for text in ["", "^", "^ab", "q", "ctrl-", "ctrl-1", "^!", "alt-x", "0xzz"] {
            assert!(parse_detach_key(text).is_err(), "{text:?}");
        }
    }

    #[test]
    fn describes_keys_back() {
        assert_eq!(describe_key(0x1c), "^\\");
        assert_eq!(describe_key(0x1d), "^]");
        assert_eq!(describe_key(0x7f), "^?");
        assert_eq!(describe_key(b'q'), "0x71");
        assert_eq!(parse_detach_key(DEFAULT_DETACH_KEY), Ok(0x1c));
        assert_eq!(describe_key(0x1c), DEFAULT_DETACH_KEY);
    }
}
