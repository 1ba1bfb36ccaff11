//! The drain payload: a deterministic mix of what terminals print, written
//! to a file once per run.
//!
//! Four kinds of line, chosen by a seeded generator in roughly equal shares
//! of bytes:
//!
//! - plain ASCII text shorter than a row;
//! - long lines (200 to 600 columns) that wrap several times at 80 columns;
//! - UTF-8 text: accented Latin, Greek, arrows, CJK (two columns wide) and
//!   emoji, mixed with ASCII;
//! - colour: SGR escapes (bold, the 16 colours, 256 colours, true colour,
//!   reset) around short words.
//!
//! Every line ends in `\n`, which the terminal's ONLCR turns into `\r\n`:
//! a pane's output is the payload's length plus its line count.

use std::io::Write;
use std::path::{Path, PathBuf};

/// The generated payload.
#[derive(Debug, Clone)]
pub struct Payload {
    /// The file holding it.
    pub path: PathBuf,
    /// Its length in bytes.
    pub len: u64,
    /// How many `\n` it holds.
    pub newlines: u64,
}

impl Payload {
    /// The bytes a terminal delivers for the first `len` bytes of the
    /// payload: each `\n` becomes `\r\n`.
    pub fn terminal_bytes(&self) -> u64 {
        self.len + self.newlines
    }

    /// Writes `len` bytes of payload to `path`.
    pub fn generate(path: &Path, len: u64) -> std::io::Result<Payload> {
        let mut out = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
        let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
        let mut line = Vec::with_capacity(1024);
        let mut written = 0u64;
        let mut newlines = 0u64;
        while written < len {
            line.clear();
            match rng.below(4) {
                0 => plain_line(&mut rng, &mut line),
                1 => long_line(&mut rng, &mut line),
                2 => utf8_line(&mut rng, &mut line),
                _ => colour_line(&mut rng, &mut line),
            }
            line.push(b'\n');
            let room = (len - written) as usize;
            if line.len() > room {
                // The last line is cut to length, still ending in a newline.
                line.truncate(room);
                if let Some(last) = line.last_mut() {
                    *last = b'\n';
                }
            }
            newlines += line.iter().filter(|&&b| b == b'\n').count() as u64;
            out.write_all(&line)?;
            written += line.len() as u64;
        }
        out.flush()?;
        Ok(Payload { path: path.to_path_buf(), len, newlines })
    }

    /// How many `\n` the first `len` bytes of the payload hold.
    pub fn newlines_in_prefix(&self, len: u64) -> std::io::Result<u64> {
        let bytes = std::fs::read(&self.path)?;
        Ok(bytes[..len.min(bytes.len() as u64) as usize].iter().filter(|&&b| b == b'\n').count() as u64)
    }
}

const WORDS: &[&str] = &[
    "the", "pane", "output", "offset", "ring", "screen", "cursor", "compile", "warning", "error", "test", "passed",
    "failed", "build", "cargo", "src", "main", "lib", "fn", "let", "match", "async", "await", "tokio", "finished",
    "running", "agent", "model", "token", "request", "response", "-->", "|", "=", "{", "}", "(", ")", "0x1f", "42",
];

const WIDE_WORDS: &[&str] = &[
    "héllo",
    "naïve",
    "Grüße",
    "façade",
    "λ",
    "αβγδ",
    "→",
    "⇒",
    "✓",
    "✗",
    "日本語",
    "中文字符",
    "한국어",
    "😀",
    "🚀",
    "—",
    "…",
    "±",
    "µs",
    "°C",
];

fn push_words(rng: &mut Rng, line: &mut Vec<u8>, words: &[&str], target: usize) {
    while line.len() < target {
        if !line.is_empty() {
            line.push(b' ');
        }
        line.extend_from_slice(words[rng.below(words.len() as u64) as usize].as_bytes());
    }
}

fn plain_line(rng: &mut Rng, line: &mut Vec<u8>) {
    let target = 20 + rng.below(58) as usize;
    push_words(rng, line, WORDS, target);
    line.truncate(79);
}

fn long_line(rng: &mut Rng, line: &mut Vec<u8>) {
    let target = 200 + rng.below(400) as usize;
    push_words(rng, line, WORDS, target);
}

fn utf8_line(rng: &mut Rng, line: &mut Vec<u8>) {
    let target = 30 + rng.below(90) as usize;
    while line.len() < target {
        if !line.is_empty() {
            line.push(b' ');
        }
        let words = if rng.below(2) == 0 { WORDS } else { WIDE_WORDS };
        line.extend_from_slice(words[rng.below(words.len() as u64) as usize].as_bytes());
    }
}

fn colour_line(rng: &mut Rng, line: &mut Vec<u8>) {
    let segments = 3 + rng.below(6);
    for _ in 0..segments {
        let sgr = match rng.below(4) {
            0 => format!("\x1b[{}m", 30 + rng.below(8)),
            1 => format!("\x1b[1;{}m", 90 + rng.below(8)),
            2 => format!("\x1b[38;5;{}m", rng.below(256)),
            _ => format!("\x1b[38;2;{};{};{}m", rng.below(256), rng.below(256), rng.below(256)),
        };
        line.extend_from_slice(sgr.as_bytes());
        line.extend_from_slice(WORDS[rng.below(WORDS.len() as u64) as usize].as_bytes());
        line.extend_from_slice(b"\x1b[0m ");
    }
}

/// xorshift64*: small, fast, and the same on every machine.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
