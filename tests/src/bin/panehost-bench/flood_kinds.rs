//! What a flooding pane prints in the noisy-neighbour benchmark: four kinds
//! of flood, each written once per run to a file of its own, which the
//! flood writer then prints over and over.
//!
//! - `lines`: plain ASCII lines of 40 to 79 columns;
//! - `clears`: `ESC [ 2 J` (clear the screen), 16,384 of them, nothing else;
//! - `sgr`: lines of 400 characters, each character with a colour change of
//!   its own (256 colours, true colour, bold, backgrounds);
//! - `wide`: lines of CJK text (two columns a character) and Latin letters
//!   with one or two combining accents each;
//! - `redraws`: what a full-screen program that redraws in a loop prints,
//!   frame after frame: cursor home and erase below (`ESC [ H ESC [ J`),
//!   a status line, then a thousand blanks inserted at the top left
//!   (`ESC [ 999 @`). Each frame rewrites every cell; no two frames are
//!   the same bytes.
//!
//! The contents are the same in every run: no randomness, only counters.

use std::path::{Path, PathBuf};

/// One kind of flood.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FloodKind {
    /// Plain ASCII lines.
    Lines,
    /// Full-screen clears, back to back.
    Clears,
    /// A colour change before every character.
    Sgr,
    /// Wide (CJK) and combining characters.
    Wide,
    /// Full-screen redraws: erase, a line, inserted blanks.
    Redraws,
}

/// About how many bytes a flood file holds (the clears hold 64 KiB, the
/// redraws about 300 KiB).
const FLOOD_FILE_BYTES: usize = 1024 * 1024;

/// Screen clears in the clears file.
const CLEARS: usize = 16_384;

/// Characters in a line of the SGR flood.
const SGR_LINE_CHARS: usize = 400;

const WORDS: &[&str] = &[
    "compile", "warning", "error", "test", "passed", "failed", "build", "cargo", "src", "main", "lib", "fn", "let",
    "match", "async", "await", "finished", "running", "request", "response", "-->", "|", "=", "{", "}", "0x1f", "42",
];

/// CJK words: every character takes two columns.
const CJK_WORDS: &[&str] = &["日本語", "中文字符", "한국어", "漢字かな交じり文", "全角カタカナ", "東京都", "编译错误"];

/// Latin letters with combining accents: one column each, two or three
/// code points.
const COMBINING: &[&str] =
    &["e\u{301}", "a\u{308}", "o\u{302}\u{323}", "n\u{303}", "u\u{30a}", "c\u{327}", "i\u{300}\u{316}", "y\u{304}"];

impl FloodKind {
    /// Every kind, in the order the benchmark runs them.
    pub const ALL: [FloodKind; 5] =
        [FloodKind::Lines, FloodKind::Clears, FloodKind::Sgr, FloodKind::Wide, FloodKind::Redraws];

    /// Its name in figures: `lines`, `clears`, `sgr`, `wide`.
    pub fn name(self) -> &'static str {
        match self {
            FloodKind::Lines => "lines",
            FloodKind::Clears => "clears",
            FloodKind::Sgr => "sgr",
            FloodKind::Wide => "wide",
            FloodKind::Redraws => "redraws",
        }
    }

    /// What it prints, in a few words.
    pub fn description(self) -> &'static str {
        match self {
            FloodKind::Lines => "plain ASCII lines of 40 to 79 columns",
            FloodKind::Clears => "ESC[2J (clear the screen) back to back",
            FloodKind::Sgr => "lines of 400 characters, a colour change (SGR) before every one",
            FloodKind::Wide => "lines of CJK (two columns a character) and letters with combining accents",
            FloodKind::Redraws => "frames of ESC[H ESC[J (home, erase below), a status line, ESC[999@ (insert blanks)",
        }
    }

    /// The bytes the flood prints, once over.
    pub fn contents(self) -> Vec<u8> {
        match self {
            FloodKind::Lines => fill_with_lines(plain_line),
            FloodKind::Clears => b"\x1b[2J".repeat(CLEARS),
            FloodKind::Sgr => fill_with_lines(sgr_line),
            FloodKind::Wide => fill_with_lines(wide_line),
            FloodKind::Redraws => redraw_frames(),
        }
    }
}

/// A flood's contents, written to a file.
#[derive(Debug, Clone)]
pub struct FloodFile {
    /// The kind of flood.
    pub kind: FloodKind,
    /// The file.
    pub path: PathBuf,
}

impl FloodFile {
    /// Writes the flood of `kind` into `dir`.
    pub fn write(kind: FloodKind, dir: &Path) -> std::io::Result<FloodFile> {
        let path = dir.join(format!("flood-{}.bin", kind.name()));
        std::fs::write(&path, kind.contents())?;
        Ok(FloodFile { kind, path })
    }
}

/// Lines from `line` (given the line's number) until the contents reach
/// about [`FLOOD_FILE_BYTES`]; every line ends in `\n`.
fn fill_with_lines(line: fn(usize, &mut Vec<u8>)) -> Vec<u8> {
    let mut contents = Vec::with_capacity(FLOOD_FILE_BYTES + 16 * 1024);
    let mut number = 0;
    while contents.len() < FLOOD_FILE_BYTES {
        line(number, &mut contents);
        contents.push(b'\n');
        number += 1;
    }
    contents
}

/// Frames of a full-screen redraw, [`REDRAW_FRAMES`] of them.
fn redraw_frames() -> Vec<u8> {
    let mut contents = Vec::new();
    for frame in 0..REDRAW_FRAMES {
        contents.extend_from_slice(
            format!("\x1b[H\x1b[Jframe {frame:06} {}\r\n\x1b[H\x1b[999@", WORDS[frame % WORDS.len()]).as_bytes(),
        );
    }
    contents
}

/// Frames in the redraws file.
const REDRAW_FRAMES: usize = 8_192;

/// `00000042 compile warning ...`: 40 to 79 columns.
fn plain_line(number: usize, out: &mut Vec<u8>) {
    let columns = 40 + (number * 37) % 40;
    let mut line = format!("{number:08}");
    let mut word = number;
    while line.len() < columns {
        line.push(' ');
        line.push_str(WORDS[word % WORDS.len()]);
        word += 7;
    }
    line.truncate(columns);
    out.extend_from_slice(line.as_bytes());
}

/// 400 letters, each after an SGR sequence of its own, then a reset.
fn sgr_line(number: usize, out: &mut Vec<u8>) {
    for i in 0..SGR_LINE_CHARS {
        let n = number * SGR_LINE_CHARS + i;
        let colour = n % 256;
        let sgr = match n % 5 {
            0 => format!("\x1b[38;5;{colour}m"),
            1 => format!("\x1b[48;5;{colour}m"),
            2 => format!("\x1b[1;{}m", 30 + n % 8),
            3 => format!("\x1b[38;2;{};{};{}m", colour, (colour * 7) % 256, (colour * 13) % 256),
            _ => format!("\x1b[0;{};{}m", 90 + n % 8, 40 + (n / 8) % 8),
        };
        out.extend_from_slice(sgr.as_bytes());
        out.push(b'a' + (n % 26) as u8);
    }
    out.extend_from_slice(b"\x1b[0m");
}

/// About 120 columns of CJK words and accented letters, in turns.
fn wide_line(number: usize, out: &mut Vec<u8>) {
    let mut columns = 0;
    let mut i = number;
    while columns < 120 {
        let cjk = CJK_WORDS[i % CJK_WORDS.len()];
        out.extend_from_slice(cjk.as_bytes());
        columns += 2 * cjk.chars().count();
        out.push(b' ');
        for j in 0..5 {
            out.extend_from_slice(COMBINING[(i + j) % COMBINING.len()].as_bytes());
        }
        out.push(b' ');
        columns += 7;
        i += 3;
    }
}
