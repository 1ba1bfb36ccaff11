//! Output that scrolls off the screen before a chunk ends: what of it the
//! terminal model must still see.
//!
//! A flood of plain lines (a file printed, a build's log) draws every line
//! and scrolls it away again; of a 64 KiB chunk only the last screenful
//! shows once the chunk is parsed. Parsing is most of a drain's work, so
//! the model is fed an equivalent shorter chunk: a run of plain output
//! (printable text, tab, CR, LF and SGR colour sequences) is cut at a CR
//! after which at least `2 × rows − 1` line feeds follow, and what comes
//! before the cut is replaced by its SGR sequences alone (from the last
//! one that resets the pen). The screen after the shorter chunk is the
//! same, cell for cell, as after the whole one:
//!
//! - after the CR the cursor is in column 0 either way, and text, tab, CR
//!   and LF move it the same way whatever row it is on;
//! - within `rows − 1` line feeds the cursor reaches the bottom row either
//!   way, and each further line feed scrolls the whole screen (there is no
//!   scroll region, and the model keeps no scrollback), so the last `rows`
//!   scrolls happen at the same bytes in both, and every row they leave on
//!   the screen was blank when it scrolled in and written the same way
//!   since;
//! - the pen is what the replayed SGR sequences make it, and nothing else
//!   in plain output changes the model's state.
//!
//! That needs three things of the model's state, which vt100 does not
//! expose, so this tracks them from what it is fed: the parser must be in
//! its ground state where the run starts (not inside an escape sequence
//! or a character's UTF-8 bytes), the grid drawn on must have no scroll
//! region, and which grid that is (the alternate screen has its own
//! region). Whatever is not certain counts against a cut: an escape
//! sequence this does not understand leaves the parser's state unknown
//! until a CSI sequence ends, and a scroll region is forgotten only when a
//! sequence resets it to the whole screen. Output that uses neither is cut
//! as it comes; output that does is parsed byte for byte, as before.
//!
//! Clears that follow one another are spared too: a screen clear
//! (`ESC [ 2 J`, alone or after the cursor's `ESC [ H`, or followed by
//! `ESC [ 3 J`; or `ESC [ H ESC [ J`, home and erase below) that comes
//! right after the same clear, from the ground
//! state, changes nothing (it moves no cursor, and the pen it clears with
//! is the same), so only the first of a run of them is fed. On a 1000x250
//! screen each clear rewrites 250,000 cells; a program that clears in a
//! loop would otherwise hold the model for seconds per chunk. Costly
//! output that is not repeated (a clear, then a line drawn, then a clear)
//! is parsed in steps bounded in time instead (`screen_follower.rs`).

use memchr::{memchr, memrchr};

/// Cuts that would spare fewer bytes are not made: the copy would cost
/// about what parsing them does.
const MIN_SPARED: usize = 512;

/// The clears whose repeats change nothing, longest first (so that a run
/// of the longer form is not read as one of its part).
/// A cursor-home-and-erase-below (`ESC [ H ESC [ J`) clears as much and
/// leaves the cursor where the next one starts, so its repeats change
/// nothing either.
const CLEARS: [&[u8]; 5] = [b"\x1b[H\x1b[2J\x1b[3J", b"\x1b[H\x1b[2J", b"\x1b[H\x1b[0J", b"\x1b[H\x1b[J", b"\x1b[2J"];

/// Where the run of repeated clears starting at `at` ends, when at least
/// two of the same clear start there: the model needs only the first.
fn repeated_clears(data: &[u8], at: usize) -> Option<(usize, usize)> {
    let rest = &data[at..];
    CLEARS.iter().find_map(|clear| {
        if rest.len() < 2 * clear.len() || !rest.starts_with(clear) || !rest[clear.len()..].starts_with(clear) {
            return None;
        }
        let mut end = at + 2 * clear.len();
        while data[end..].starts_with(clear) {
            end += clear.len();
        }
        Some((at + clear.len(), end))
    })
}

/// Parameters of a CSI sequence kept to understand it; one with more is
/// not understood.
const MAX_CSI_PARAMS: usize = 16;

/// The parser state, as far as known, after what was fed.
#[derive(Debug, Clone, PartialEq)]
enum Parse {
    /// In the ground state, with no character's bytes pending.
    Ground,
    /// Inside a sequence or a string this does not follow (or after a
    /// character whose bytes the chunk cut): ground again after the next
    /// CSI sequence ends, or CAN or SUB.
    Unknown,
    /// After ESC, and after intermediate bytes when `intermediates`.
    Escape { intermediates: bool },
    /// Inside a CSI sequence.
    Csi(Csi),
}

/// A CSI sequence read so far.
#[derive(Debug, Clone, PartialEq, Default)]
struct Csi {
    /// The private marker (`?`, `>`, ...) right after `ESC [`.
    marker: Option<u8>,
    params: Vec<u16>,
    current: u16,
    /// Any parameter or intermediate byte seen at all.
    any: bool,
    /// False once it holds something this does not follow (sub-parameters,
    /// intermediate bytes, a marker out of place, too many parameters).
    understood: bool,
}

/// Whether a grid may have a scroll region.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Region {
    WholeScreen,
    MaybeSet,
}

/// Finds output the screen scrolls off and shortens it; tracks what it
/// needs of the model's state across chunks. One per model: a new model
/// (blank, or rebuilt) starts with a new one.
#[derive(Debug, Clone)]
pub struct ScrollShortcut {
    parse: Parse,
    /// The main grid's region, then the alternate grid's.
    regions: [Region; 2],
    /// Which grid is drawn on, when known (`true`: the alternate one).
    alternate: Option<bool>,
    /// Bytes of output the model was spared so far (for tests and measurements).
    spared: u64,
}

impl Default for ScrollShortcut {
    fn default() -> Self {
        ScrollShortcut { parse: Parse::Ground, regions: [Region::WholeScreen; 2], alternate: None, spared: 0 }
    }
}

impl ScrollShortcut {
    /// For a blank model, in its ground state with no scroll region.
    pub fn new() -> Self {
        Self::default()
    }

    /// How many bytes of output the model was spared.
    pub fn spared(&self) -> u64 {
        self.spared
    }

    /// What to feed the model for `data`, the next output after what this
    /// saw: `data` itself, or its shortened form written into `shortened`,
    /// and how much of `data` that stands for. It is all of `data`, unless
    /// `leave_tail` and `data` ends in a plain run that was cut: then what
    /// follows the cut (the last screenful) is left for the next call,
    /// where more output may cut it too, and the caller gives the rest of
    /// `data`, from the returned length on, again with what comes next.
    /// `rows` is the model's height and `alternate` whether it shows the
    /// alternate screen, both as they are before `data`.
    pub fn shorten<'a>(
        &mut self,
        data: &'a [u8],
        rows: u16,
        alternate: bool,
        leave_tail: bool,
        shortened: &'a mut Vec<u8>,
    ) -> (&'a [u8], usize) {
        shortened.clear();
        self.alternate = Some(alternate);
        let mut copied = 0;
        let mut at = 0;
        while at < data.len() {
            if self.parse == Parse::Ground && data[at] == 0x1b {
                if let Some((first_end, end)) = repeated_clears(data, at) {
                    // The first clear is fed; those after it change nothing.
                    shortened.extend_from_slice(&data[copied..first_end]);
                    self.spared += (end - first_end) as u64;
                    copied = end;
                    at = end;
                    continue;
                }
            }
            if self.parse == Parse::Ground {
                let run = self.plain_run(data, at);
                if let Some(cut) = self.cut(data, run.start, run.end, rows) {
                    shortened.extend_from_slice(&data[copied..run.start]);
                    replay_pen(&data[run.start..cut], shortened);
                    self.spared += (cut - run.start) as u64;
                    copied = cut;
                    if leave_tail && run.end == data.len() {
                        // The parser is in ground at the cut.
                        return (shortened, cut);
                    }
                }
                at = run.end;
                if at < data.len() {
                    // What ended the run: an escape sequence, or a byte
                    // that is not plain (the parser stays in ground).
                    if data[at] == 0x1b {
                        self.parse = Parse::Escape { intermediates: false };
                    } else if !data[at].is_ascii() {
                        // Not a whole character: pending in the parser
                        // if the chunk ends within it.
                        if utf8_pending(&data[at..]) {
                            self.parse = Parse::Unknown;
                            return (finish(data, copied, shortened), data.len());
                        }
                    }
                    at += 1;
                }
            } else {
                self.step(data[at], rows);
                at += 1;
            }
        }
        (finish(data, copied, shortened), data.len())
    }

    /// The plain run from `start` (in ground): up to the first byte that is
    /// not plain text, tab, CR, LF or part of a whole SGR sequence.
    fn plain_run(&self, data: &[u8], start: usize) -> std::ops::Range<usize> {
        let mut at = start;
        while at < data.len() {
            // Printable text, eight bytes at a time.
            if let Some(word) = data.get(at..at + 8) {
                if all_printable(u64::from_le_bytes(word.try_into().expect("eight bytes"))) {
                    at += 8;
                    continue;
                }
            }
            let byte = data[at];
            match byte {
                b'\t' | b'\n' | b'\r' | 0x20..=0x7e => at += 1,
                0x1b => match sgr_len(&data[at..]) {
                    Some(len) => at += len,
                    None => break,
                },
                0x80.. => match plain_char_len(&data[at..]) {
                    Some(len) => at += len,
                    None => break,
                },
                _ => break,
            }
        }
        start..at
    }

    /// Where to cut the plain run `start..end`: the last CR after which at
    /// least `2 × rows − 1` line feeds follow, if the model may be cut
    /// there and the cut spares enough.
    fn cut(&self, data: &[u8], start: usize, end: usize, rows: u16) -> Option<usize> {
        if end - start < MIN_SPARED {
            return None;
        }
        let grid = usize::from(self.alternate?);
        if self.regions[grid] != Region::WholeScreen {
            return None;
        }
        let mut feeds_needed = 2 * usize::from(rows.max(1)) - 1;
        let mut before = end;
        while feeds_needed > 0 {
            before = start + memrchr(b'\n', &data[start..before])?;
            feeds_needed -= 1;
        }
        let cut = start + memrchr(b'\r', &data[start..before])?;
        (cut - start >= MIN_SPARED).then_some(cut)
    }

    /// Follows one byte outside the ground state.
    fn step(&mut self, byte: u8, rows: u16) {
        match byte {
            0x18 | 0x1a => {
                self.parse = Parse::Ground;
                return;
            }
            0x1b => {
                self.parse = Parse::Escape { intermediates: false };
                return;
            }
            _ => {}
        }
        match &mut self.parse {
            Parse::Ground | Parse::Unknown => {}
            Parse::Escape { intermediates } => match byte {
                0x20..=0x2f => *intermediates = true,
                0x30..=0x7e if *intermediates => self.parse = Parse::Ground,
                b'[' => self.parse = Parse::Csi(Csi { understood: true, ..Csi::default() }),
                b']' | b'P' | b'X' | b'^' | b'_' => self.parse = Parse::Unknown,
                b'c' => {
                    // A full reset: the main grid, no scroll regions.
                    self.regions = [Region::WholeScreen; 2];
                    self.alternate = Some(false);
                    self.parse = Parse::Ground;
                }
                0x30..=0x7e => self.parse = Parse::Ground,
                // Executed or ignored within the sequence.
                _ => {}
            },
            Parse::Csi(csi) => match byte {
                b'0'..=b'9' => {
                    csi.any = true;
                    csi.current = csi.current.saturating_mul(10).saturating_add(u16::from(byte - b'0'));
                }
                b';' => {
                    csi.any = true;
                    csi.params.push(csi.current);
                    csi.current = 0;
                    if csi.params.len() >= MAX_CSI_PARAMS {
                        csi.understood = false;
                    }
                }
                0x3c..=0x3f if !csi.any && csi.marker.is_none() => {
                    csi.any = true;
                    csi.marker = Some(byte);
                }
                0x20..=0x3f => {
                    csi.any = true;
                    csi.understood = false;
                }
                0x40..=0x7e => {
                    let mut csi = std::mem::take(csi);
                    csi.params.push(csi.current);
                    self.parse = Parse::Ground;
                    self.dispatch(&csi, byte, rows);
                }
                // C0 controls are executed within the sequence; DEL and
                // bytes above ASCII are ignored.
                _ => {}
            },
        }
    }

    /// What a whole CSI sequence does to the grids' scroll regions and to
    /// which grid is drawn on.
    fn dispatch(&mut self, csi: &Csi, last: u8, rows: u16) {
        match (csi.understood, csi.marker, last) {
            (true, None, b'r') => {
                let whole = region_is_whole_screen(&csi.params, rows);
                self.set_region(if whole { Region::WholeScreen } else { Region::MaybeSet });
            }
            (false, _, b'r') => self.set_region(Region::MaybeSet),
            (true, Some(b'?'), b'h' | b'l') => {
                for &mode in &csi.params {
                    match (mode, last) {
                        (47, b'h') => self.alternate = Some(true),
                        (1049, b'h') => {
                            // The alternate grid is cleared, its region too.
                            self.regions[1] = Region::WholeScreen;
                            self.alternate = Some(true);
                        }
                        (47 | 1049, b'l') => self.alternate = Some(false),
                        _ => {}
                    }
                }
            }
            (false, _, b'h' | b'l') => self.alternate = None,
            _ => {}
        }
    }

    fn set_region(&mut self, region: Region) {
        match self.alternate {
            Some(alternate) => self.regions[usize::from(alternate)] = region,
            // Either grid: only a region that may be set is certain.
            None if region == Region::MaybeSet => self.regions = [Region::MaybeSet; 2],
            None => {}
        }
    }
}

/// The bytes to feed: `data` untouched when nothing was cut.
fn finish<'a>(data: &'a [u8], copied: usize, shortened: &'a mut Vec<u8>) -> &'a [u8] {
    if copied == 0 {
        return data;
    }
    shortened.extend_from_slice(&data[copied..]);
    shortened
}

/// Whether DECSTBM with `params` leaves the whole screen scrolling, as
/// vt100 reads them (0 or missing: the first row, the last row).
fn region_is_whole_screen(params: &[u16], rows: u16) -> bool {
    let rows = rows.max(1);
    let top = params.first().copied().filter(|&top| top != 0).unwrap_or(1);
    let bottom = params.get(1).copied().filter(|&bottom| bottom != 0).unwrap_or(rows);
    let (top, bottom) = (top - 1, (bottom - 1).min(rows - 1));
    // A region that is not one (top at or below bottom) is the whole screen.
    top >= bottom || (top == 0 && bottom == rows - 1)
}

/// Whether every byte of `word` is printable ASCII (0x20 to 0x7e).
fn all_printable(word: u64) -> bool {
    const EACH: u64 = 0x0101_0101_0101_0101;
    const HIGH: u64 = 0x8080_8080_8080_8080;
    // Some byte is below n (n at most 0x80) when subtracting n from every
    // byte borrows into a high bit that was clear.
    let below = |word: u64, n: u64| word.wrapping_sub(EACH * n) & !word & HIGH != 0;
    word & HIGH == 0 && !below(word, 0x20) && !below(word ^ (EACH * 0x7f), 1)
}

/// The length of the SGR sequence `data` starts with (`ESC [`, digits,
/// `;` and `:`, then `m`), when it is whole.
fn sgr_len(data: &[u8]) -> Option<usize> {
    if data.get(1) != Some(&b'[') {
        return None;
    }
    let params = data[2..].iter().take_while(|byte| matches!(byte, b'0'..=b'9' | b';' | b':')).count();
    (data.get(2 + params) == Some(&b'm')).then_some(3 + params)
}

/// The length of the whole UTF-8 character `data` starts with, when it is
/// one the model prints (not a C1 control).
fn plain_char_len(data: &[u8]) -> Option<usize> {
    let len = match data[0] {
        0xc2..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf4 => 4,
        _ => return None,
    };
    let c = std::str::from_utf8(data.get(..len)?).ok()?.chars().next()?;
    (!('\u{80}'..='\u{9f}').contains(&c)).then_some(len)
}

/// Whether `data` (starting with a byte above ASCII) is the beginning of a
/// character the chunk ends within.
fn utf8_pending(data: &[u8]) -> bool {
    data.len() < 4 && matches!(std::str::from_utf8(data), Err(error) if error.error_len().is_none())
}

/// The SGR sequences of `cut_off` from the last one that resets the pen
/// (its first parameter 0 or none): the pen they leave is the one all of
/// them leave.
fn replay_pen(cut_off: &[u8], out: &mut Vec<u8>) {
    let mut sequences = Vec::new();
    let mut at = 0;
    while let Some(found) = memchr(0x1b, &cut_off[at..]) {
        let start = at + found;
        // Every escape in a plain run starts a whole SGR sequence.
        let len = sgr_len(&cut_off[start..]).unwrap_or(1);
        let sequence = start..start + len;
        if resets_pen(&cut_off[sequence.clone()]) {
            sequences.clear();
        }
        sequences.push(sequence);
        at = start + len;
    }
    for sequence in sequences {
        out.extend_from_slice(&cut_off[sequence]);
    }
}

/// `ESC [ m`, `ESC [ 0 m`, `ESC [ 0 ; ... m`, `ESC [ ; ... m`.
fn resets_pen(sgr: &[u8]) -> bool {
    let params = &sgr[2..sgr.len() - 1];
    let first = params.split(|&byte| byte == b';').next().unwrap_or_default();
    first.iter().all(|&digit| digit == b'0') && !first.contains(&b':')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn repeated_clears_are_fed_once() {
        assert_eq!(repeated_clears(b"\x1b[2J\x1b[2J\x1b[2Jx", 0), Some((4, 12)));
        assert_eq!(repeated_clears(b"\x1b[H\x1b[2J\x1b[H\x1b[2J", 0), Some((7, 14)));
        assert_eq!(repeated_clears(b"\x1b[H\x1b[J\x1b[H\x1b[J\x1b[H\x1b[Jx", 0), Some((6, 18)));
        assert_eq!(repeated_clears(b"\x1b[2Jx\x1b[2J", 0), None, "something between");
        assert_eq!(repeated_clears(b"\x1b[2J\x1b[2", 0), None, "a clear cut short");
        assert_eq!(repeated_clears(b"\x1b[H\x1b[2J\x1b[2J", 0), None, "another clear");
        let mut shortcut = ScrollShortcut::new();
        let mut shortened = Vec::new();
        let storm = b"\x1b[2J".repeat(1000);
        let (fed, taken) = shortcut.shorten(&storm, 250, false, false, &mut shortened);
        assert_eq!((fed, taken), (&b"\x1b[2J"[..], storm.len()));
        assert_eq!(shortcut.spared(), (storm.len() - 4) as u64);
        // Inside a sequence (the parser's state not ground), nothing is spared.
        let mut unsure = ScrollShortcut::new();
        let (fed, _) = unsure.shorten(b"\x1b]0;title", 24, false, false, &mut shortened);
        assert_eq!(fed, b"\x1b]0;title");
    }

    #[test]
    fn the_pen_replayed_starts_at_its_last_reset() {
        let mut out = Vec::new();
        replay_pen(b"a\x1b[1mb\x1b[31m\r\n\x1b[0;32mc\x1b[4md", &mut out);
        assert_eq!(out, b"\x1b[0;32m\x1b[4m");
        out.clear();
        replay_pen(b"\x1b[1m\x1b[38:2::1:2:3m\x1b[;7m", &mut out);
        assert_eq!(out, b"\x1b[;7m");
        out.clear();
        replay_pen(b"\x1b[1m\x1b[00m", &mut out);
        assert_eq!(out, b"\x1b[00m");
        assert!(!resets_pen(b"\x1b[10m"));
        assert!(!resets_pen(b"\x1b[0:1m"));
    }

    #[test]
    fn eight_bytes_are_printable_exactly_when_each_one_is() {
        let naive = |word: u64| word.to_le_bytes().iter().all(|byte| (0x20..=0x7e).contains(byte));
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut words = Vec::new();
        for byte in 0..=255u8 {
            // Each byte value in each place, among printable neighbours.
            for place in 0..8 {
                let mut bytes = *b"abcdefgh";
                bytes[place] = byte;
                words.push(u64::from_le_bytes(bytes));
            }
        }
        for _ in 0..100_000 {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            // Mostly printable, so that both answers come up.
            words.push(state & 0x3f3f_3f3f_3f3f_3f3f | 0x2020_2020_2020_2020);
            words.push(state);
        }
        for word in words {
            assert_eq!(all_printable(word), naive(word), "{:#018x}", word);
        }
    }

    #[test]
    fn a_region_is_the_whole_screen_as_vt100_reads_it() {
        assert!(region_is_whole_screen(&[0], 24));
        assert!(region_is_whole_screen(&[0, 0], 24));
        assert!(region_is_whole_screen(&[1, 24], 24));
        assert!(region_is_whole_screen(&[1, 99], 24));
        assert!(region_is_whole_screen(&[10, 5], 24), "not a region");
        assert!(region_is_whole_screen(&[24, 24], 24), "not a region");
        assert!(!region_is_whole_screen(&[2, 24], 24));
        assert!(!region_is_whole_screen(&[1, 23], 24));
        assert!(region_is_whole_screen(&[5], 1));
    }
}
