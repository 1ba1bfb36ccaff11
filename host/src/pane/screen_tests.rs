//! Tests of the terminal model (`screen.rs`).

use super::*;

#[test]
fn snapshot_reports_text_cursor_title_and_modes() {
    let mut screen = TerminalScreen::new(Size { cols: 20, rows: 4 }, 0, b"");
    let output = b"hello\r\nworld\x1b]2;my title\x07\x1b[?2004h";
    screen.process(output);
    let snapshot = screen.snapshot();
    assert_eq!(snapshot.offset, output.len() as u64);
    assert_eq!(snapshot.text, "hello\nworld");
    assert_eq!((snapshot.cursor.row, snapshot.cursor.col), (1, 5));
    assert_eq!(snapshot.title, "my title");
    assert!(snapshot.modes.bracketed_paste);
}

/// Output mixing what the shortcut shortens (a flood of lines) with
/// what is parsed as it is, including costly erases.
fn mixed_output() -> Vec<u8> {
    let mut output = Vec::new();
    for round in 0..40 {
        for line in 0..60 {
            output.extend_from_slice(format!("\x1b[3{}mline {round}-{line}\x1b[m\r\n", line % 8).as_bytes());
        }
        output.extend_from_slice(
            format!("\x1b[H\x1b[J\x1b[{};5Hdrawn {round}\x1b[2;3r\x1b[5L", round % 9 + 1).as_bytes(),
        );
        output.extend_from_slice("漢字 e\u{301}\x1b[r\x1b]2;title\x07".as_bytes());
    }
    output
}

#[test]
fn output_parsed_in_timed_steps_draws_the_same_screen_as_at_once() {
    let size = Size { cols: 90, rows: 20 };
    let output = mixed_output();
    let mut whole = TerminalScreen::new(size, 0, b"");
    whole.process(&output);
    let mut stepped = TerminalScreen::new(size, 0, b"");
    let mut at = 0;
    let mut steps = 0;
    while at < output.len() {
        // A deadline already past: every step that is not shortened
        // parses one slice.
        let taken = stepped.process_until(&output[at..], false, Some(Instant::now()));
        assert!(taken > 0, "a step parses something");
        at += taken;
        steps += 1;
    }
    assert!(steps > output.len() / PARSE_CHUNK_GUESS, "it was parsed in many steps: {steps}");
    let (whole, stepped) = (whole.snapshot(), stepped.snapshot());
    assert_eq!(stepped.text, whole.text);
    assert_eq!(stepped.formatted, whole.formatted);
    assert_eq!((stepped.cursor.row, stepped.cursor.col), (whole.cursor.row, whole.cursor.col));
    assert_eq!(stepped.title, whole.title);
}

/// More steps than this means the deadline did cut steps short.
const PARSE_CHUNK_GUESS: usize = 4096;

#[test]
fn a_step_past_its_deadline_parses_one_slice_of_costly_output() {
    let mut screen = TerminalScreen::new(Size { cols: 1000, rows: 250 }, 0, b"");
    let erases = b"x\x1b[H\x1b[J".repeat(1000);
    let taken = screen.process_until(&erases, false, Some(Instant::now()));
    assert_eq!(taken, TIMED_SLICE);
    assert_eq!(screen.parsed(), TIMED_SLICE as u64);
    // Without a deadline it is parsed whole.
    assert_eq!(screen.process_until(&erases[taken..], false, None), erases.len() - taken);
}

#[test]
fn terminal_notifications_are_collected() {
    let mut screen = TerminalScreen::new(Size { cols: 20, rows: 4 }, 0, b"");
    screen.process(b"a\x07b\x1b]9;turn complete\x07c\x1b]777;notify;Title;Body\x1b\\\x1b]2;t\x07");
    assert_eq!(
        screen.take_notices(),
        [
            TerminalNotice::Bell,
            TerminalNotice::Osc9("turn complete".into()),
            TerminalNotice::Osc777("Title;Body".into())
        ]
    );
    assert!(screen.take_notices().is_empty());
}

#[test]
fn prompt_marks_are_collected_with_their_status() {
    let mut screen = TerminalScreen::new(Size { cols: 20, rows: 4 }, 0, b"");
    screen.process(
        b"\x1b]133;A\x07$ \x1b]133;B\x07\x1b]133;C\x07out\r\n\x1b]133;D;127\x07\x1b]133;D;x\x07\x1b]133;D\x1b\\",
    );
    assert_eq!(
        screen.take_notices(),
        [
            TerminalNotice::PromptShown,
            TerminalNotice::CommandStarted,
            TerminalNotice::CommandFinished(Some(127)),
            TerminalNotice::CommandFinished(None),
            TerminalNotice::CommandFinished(None),
        ]
    );
    assert_eq!(screen.snapshot().text, "$ out", "the marks draw nothing");
}

/// Output that holds one command's end and the next command's start
/// and end places each mark where it is, not all where the output
/// ends: which turn a mark ends depends on it.
#[test]
fn each_notice_is_placed_just_past_the_bytes_that_made_it() {
    let mut screen = TerminalScreen::new(Size { cols: 40, rows: 6 }, 100, b"");
    let output: &[u8] =
        b"x\r\n\x1b]133;D;8\x07\x1b]133;A\x07$ \x1b]133;B\x07ls\r\n\x1b]133;C\x1b\\out\x07\r\n\x1b]133;D;4\x07$ ";
    let end_of = |needle: &[u8]| {
        100 + (output.windows(needle.len()).position(|window| window == needle).unwrap() + needle.len()) as u64
    };
    assert_eq!(screen.process_until(output, false, None), output.len());
    assert_eq!(
        screen.take_placed_notices(),
        [
            (end_of(b"D;8\x07"), TerminalNotice::CommandFinished(Some(8))),
            (end_of(b"$ \x1b]133;B\x07"), TerminalNotice::PromptShown),
            (end_of(b"C\x1b\\"), TerminalNotice::CommandStarted),
            (end_of(b"out\x07"), TerminalNotice::Bell),
            (end_of(b"D;4\x07"), TerminalNotice::CommandFinished(Some(4))),
        ]
    );
    assert_eq!(screen.parsed(), 100 + output.len() as u64);
    assert!(screen.take_placed_notices().is_empty());
}

#[test]
fn a_prompt_begun_with_a_line_waiting_is_noticed() {
    let mut screen = TerminalScreen::new(Size { cols: 20, rows: 4 }, 0, b"");
    screen.process(b"\x1b]133;A;input_waiting=1\x07$ \x1b]133;A;input_waiting=0\x07\x1b]133;A;aid=7\x07");
    assert_eq!(screen.take_notices(), [TerminalNotice::InputWaiting]);
}

/// Output that leaves state a blank screen would not have: a title,
/// colours, modes, the alternate screen, a scroll region and a saved
/// cursor.
const STATEFUL: &[u8] =
    b"\x1b]2;busy\x07\x1b[31mred\x1b[m\r\nplain\x1b[?2004h\x1b[?1h\x1b7\x1b[2;3r\x1b[?1049halt \x1b[1;32mgreen";

fn rebuilt(screen: &mut TerminalScreen, output: &[u8]) {
    assert!(screen.sleep(), "a model with its origin can sleep");
    assert!(screen.is_asleep());
    screen.wake(output);
    assert!(!screen.is_asleep());
}

/// A replay made with no lock held is put in only while the model is
/// still in the sleep it was taken from: not once another woke it,
/// nor once it sleeps again.
#[test]
fn a_rebuild_is_put_in_only_in_the_sleep_it_was_taken_in() {
    let size = Size { cols: 20, rows: 5 };
    let mut screen = TerminalScreen::new(size, 0, b"");
    screen.process(b"first");
    assert!(screen.sleep());
    let late = screen.rebuild().expect("asleep with an origin");
    assert_eq!((late.from(), late.parsed()), (0, 5));
    // Another wakes it first, and output follows.
    rebuilt_by_another(&mut screen, b"first");
    screen.process(b" second");
    assert!(!screen.install(&late, late.replay(b"first")), "woken meanwhile");
    assert!(screen.snapshot().text.contains("first second"));
    // Asleep again: the old rebuild is still not this sleep's.
    assert!(screen.sleep());
    assert!(!screen.install(&late, late.replay(b"first")), "a later sleep");
    assert!(screen.is_asleep());
    let now = screen.rebuild().expect("asleep with an origin");
    assert!(screen.install(&now, now.replay(b"first second")));
    assert!(screen.snapshot().text.contains("first second"));
    assert!(screen.rebuild().is_none(), "awake");
}

fn rebuilt_by_another(screen: &mut TerminalScreen, output: &[u8]) {
    let rebuild = screen.rebuild().expect("asleep with an origin");
    assert!(screen.install(&rebuild, rebuild.replay(output)));
}

#[test]
fn a_model_rebuilt_after_sleep_matches_the_one_that_never_slept() {
    let size = Size { cols: 20, rows: 5 };
    let mut awake = TerminalScreen::new(size, 100, b"saved\r\n");
    let mut sleeper = TerminalScreen::new(size, 100, b"saved\r\n");
    for screen in [&mut awake, &mut sleeper] {
        screen.process(&STATEFUL[..40]);
        screen.resize(Size { cols: 30, rows: 6 });
        screen.process(&STATEFUL[40..]);
    }
    assert_eq!(sleeper.origin_offset(), Some(100));
    rebuilt(&mut sleeper, STATEFUL);
    assert_eq!(sleeper.snapshot(), awake.snapshot());

    // And it goes on from where it was: the saved cursor and the
    // scroll region came back too.
    let more = b"\x1b[?1049l\x1b8after\r\n\r\n\r\nscrolled";
    awake.process(more);
    sleeper.process(more);
    assert_eq!(sleeper.snapshot(), awake.snapshot());
    assert_eq!(sleeper.parsed(), 100 + (STATEFUL.len() + more.len()) as u64);
}

/// A flood of coloured lines, longer than the screen many times over.
fn flood(lines: usize) -> Vec<u8> {
    let mut output = Vec::new();
    for n in 0..lines {
        let line = format!("\x1b[{}mline {n} {}\x1b[m 漢字 e\u{301}\r\n", 31 + n % 7, "x".repeat(n % 150));
        output.extend_from_slice(line.as_bytes());
    }
    output
}

#[test]
fn a_flood_parsed_and_replayed_leaves_the_screen_every_byte_would() {
    let size = Size { cols: 80, rows: 24 };
    let output = flood(3000);
    let mut whole = vt100::Parser::new(size.rows, size.cols, 0);
    whole.process(&output);
    let mut screen = TerminalScreen::new(size, 0, b"");
    for chunk in output.chunks(64 * 1024) {
        screen.process(chunk);
    }
    let parsed = screen.snapshot();
    assert_eq!(parsed.text, whole.screen().contents());
    assert_eq!(parsed.formatted.0, whole.screen().state_formatted());
    assert_eq!((parsed.cursor.row, parsed.cursor.col), whole.screen().cursor_position());
    rebuilt(&mut screen, &output);
    assert_eq!(screen.snapshot(), parsed, "the replay leaves the same screen");
}

#[test]
fn a_sleeping_model_keeps_its_title_and_does_not_repeat_notices() {
    let mut screen = TerminalScreen::new(Size { cols: 20, rows: 4 }, 0, b"");
    let output = b"\x1b]2;kept\x07\x07\x1b]9;done\x07";
    screen.process(output);
    assert_eq!(screen.take_notices().len(), 2);
    assert!(screen.sleep());
    assert_eq!(screen.title(), "kept");
    screen.wake(output);
    assert_eq!(screen.title(), "kept");
    assert!(screen.take_notices().is_empty(), "the replay reports nothing again");
}

#[test]
fn a_model_whose_origin_is_gone_stays_awake() {
    let mut screen = TerminalScreen::new(Size { cols: 20, rows: 4 }, 0, b"");
    screen.process(b"x");
    screen.forget_origin();
    assert!(!screen.sleep());
    assert!(!screen.is_asleep());
    assert_eq!(screen.snapshot().text, "x");
}

#[test]
fn too_many_resizes_keep_the_model_awake() {
    let mut screen = TerminalScreen::new(Size { cols: 20, rows: 4 }, 0, b"");
    for n in 0..=limits::MAX_REPLAYED_RESIZES {
        screen.resize(Size { cols: 20 + (n % 2) as u16, rows: 4 });
    }
    assert_eq!(screen.origin_offset(), None);
    assert!(!screen.sleep());
}

/// Output the vt100 model panics on: a wide character in a grid one
/// column wide (the model's own bug; a pane is never that narrow, but
/// a model must survive whatever it is fed).
const WIDE_IN_ONE_COLUMN: &[u8] = "\u{6f22}".as_bytes();

#[test]
fn output_the_model_fails_on_is_contained_and_parsing_goes_on() {
    let mut screen = TerminalScreen::new(Size { cols: 1, rows: 5 }, 10, b"");
    screen.process(b"\x1b]2;kept\x07");
    screen.process(WIDE_IN_ONE_COLUMN);
    assert_eq!(screen.resets(), 1);
    assert_eq!(screen.parsed(), 10 + 9 + WIDE_IN_ONE_COLUMN.len() as u64);
    screen.process(b"x");
    let snapshot = screen.snapshot();
    assert_eq!(snapshot.text, "x");
    assert_eq!(snapshot.title, "kept");
    assert_eq!(snapshot.offset, screen.parsed());
    // The blank model that went on can sleep and be rebuilt.
    assert_eq!(screen.origin_offset(), Some(screen.parsed() - 1));
    rebuilt(&mut screen, b"x");
    assert_eq!(screen.snapshot().text, "x");
}

#[test]
fn a_replay_the_model_fails_on_wakes_a_blank_model() {
    let mut screen = TerminalScreen::new(Size { cols: 1, rows: 5 }, 0, b"");
    screen.process(b"ab");
    assert!(screen.sleep());
    // What the ring holds is not what the model parsed (say, a bug
    // elsewhere): the replay fails, and a blank model goes on.
    screen.wake(WIDE_IN_ONE_COLUMN);
    assert!(!screen.is_asleep());
    assert_eq!(screen.resets(), 1);
    assert_eq!(screen.snapshot().offset, 2);
    assert_eq!(screen.origin_offset(), Some(2));
}

#[test]
fn a_saved_screen_the_model_fails_on_is_not_drawn() {
    let mut screen = TerminalScreen::new(Size { cols: 1, rows: 5 }, 7, WIDE_IN_ONE_COLUMN);
    assert_eq!(screen.snapshot().text, "");
    screen.process(b"y");
    assert_eq!(screen.snapshot().text, "y");
}
