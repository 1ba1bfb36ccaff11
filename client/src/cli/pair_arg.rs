//! `NAME=VALUE` arguments (`--label`, `--env`).

/// Splits `NAME=VALUE` at its first `=`; the value may be empty and may
/// hold further `=`.
pub(crate) fn parse_pair(text: &str) -> Result<(String, String), String> {
    match text.split_once('=') {
        Some((name, value)) if !name.is_empty() => Ok((name.to_owned(), value.to_owned())),
        _ => Err(format!("expected NAME=VALUE, not {text:?}")),
    }
}

#[cfg(test)]
mod tests {
    use super::parse_pair;

    #[test]
    fn splits_at_the_first_equals_sign() {
        assert_eq!(parse_pair("owner=ada"), Ok(("owner".into(), "ada".into())));
        assert_eq!(parse_pair("EMPTY="), Ok(("EMPTY".into(), String::new())));
        assert_eq!(parse_pair("URL=a=b"), Ok(("URL".into(), "a=b".into())));
        assert!(parse_pair("novalue").is_err());
        assert!(parse_pair("=value").is_err());
    }
}
