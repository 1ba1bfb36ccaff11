//! `COLSxROWS` arguments.

use panehost_ipc::Size;

/// Parses `COLSxROWS`, such as `120x40`, within the bounds of [`Size`].
pub(crate) fn parse_size(text: &str) -> Result<Size, String> {
    let shape = || format!("expected COLSxROWS, such as 120x40, not {text:?}");
    let (cols, rows) = text.trim().split_once(['x', 'X']).ok_or_else(shape)?;
    let parse = |part: &str, what: &str| -> Result<u16, String> {
        let part = part.trim();
        if part.is_empty() || !part.bytes().all(|byte| byte.is_ascii_digit()) {
            return Err(shape());
        }
        part.parse::<u16>().map_err(|_| format!("{what} must be at most {}", u16::MAX))
    };
    let size = Size { cols: parse(cols, "columns")?, rows: parse(rows, "rows")? };
    size.check().map_err(|err| err.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_columns_by_rows() {
        assert_eq!(parse_size("120x40"), Ok(Size { cols: 120, rows: 40 }));
        assert_eq!(parse_size("80X24"), Ok(Size { cols: 80, rows: 24 }));
        assert_eq!(parse_size(" 2x2 "), Ok(Size { cols: 2, rows: 2 }));
        assert_eq!(parse_size("1000x250"), Ok(Size { cols: 1000, rows: 250 }));
    }

    #[test]
    fn refuses_sizes_out_of_range_with_the_bounds() {
        for text in ["0x24", "80x0", "1x5", "80x1", "1001x2", "1000x251", "65535x65535"] {
            let error = parse_size(text).unwrap_err();
            assert!(error.contains("out of range: columns from 2 to 1000"), "{text}: {error}");
        }
    }

    #[test]
    fn refuses_malformed_and_oversized() {
        for text in ["", "80", "x24", "80x", "80x24x2", "-1x24", "+80x24", "8 0x24", "axb"] {
            assert!(parse_size(text).unwrap_err().contains("COLSxROWS"), "{text:?}");
        }
        assert!(parse_size("70000x24").unwrap_err().contains("at most 65535"));
        assert!(parse_size("99999999999999999999x24").unwrap_err().contains("at most 65535"));
    }
}
