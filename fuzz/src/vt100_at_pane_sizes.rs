//! The vt100 model itself, at the sizes a pane may have (2 to 1000 columns
//! and rows), fed arbitrary output and resizes, uncontained: a panic here
//! is a bug of the model that a pane's output can reach. The host contains
//! such panics (see `screen_model`); this target says whether the smallest
//! pane size keeps them out of reach (it does not: a resize that narrows
//! the screen over a wide character reaches one, see docs/RELIABILITY.md).
//!
//! What it finds is vt100's, not the host's: its regression inputs are
//! replayed through the host's contained model
//! ([`vt100_at_pane_sizes_contained`]), which must survive them.

use panehost_host::pane::screen::TerminalScreen;
use panehost_ipc::Size;

/// Two bytes give the size, then each chunk of up to 64 bytes is output,
/// with a resize before every chunk whose first byte is 0xff.
pub fn vt100_at_pane_sizes(data: &[u8]) {
    let [cols, rows, rest @ ..] = data else { return };
    let (cols, rows) = pane_size(*cols, *rows);
    let mut parser = vt100::Parser::new(rows, cols, 0);
    for chunk in rest.chunks(64) {
        if let [0xff, cols, rows, ..] = chunk {
            let (cols, rows) = pane_size(*cols, *rows);
            parser.screen_mut().set_size(rows, cols);
        }
        parser.process(chunk);
    }
    let screen = parser.screen();
    let _ = (screen.contents(), screen.state_formatted(), screen.cursor_position());
}

/// Columns and rows from two bytes: 2 to 151 columns, 2 to 61 rows.
fn pane_size(cols: u8, rows: u8) -> (u16, u16) {
    (2 + u16::from(cols) % 150, 2 + u16::from(rows) % 60)
}

/// The same input through the host's terminal model, which contains the
/// vt100 model's panics: nothing escapes, and the model's offset follows
/// the output exactly.
pub fn vt100_at_pane_sizes_contained(data: &[u8]) {
    let [cols, rows, rest @ ..] = data else { return };
    let (cols, rows) = pane_size(*cols, *rows);
    let mut screen = TerminalScreen::new(Size { cols, rows }, 0, b"");
    let mut fed = 0u64;
    for chunk in rest.chunks(64) {
        if let [0xff, cols, rows, ..] = chunk {
            let (cols, rows) = pane_size(*cols, *rows);
            screen.resize(Size { cols, rows });
        }
        screen.process(chunk);
        fed += chunk.len() as u64;
        assert_eq!(screen.parsed(), fed);
    }
    assert_eq!(screen.snapshot().offset, fed);
}
