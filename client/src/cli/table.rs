//! Plain-text tables for people.

use super::printable;

/// Renders a header row and rows as left-aligned columns separated by two
/// spaces; the last column is not padded. Control characters in a cell
/// (a pane's title is whatever its program set) are shown escaped, never
/// sent to the terminal.
pub(crate) fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
    let rows: Vec<Vec<String>> =
        rows.iter().map(|row| row.iter().map(|cell| printable::line(cell).into_owned()).collect()).collect();
    let rows = &rows;
    let mut widths: Vec<usize> = headers.iter().map(|header| header.chars().count()).collect();
    for row in rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.chars().count());
        }
    }
    let mut out = String::new();
    let mut push_row = |cells: &mut dyn Iterator<Item = &str>| {
        let cells: Vec<&str> = cells.collect();
        for (index, cell) in cells.iter().enumerate() {
            out.push_str(cell);
            if index + 1 < cells.len() {
                let pad = widths[index].saturating_sub(cell.chars().count()) + 2;
                out.push_str(&" ".repeat(pad));
            }
        }
        out.truncate(out.trim_end_matches(' ').len());
        out.push('\n');
    };
    push_row(&mut headers.iter().copied());
    for row in rows {
        push_row(&mut row.iter().map(String::as_str));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_characters_are_shown_not_sent() {
        let rows = vec![vec!["p1".to_owned(), "\x1b]2;owned\x07\x1b[2Jtitle\r\n\u{9b}".to_owned()]];
        let table = render(&["ID", "TITLE"], &rows);
        assert!(table.lines().all(|line| !line.chars().any(char::is_control)), "{table:?}");
        assert!(table.contains("\\u{1b}]2;owned\\u{7}\\u{1b}[2Jtitle\\r\\n\\u{9b}"), "{table}");
    }

    #[test]
    fn aligns_columns() {
        let row = |cells: [&str; 3]| cells.map(str::to_owned).to_vec();
        let rows = vec![row(["p1", "shell", "x"]), row(["p10", "a", ""])];
        assert_eq!(render(&["ID", "RUNTIME", "TITLE"], &rows), "ID   RUNTIME  TITLE\np1   shell    x\np10  a\n");
    }
}
