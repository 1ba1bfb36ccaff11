//! How wide the command's help and tables may be.
//!
//! `COLUMNS` wins when it holds a width (as `ls` takes it): a script or a
//! test can ask for 80 columns whatever it runs in. Otherwise the width of
//! the terminal on standard output, and 80 columns when standard output is
//! no terminal (a pipe, a file): what a person reads there later was most
//! likely written for a terminal of that common size.

use std::os::fd::AsFd;

/// The width used when neither `COLUMNS` nor a terminal says one.
pub(crate) const DEFAULT_COLUMNS: usize = 80;

/// The narrowest width honoured; anything narrower is taken as this.
const MIN_COLUMNS: usize = 40;

/// The widest width honoured (a `COLUMNS` of a million allocates nothing
/// but would never wrap).
const MAX_COLUMNS: usize = 1000;

/// The width to lay text out in (see the module's documentation).
pub(crate) fn columns() -> usize {
    let from_env = std::env::var("COLUMNS").ok().as_deref().and_then(parse_columns);
    from_env.or_else(terminal_columns).unwrap_or(DEFAULT_COLUMNS).clamp(MIN_COLUMNS, MAX_COLUMNS)
}

/// A `COLUMNS` value: a positive decimal number.
fn parse_columns(value: &str) -> Option<usize> {
    value.trim().parse::<usize>().ok().filter(|columns| *columns > 0)
}

/// The width of the terminal on standard output, when it is one.
fn terminal_columns() -> Option<usize> {
    let stdout = std::io::stdout();
    let size = rustix::termios::tcgetwinsize(stdout.as_fd()).ok()?;
    Some(usize::from(size.ws_col)).filter(|columns| *columns > 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_is_a_positive_number() {
        assert_eq!(parse_columns("80"), Some(80));
        assert_eq!(parse_columns(" 132\n"), Some(132));
        for wrong in ["", "0", "-1", "eighty", "80x24"] {
            assert_eq!(parse_columns(wrong), None, "{wrong:?}");
        }
    }
}
