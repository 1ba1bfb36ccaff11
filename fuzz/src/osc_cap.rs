//! The OSC cap (`pane::osc_cap`): output fed to two vt100 models, one
//! whole and one through a cap of a few bytes, in the same chunks. An
//! OSC's payload changes no screen, so the two must agree: on the cursor
//! after every chunk, on the whole screen after the last (a byte held back
//! that was not payload past the cap shows), and again after a probe (text,
//! then a line of it after an OSC's end) that draws differently when one
//! parser is inside an OSC and the other is not. (The whole screen after
//! every chunk of one byte made a run take a second.)

use crate::screen_shortcut::{assert_same_screen, contained};
use panehost_host::pane::osc_cap::OscCap;

/// The check: the first byte picks the cap (0 to 31 bytes), the second
/// the chunk size (1 to 64 bytes), the rest is output.
pub fn osc_cap(data: &[u8]) {
    let [cap, chunk, output @ ..] = data else { return };
    let mut cap = OscCap::with_cap(usize::from(cap % 32));
    let chunk = usize::from(chunk % 64) + 1;
    let mut whole = vt100::Parser::new(24, 80, 0);
    let mut capped = vt100::Parser::new(24, 80, 0);
    let probe: &[u8] = b"probe\x07\r\nafter an end";
    let pieces = output.chunks(chunk).count();
    for (index, piece) in output.chunks(chunk).chain(std::iter::once(probe)).enumerate() {
        let fed = contained(|| {
            whole.process(piece);
            cap.pass(piece, |run| capped.process(run));
        });
        if fed.is_none() {
            // vt100 itself panicked (the host contains it): the models may
            // differ from here on.
            return;
        }
        assert_eq!(capped.screen().cursor_position(), whole.screen().cursor_position(), "the cursor");
        if index + 1 >= pieces {
            assert_same_screen(whole.screen(), capped.screen());
        }
    }
}
