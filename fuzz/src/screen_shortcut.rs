//! The screen shortcut (`pane::scroll_shortcut`): output fed to two vt100
//! models, one whole and one through the shortcut, in the same chunks with
//! the same resizes; after every chunk they must agree on everything a
//! screen shows or keeps (cells, colours, the pen, the cursor, wrapped
//! rows, modes, which grid, the scroll region). Output is built from
//! operations that make what the shortcut looks for: floods of lines,
//! with or without carriage returns, colours, wide and combining
//! characters, scroll regions, grid switches, sequences left open, and
//! chunks that end anywhere.

use panehost_host::pane::scroll_shortcut::ScrollShortcut;

/// Two models of one terminal: `whole` parses every byte, `short` what
/// the shortcut gives it.
pub struct ShortcutPair {
    whole: vt100::Parser,
    short: vt100::Parser,
    shortcut: ScrollShortcut,
    /// Output the short model has yet to take (a tail the shortcut left).
    pending: Vec<u8>,
}

impl std::fmt::Debug for ShortcutPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShortcutPair").field("shortcut", &self.shortcut).finish_non_exhaustive()
    }
}

impl ShortcutPair {
    /// Both blank, `rows` by `cols`.
    pub fn new(rows: u16, cols: u16) -> ShortcutPair {
        ShortcutPair {
            whole: vt100::Parser::new(rows, cols, 0),
            short: vt100::Parser::new(rows, cols, 0),
            shortcut: ScrollShortcut::new(),
            pending: Vec::new(),
        }
    }

    /// Feeds `data` to both, then checks they agree.
    pub fn feed(&mut self, data: &[u8]) {
        assert!(self.process(data, false), "vt100 panicked");
        self.assert_same();
    }

    /// Feeds `data` to both, the short model through the shortcut leaving a
    /// flood's last screenful for the next feed; checks they agree when it
    /// left none.
    pub fn feed_leaving_tail(&mut self, data: &[u8]) {
        assert!(self.process(data, true), "vt100 panicked");
        if self.pending.is_empty() {
            self.assert_same();
        }
    }

    /// Resizes both, then checks they agree.
    pub fn resize(&mut self, rows: u16, cols: u16) {
        assert!(self.set_size(rows, cols), "vt100 panicked");
        self.assert_same();
    }

    /// Feeds `data` to both; false if vt100 itself panicked (a bug of its
    /// own, which the host contains; the models may differ from there on).
    fn process(&mut self, data: &[u8], leave_tail: bool) -> bool {
        let (whole, short, shortcut, pending) =
            (&mut self.whole, &mut self.short, &mut self.shortcut, &mut self.pending);
        contained(|| {
            whole.process(data);
            let mut input = std::mem::take(pending);
            input.extend_from_slice(data);
            let (rows, _) = short.screen().size();
            let alternate = short.screen().alternate_screen();
            let mut shortened = Vec::new();
            let (fed, taken) = shortcut.shorten(&input, rows, alternate, leave_tail, &mut shortened);
            short.process(fed);
            *pending = input[taken..].to_vec();
        })
        .is_some()
    }

    /// Resizes both (the short model first takes what it left); false if
    /// vt100 itself panicked.
    fn set_size(&mut self, rows: u16, cols: u16) -> bool {
        if !self.pending.is_empty() && !self.process(&[], false) {
            return false;
        }
        let (whole, short) = (&mut self.whole, &mut self.short);
        contained(|| {
            whole.screen_mut().set_size(rows, cols);
            short.screen_mut().set_size(rows, cols);
        })
        .is_some()
    }

    /// How many bytes the short model was spared.
    pub fn spared(&self) -> u64 {
        self.shortcut.spared()
    }

    /// Panics where the two models differ, in what they show or in how a
    /// line feed at the bottom scrolls them (the scroll region, which no
    /// screen shows).
    pub fn assert_same(&self) {
        assert_same_screen(self.whole.screen(), self.short.screen());
        let probe = b"\x1b[999;1H\n\nprobe\x1b[1;1H\x1bM\x1bMtop";
        let probed = |screen: &vt100::Screen| {
            contained(|| {
                let mut parser = vt100::Parser::new(1, 1, 0);
                *parser.screen_mut() = screen.clone();
                parser.process(probe);
                parser.screen().clone()
            })
        };
        match (probed(self.whole.screen()), probed(self.short.screen())) {
            (Some(whole), Some(short)) => assert_same_screen(&whole, &short),
            (None, None) => {}
            (whole, _) => {
                panic!("the probe made only the {} model panic", if whole.is_none() { "whole" } else { "short" })
            }
        }
    }
}

/// Panics unless the two screens agree on everything a screen shows or
/// keeps.
pub(crate) fn assert_same_screen(whole: &vt100::Screen, short: &vt100::Screen) {
    assert_eq!(short.contents(), whole.contents());
    assert_eq!(short.state_formatted(), whole.state_formatted());
    assert_eq!(short.cursor_position(), whole.cursor_position());
    assert_eq!(short.attributes_formatted(), whole.attributes_formatted(), "the pen");
    assert_eq!(short.alternate_screen(), whole.alternate_screen());
    let (rows, _) = whole.size();
    for row in 0..rows {
        assert_eq!(short.row_wrapped(row), whole.row_wrapped(row), "row {row} wrapped");
    }
}

/// Plain output: what a flood's lines are made of.
const PLAIN: &[&[u8]] = &[
    b"a",
    b"word ",
    b" ",
    b"\t",
    b"\r",
    b"0123456789012345678901234567890123456789",
    "漢".as_bytes(),
    "e\u{301}".as_bytes(),
    "🦀".as_bytes(),
    "é".as_bytes(),
    b"\x1b[m",
    b"\x1b[0m",
    b"\x1b[1;31m",
    b"\x1b[38;5;9m",
    b"\x1b[0;44m",
    b"\x1b[38:2::1:2:3m",
    b"\x1b[;4m",
];

/// Pieces of output the operations draw from.
const PIECES: &[&[u8]] = &[
    b"\x1b[m",
    b"\x1b[0m",
    b"\x1b[1;31m",
    b"\x1b[38;5;208m",
    b"\x1b[38;2;10;20;30m",
    b"\x1b[38:2::1:2:3m",
    b"\x1b[;4m",
    b"\x1b[5;10r",
    b"\x1b[r",
    b"\x1b[1;999r",
    b"\x1b[?1049h",
    b"\x1b[?1049l",
    b"\x1b[?47h",
    b"\x1b[?47l",
    b"\x1b[?1049;1$h",
    b"\x1b]2;title",
    b"\x07",
    b"\x1b\\",
    b"\x1bc",
    b"\x1b7",
    b"\x1b8",
    b"\x1b[H",
    b"\x1b[2J",
    b"\x1b[3A",
    b"\x1bM",
    b"\x18",
    b"\x1b[",
    b"\x1b",
    "漢".as_bytes(),
    b"\xe6\xbc",
    "e\u{301}".as_bytes(),
    "🦀".as_bytes(),
    b"\t",
    b"\x08",
    b"\xc2\x9b",
    b"\xff",
];

/// Two bytes give the size (1 to 40 rows, 1 to 100 columns); then
/// operations, each a byte and its operands, that append to the output
/// or feed it: 0 to 3 raw bytes (a length, then the bytes); 4 and 5 a
/// flood (a line count, a line length, a byte saying whether lines end
/// in CR LF or LF, and the line's bytes: for 4 each picks a piece of
/// [`PLAIN`], for 5 they are the line); 6 to 8 a piece from
/// [`PIECES`]; 9 feeds the output in chunks of a length the next byte
/// gives (in 64-byte steps, its lowest bit saying whether a flood's last
/// screenful may be left for the next chunk); 10 a resize (two bytes).
/// What is left is fed at the end.
pub fn screen_shortcut(data: &[u8]) {
    screen_shortcut_spared(data);
}

/// The same check, giving how many bytes of output the shortcut spared
/// the short model: inputs that never reach a cut test little.
pub fn screen_shortcut_spared(data: &[u8]) -> u64 {
    let [rows, cols, rest @ ..] = data else { return 0 };
    let mut pair = ShortcutPair::new(1 + u16::from(*rows) % 40, 1 + u16::from(*cols) % 100);
    let mut rest: &[u8] = rest;
    let mut output = Vec::new();
    while let [operation, more @ ..] = rest {
        rest = more;
        match operation % 11 {
            0..=3 => {
                let [length, more @ ..] = rest else { break };
                let take = usize::from(*length).min(more.len());
                output.extend_from_slice(&more[..take]);
                rest = &more[take..];
            }
            4 | 5 => {
                let [lines, length, ending, more @ ..] = rest else { break };
                let take = usize::from(*length).min(more.len());
                let line = &more[..take];
                rest = &more[take..];
                // 4: the line's bytes pick plain pieces (what the shortcut
                // cuts); 5: the line's bytes as they are.
                let line: Vec<u8> = if operation % 11 == 4 {
                    line.iter().flat_map(|&byte| PLAIN[usize::from(byte) % PLAIN.len()].iter().copied()).collect()
                } else {
                    line.to_vec()
                };
                for n in 0..usize::from(*lines) {
                    // Lines of different lengths: each a rotation of the
                    // line, cut short.
                    let from = if line.is_empty() { 0 } else { n % line.len() };
                    output.extend_from_slice(&line[from..]);
                    output.extend_from_slice(if ending % 2 == 0 { b"\r\n" } else { b"\n" });
                }
            }
            6..=8 => {
                let [index, more @ ..] = rest else { break };
                rest = more;
                output.extend_from_slice(PIECES[usize::from(*index) % PIECES.len()]);
            }
            9 => {
                let [size, more @ ..] = rest else { break };
                rest = more;
                if !feed(&mut pair, &output, 64 * (1 + usize::from(*size / 2)), size % 2 == 1) {
                    return pair.spared();
                }
                output.clear();
            }
            _ => {
                let [rows, cols, more @ ..] = rest else { break };
                rest = more;
                if !pair.set_size(1 + u16::from(*rows) % 40, 1 + u16::from(*cols) % 100) {
                    return pair.spared();
                }
                pair.assert_same();
            }
        }
    }
    feed(&mut pair, &output, 4096, false);
    pair.spared()
}

/// Feeds `output` in chunks of `size`, checking the models agree after
/// each the short model took whole, and after the last; false once vt100
/// itself panicked.
fn feed(pair: &mut ShortcutPair, output: &[u8], size: usize, leave_tail: bool) -> bool {
    for chunk in output.chunks(size) {
        if !pair.process(chunk, leave_tail) {
            return false;
        }
        if pair.pending.is_empty() {
            pair.assert_same();
        }
    }
    if !pair.process(&[], false) {
        return false;
    }
    pair.assert_same();
    true
}

/// Runs `f`, giving `None` if it panicked (vt100's own bugs).
pub(crate) fn contained<R>(f: impl FnOnce() -> R) -> Option<R> {
    panehost_host::contained::contained("the terminal model", f)
}
