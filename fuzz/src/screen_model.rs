//! The pane's terminal model (the host's `TerminalScreen`, which contains
//! the vt100 model's panics) fed arbitrary output with arbitrary resizes,
//! snapshots, sleeps and wakes, at any size (one column, one row too): it
//! never panics out, its offset always advances by exactly what it was
//! fed, and a snapshot always describes that offset. The history's scratch
//! model is fed the same output and contained the same way.

use panehost_host::pane::history;
use panehost_host::pane::screen::TerminalScreen;
use panehost_ipc::Size;

/// Where the model's offsets begin.
const BASE: u64 = 1000;

/// A size from two bytes: 1 to 130 columns, 1 to 60 rows (below the
/// smallest pane size too: a model must survive whatever it is given).
fn size(cols: u8, rows: u8) -> Size {
    Size { cols: 1 + u16::from(cols) % 130, rows: 1 + u16::from(rows) % 60 }
}

/// Two bytes give the size; then operations, each a byte and its operands:
/// 0 to 7 output (the next byte is its length), 8 a resize (two bytes),
/// 9 a snapshot, 10 sleep and wake, 11 a history re-parse.
pub fn screen_model(data: &[u8]) {
    let [cols, rows, rest @ ..] = data else { return };
    let mut rest: &[u8] = rest;
    let mut current = size(*cols, *rows);
    let mut screen = TerminalScreen::new(current, BASE, b"");
    let mut output: Vec<u8> = Vec::new();
    while let [operation, more @ ..] = rest {
        rest = more;
        match operation % 12 {
            0..=7 => {
                let [length, more @ ..] = rest else { break };
                let take = usize::from(*length).min(more.len());
                let (chunk, more) = more.split_at(take);
                rest = more;
                screen.process(chunk);
                output.extend_from_slice(chunk);
                assert_eq!(screen.parsed(), BASE + output.len() as u64, "the offset follows the output exactly");
            }
            8 => {
                let [cols, rows, more @ ..] = rest else { break };
                rest = more;
                current = size(*cols, *rows);
                screen.resize(current);
            }
            9 => {
                let snapshot = screen.snapshot();
                assert_eq!(snapshot.offset, screen.parsed());
                assert!(snapshot.text.lines().count() <= usize::from(snapshot.size.rows));
            }
            10 => {
                if screen.sleep() {
                    let origin = screen.origin_offset().expect("a sleeping model has an origin");
                    let from = usize::try_from(origin - BASE).expect("an origin within the output");
                    screen.wake(&output[from..]);
                    assert!(!screen.is_asleep());
                }
            }
            _ => {
                let _ = history::render(&output, current, 50);
            }
        }
    }
    let snapshot = screen.snapshot();
    assert_eq!(snapshot.offset, BASE + output.len() as u64);
}
