//! The vt100 model itself, at the sizes a pane may have (2 to 1000 columns
//! and rows), fed arbitrary output and resizes, uncontained: a panic here
//! is a bug of the model that a pane's output can reach. The host contains
//! such panics (see `screen_model`); this target says whether the smallest
//! pane size keeps the known ones out of reach.

/// Two bytes give the size, then each chunk of up to 64 bytes is output,
/// with a resize before every chunk whose first byte is 0xff.
pub fn vt100_at_pane_sizes(data: &[u8]) {
    let [cols, rows, rest @ ..] = data else { return };
    let size = |cols: u8, rows: u8| (2 + u16::from(cols) % 150, 2 + u16::from(rows) % 60);
    let (cols, rows) = size(*cols, *rows);
    let mut parser = vt100::Parser::new(rows, cols, 0);
    for chunk in rest.chunks(64) {
        if let [0xff, cols, rows, ..] = chunk {
            let (cols, rows) = size(*cols, *rows);
            parser.screen_mut().set_size(rows, cols);
        }
        parser.process(chunk);
    }
    let screen = parser.screen();
    let _ = (screen.contents(), screen.state_formatted(), screen.cursor_position());
}
