//! A resize of the terminal model that keeps the cursor's line on the
//! screen.
//!
//! The model's own resize keeps the top rows and cuts the bottom ones, where
//! the cursor and the newest output are: a shell pane shrunk from 30 rows
//! to 20 with its prompt on row 29 showed rows 0 to 19, without the prompt,
//! until the shell printed again. A terminal scrolls instead (xterm and
//! tmux push the top lines off): the lines above go first, so that the
//! cursor's line stays on the last row. So does this, on the main screen
//! (a full-screen program on the alternate screen redraws on the resize).

/// Resizes `model` to `rows` x `cols`; when fewer rows would cut the
/// cursor's line, the screen first scrolls up by as many lines as needed.
pub(super) fn resize_keeping_cursor<C: vt100::Callbacks>(model: &mut vt100::Parser<C>, rows: u16, cols: u16) {
    let (old_rows, _) = model.screen().size();
    let (row, col) = model.screen().cursor_position();
    let cut = (row + 1).saturating_sub(rows.max(1));
    if cut > 0 && !model.screen().alternate_screen() {
        // The whole screen scrolls (a scroll region is reset: a program
        // that set one sets it again for its new size), then the cursor
        // goes back to its line.
        let mut scroll = format!("\x1b[r\x1b[{old_rows};1H").into_bytes();
        scroll.extend(std::iter::repeat_n(b'\n', usize::from(cut)));
        model.process(&scroll);
        model.screen_mut().set_size(rows, cols);
        model.process(format!("\x1b[{};{}H", row - cut + 1, col + 1).as_bytes());
        return;
    }
    model.screen_mut().set_size(rows, cols);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(count: u16) -> vt100::Parser {
        let mut model = vt100::Parser::new(30, 80, 0);
        for n in 1..=count {
            model.process(format!("line-{n}\r\n").as_bytes());
        }
        model.process(b"prompt> ");
        model
    }

    #[test]
    fn fewer_rows_keep_the_cursors_line_and_the_lines_just_above() {
        let mut model = lines(59);
        resize_keeping_cursor(&mut model, 20, 80);
        let text = model.screen().contents();
        let rows: Vec<&str> = text.lines().collect();
        assert_eq!(rows.last().map(|row| row.trim_end()), Some("prompt>"), "{text}");
        assert_eq!(rows[rows.len() - 2], "line-59", "{text}");
        assert_eq!(rows[0], "line-41", "{text}");
        assert_eq!(model.screen().cursor_position(), (19, 8));
        // Output goes on where the cursor is.
        model.process(b"ls\r\nnext");
        assert!(model.screen().contents().ends_with("prompt> ls\nnext"), "{}", model.screen().contents());
    }

    #[test]
    fn a_cursor_that_stays_on_the_screen_moves_nothing() {
        let mut model = lines(5);
        resize_keeping_cursor(&mut model, 10, 40);
        assert!(model.screen().contents().starts_with("line-1\nline-2"));
        assert_eq!(model.screen().cursor_position(), (5, 8));
        let mut one = lines(59);
        resize_keeping_cursor(&mut one, 1, 80);
        assert_eq!(one.screen().contents().trim_end(), "prompt>");
        // More rows add blank ones below.
        let mut more = lines(59);
        resize_keeping_cursor(&mut more, 50, 80);
        assert_eq!(more.screen().cursor_position(), (29, 8));
    }

    #[test]
    fn the_alternate_screen_is_left_to_its_program() {
        let mut model = lines(59);
        model.process(b"\x1b[?1049h\x1b[30;1Hbottom");
        resize_keeping_cursor(&mut model, 20, 80);
        assert!(!model.screen().contents().contains("bottom"), "cut, as the model cuts: the program redraws");
    }
}
