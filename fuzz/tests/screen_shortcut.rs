//! The screen shortcut against the whole parse, on output made to use
//! it: every test feeds two vt100 models (one whole, one through the
//! shortcut) and checks after every chunk that they agree on everything
//! (`ShortcutPair`), and that the shortcut was taken, or not, where it
//! must be.

use panehost_fuzz::ShortcutPair;

/// A deterministic generator (xorshift).
struct Random(u64);

impl Random {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    fn below(&mut self, bound: usize) -> usize {
        (self.next() % bound as u64) as usize
    }
}

/// Lines as a flood brings them through a terminal: plain text, lines
/// that wrap, accented, Greek, CJK (two columns wide), emoji and a
/// combining accent, colours of every kind, tabs; each ends in CR LF.
fn flood(random: &mut Random, lines: usize) -> Vec<u8> {
    const WORDS: &[&str] =
        &["drain", "pane", "ωμέγα", "→", "漢字", "表示", "🦀", "e\u{301}", "\t", "naïve", "x", "build"];
    const PENS: &[&str] = &[
        "\x1b[m",
        "\x1b[0m",
        "\x1b[1m",
        "\x1b[31m",
        "\x1b[1;32;44m",
        "\x1b[38;5;208m",
        "\x1b[38;2;10;20;30m",
        "\x1b[0;7m",
        "\x1b[;4m",
        "\x1b[38:2::1:2:3m",
        "\x1b[22;39m",
    ];
    let mut out = Vec::new();
    for _ in 0..lines {
        let length = match random.below(4) {
            0 => random.below(300) + 100,
            _ => random.below(70),
        };
        let mut line = String::new();
        while line.chars().count() < length {
            if random.below(6) == 0 {
                line.push_str(PENS[random.below(PENS.len())]);
            }
            line.push_str(WORDS[random.below(WORDS.len())]);
            line.push(' ');
        }
        out.extend_from_slice(line.as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out
}

fn chunks(data: &[u8], random: &mut Random, largest: usize) -> Vec<Vec<u8>> {
    let mut pieces = Vec::new();
    let mut rest = data;
    while !rest.is_empty() {
        let take = (random.below(largest) + 1).min(rest.len());
        pieces.push(rest[..take].to_vec());
        rest = &rest[take..];
    }
    pieces
}

#[test]
fn a_flood_is_cut_and_draws_the_same_screen() {
    let mut random = Random(0x5eed);
    let output = flood(&mut random, 8000);
    let mut pair = ShortcutPair::new(24, 80);
    for chunk in output.chunks(64 * 1024) {
        pair.feed(chunk);
    }
    let spared = pair.spared();
    assert!(spared * 10 > output.len() as u64 * 9, "{spared} of {} spared", output.len());
}

#[test]
fn chunks_that_end_anywhere_draw_the_same_screen() {
    let mut spared = 0;
    for seed in 1..=6 {
        let mut random = Random(seed);
        let output = flood(&mut random, 3000);
        let mut pair = ShortcutPair::new(1 + random.below(40) as u16, 1 + random.below(120) as u16);
        for chunk in chunks(&output, &mut random, 8192) {
            pair.feed(&chunk);
        }
        spared += pair.spared();
    }
    assert!(spared > 0);
}

#[test]
fn a_resize_between_chunks_draws_the_same_screen() {
    let mut random = Random(7);
    let mut pair = ShortcutPair::new(24, 80);
    for size in [(10, 40), (50, 200), (2, 2), (24, 80)] {
        pair.feed(&flood(&mut random, 400));
        pair.resize(size.0, size.1);
    }
    assert!(pair.spared() > 0);
}

#[test]
fn a_scroll_region_stops_the_cut_until_the_whole_screen_scrolls_again() {
    let mut random = Random(11);
    let mut pair = ShortcutPair::new(24, 80);
    pair.feed(b"\x1b[5;10r");
    pair.feed(&flood(&mut random, 500));
    assert_eq!(pair.spared(), 0, "a region may be set");
    // A region spelled as the whole screen is the whole screen.
    pair.feed(b"\x1b[1;24r");
    pair.feed(&flood(&mut random, 500));
    let after_whole = pair.spared();
    assert!(after_whole > 0);
    pair.feed(b"\x1b[2;24r");
    pair.feed(&flood(&mut random, 500));
    assert_eq!(pair.spared(), after_whole);
    pair.feed(b"\x1b[r");
    pair.feed(&flood(&mut random, 500));
    assert!(pair.spared() > after_whole);
}

#[test]
fn each_grid_has_its_own_scroll_region() {
    let mut random = Random(13);
    let mut pair = ShortcutPair::new(24, 80);
    pair.feed(b"\x1b[3;20r");
    // 1049 clears the alternate grid, and with it its region.
    pair.feed(b"\x1b[?1049h");
    pair.feed(&flood(&mut random, 500));
    let in_alternate = pair.spared();
    assert!(in_alternate > 0);
    pair.feed(b"\x1b[5;6r\x1b[r");
    pair.feed(b"\x1b[?1049l");
    pair.feed(&flood(&mut random, 500));
    assert_eq!(pair.spared(), in_alternate, "the main grid's region is still set");
    // 47 switches without clearing: the alternate grid has none.
    pair.feed(b"\x1b[?47h");
    pair.feed(&flood(&mut random, 500));
    assert!(pair.spared() > in_alternate);
}

#[test]
fn a_sequence_not_understood_waits_for_a_csi_sequence() {
    let mut random = Random(17);
    let plain: Vec<u8> = flood(&mut random, 500).into_iter().filter(|&byte| byte != 0x1b).collect();
    let mut pair = ShortcutPair::new(24, 80);
    // A title whose end comes later: until then, output is its text.
    pair.feed(b"\x1b]2;a title ");
    pair.feed(&plain);
    pair.feed(b"\x07");
    pair.feed(&plain);
    assert_eq!(pair.spared(), 0);
    pair.feed(b"\x1b[H");
    pair.feed(&plain);
    assert!(pair.spared() > 0);
    // A CSI sequence that may switch grids makes the grid unknown
    // until the next chunk says which it is.
    let before = pair.spared();
    let mut both = b"\x1b[?1049;1$h".to_vec();
    both.extend_from_slice(&plain);
    pair.feed(&both);
    assert_eq!(pair.spared(), before);
    pair.feed(&plain);
    assert!(pair.spared() > before);
}

#[test]
fn a_character_cut_by_the_chunk_waits_for_a_csi_sequence() {
    let mut random = Random(19);
    let plain: Vec<u8> = flood(&mut random, 500).into_iter().filter(|&byte| byte != 0x1b).collect();
    let mut pair = ShortcutPair::new(24, 80);
    pair.feed("漢".as_bytes().get(..2).expect("three bytes"));
    pair.feed(&plain);
    assert_eq!(pair.spared(), 0);
    pair.feed(b"\x1b[m");
    pair.feed(&plain);
    assert!(pair.spared() > 0);
}

#[test]
fn control_bytes_and_other_sequences_end_a_run_and_draw_the_same_screen() {
    let mut random = Random(23);
    let mut pair = ShortcutPair::new(24, 80);
    for extra in
        [&b"\x07"[..], b"\x08", b"\x1b[2J", b"\x1b7", b"\x1b8", b"\xc2\x9b", b"\xff", b"\x1bc", b"\x1b[5A", b"\x18"]
    {
        let mut output = flood(&mut random, 60);
        output.extend_from_slice(extra);
        output.extend_from_slice(&flood(&mut random, 60));
        pair.feed(&output);
    }
    assert!(pair.spared() > 0);
}

#[test]
fn the_pen_of_what_was_cut_colours_what_follows() {
    let mut random = Random(29);
    let plain: Vec<u8> = flood(&mut random, 500).into_iter().filter(|&byte| byte != 0x1b).collect();
    let mut pair = ShortcutPair::new(24, 80);
    for pen in [&b"\x1b[1;31m"[..], b"\x1b[0;44m\x1b[4m", b"\x1b[m\x1b[38;2;1;2;3m"] {
        let mut output = pen.to_vec();
        output.extend_from_slice(&plain);
        pair.feed(&output);
    }
    assert!(pair.spared() > 0);
}

#[test]
fn lines_that_end_without_a_carriage_return_draw_the_same_screen() {
    let mut random = Random(31);
    let mut output = flood(&mut random, 2000);
    // Most lines end in a bare line feed (no output processing), so
    // columns carry on from line to line, for more than a screenful.
    let mut lines = 0;
    output.retain(|&byte| {
        if byte == b'\r' {
            lines += 1;
            return lines % 100 == 0;
        }
        true
    });
    let mut pair = ShortcutPair::new(24, 80);
    for chunk in output.chunks(16 * 1024) {
        pair.feed(chunk);
    }
    assert!(pair.spared() > 0);
}

#[test]
fn the_fuzz_targets_seed_input_reaches_a_cut() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions/screen_shortcut");
    let spared: u64 = std::fs::read_dir(&dir)
        .unwrap()
        .flatten()
        .map(|entry| panehost_fuzz::screen_shortcut_spared(&std::fs::read(entry.path()).unwrap()))
        .sum();
    assert!(spared > 0, "no input under {} reaches a cut", dir.display());
}

#[test]
fn a_flood_in_small_reads_leaving_each_tail_is_cut_more_and_draws_the_same_screen() {
    let mut random = Random(37);
    let output = flood(&mut random, 8000);
    let mut whole_tails = ShortcutPair::new(24, 80);
    let mut left_tails = ShortcutPair::new(24, 80);
    for chunk in output.chunks(4096) {
        whole_tails.feed(chunk);
        left_tails.feed_leaving_tail(chunk);
    }
    left_tails.feed(b"");
    assert!(
        left_tails.spared() > 2 * whole_tails.spared(),
        "{} spared leaving tails, {} parsing them",
        left_tails.spared(),
        whole_tails.spared()
    );
}

#[test]
fn repeated_clears_draw_the_same_screen() {
    let mut random = Random(0x5eed_c1ea);
    for (rows, cols) in [(24, 80), (250, 100), (3, 7)] {
        let mut pair = ShortcutPair::new(rows, cols);
        for _ in 0..40 {
            let lines = random.below(30);
            let mut chunk = flood(&mut random, lines);
            let clear: &[u8] = match random.below(4) {
                0 => b"\x1b[2J",
                1 => b"\x1b[H\x1b[2J",
                2 => b"\x1b[H\x1b[2J\x1b[3J",
                _ => b"\x1b[44m\x1b[2J",
            };
            let repeats = random.below(50);
            for _ in 0..repeats {
                chunk.extend_from_slice(clear);
            }
            chunk.extend_from_slice(b"\x1b[5;5Hafter");
            for piece in chunks(&chunk, &mut random, 700) {
                pair.feed(&piece);
            }
        }
        assert!(pair.spared() > 0, "repeated clears were spared");
    }
}
