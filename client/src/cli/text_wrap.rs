//! Wrapping text for people to a width, at spaces where it can.

/// Breaks `text` into lines of at most `width` characters: at spaces, and
/// inside a word only when the word alone is wider (a long path). Runs of
/// spaces between words count as one. An empty text gives no line.
pub(crate) fn wrap(text: &str, width: usize) -> Vec<String> {
    let width = width.max(1);
    let mut lines = Vec::new();
    let mut line = String::new();
    let mut line_chars = 0;
    for word in text.split_whitespace() {
        let mut word: Vec<char> = word.chars().collect();
        let needed = if line_chars == 0 { word.len() } else { line_chars + 1 + word.len() };
        if needed <= width {
            if line_chars > 0 {
                line.push(' ');
                line_chars += 1;
            }
            line.extend(word.iter());
            line_chars += word.len();
            continue;
        }
        if line_chars > 0 {
            lines.push(std::mem::take(&mut line));
        }
        while word.len() > width {
            let rest = word.split_off(width);
            lines.push(word.into_iter().collect());
            word = rest;
        }
        line_chars = word.len();
        line = word.into_iter().collect();
    }
    if line_chars > 0 {
        lines.push(line);
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn wraps_at_spaces_and_cuts_only_words_wider_than_the_line() {
        assert_eq!(wrap("none of the names was found", 12), ["none of the", "names was", "found"]);
        assert_eq!(wrap("at /a/very/long/path/x", 8), ["at", "/a/very/", "long/pat", "h/x"]);
        assert_eq!(wrap("  a   b ", 80), ["a b"]);
        assert!(wrap("", 80).is_empty());
        for line in wrap(&"word ".repeat(100), 17) {
            assert!(line.chars().count() <= 17, "{line}");
        }
    }
}
