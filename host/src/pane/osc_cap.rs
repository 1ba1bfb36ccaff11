//! A bound on an OSC sequence's payload, as the terminal model is fed.
//!
//! The model's parser (vte, under vt100) keeps an OSC sequence's payload
//! (`ESC ] ... BEL`: a title, a prompt mark, a notification) in a buffer
//! that grows with every byte until the sequence ends, and keeps the
//! buffer's size afterwards. A program that opens an OSC and never ends it
//! would grow the host without bound (300 MB of payload, 320 MB of
//! memory, kept). No OSC the host reads needs more than a few hundred
//! bytes, and a title is cut to 4 KiB anyway: past [`OSC_PAYLOAD_CAP`]
//! bytes, a payload's bytes are not fed to the model. They still count as
//! parsed; the sequence's end is fed, and ends it as it would have.
//!
//! To know where a payload is, this follows the parser's states as far as
//! they matter, from the bytes it is fed (vte 0.15's transitions):
//!
//! - ESC, from any state, begins an escape (inside an OSC it also ends
//!   the OSC); CAN and SUB, from any state, go back to the ground state;
//! - in an escape, `]` begins an OSC; bytes 0x20 to 0x2F are
//!   intermediates; any other byte from 0x30 to 0x7E ends the escape (or
//!   begins a CSI, DCS or string, where nothing grows); other C0 bytes,
//!   DEL and bytes from 0x80 leave it as it is;
//! - in an OSC, BEL ends it; other C0 bytes are ignored (not kept); any
//!   other byte is payload.

/// The most payload bytes of one OSC sequence fed to the model.
pub const OSC_PAYLOAD_CAP: usize = 64 * 1024;

const BEL: u8 = 0x07;
const CAN: u8 = 0x18;
const SUB: u8 = 0x1A;
const ESC: u8 = 0x1B;

/// Where the parser is, as far as an OSC's payload goes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
enum State {
    /// Not in an escape or an OSC (the ground state, a CSI, a DCS, a
    /// string the parser drops).
    #[default]
    Other,
    /// After ESC.
    Escape,
    /// After ESC and one or more intermediates.
    EscapeIntermediate,
    /// In an OSC's payload, with this many bytes of it so far.
    Osc(usize),
}

/// Follows what the model is fed and holds back an OSC's payload past its
/// cap ([`OSC_PAYLOAD_CAP`] by default). A new model needs a new one.
#[derive(Debug, Clone)]
pub struct OscCap {
    state: State,
    cap: usize,
}

impl Default for OscCap {
    fn default() -> Self {
        OscCap::with_cap(OSC_PAYLOAD_CAP)
    }
}

impl OscCap {
    /// One that feeds at most `cap` payload bytes of an OSC (a small cap
    /// lets a fuzz target reach it with short inputs).
    pub fn with_cap(cap: usize) -> OscCap {
        OscCap { state: State::Other, cap }
    }

    /// Passes `bytes` on to `feed`, in runs, without the payload bytes of
    /// an OSC past the cap.
    pub fn pass(&mut self, bytes: &[u8], mut feed: impl FnMut(&[u8])) {
        let mut run_start = 0;
        let mut at = 0;
        while at < bytes.len() {
            if let State::Other = self.state {
                // The common case: text and CSI sequences, up to the next ESC
                // (CAN and SUB change nothing here).
                match memchr::memchr(ESC, &bytes[at..]) {
                    Some(found) => at += found,
                    None => break,
                }
            }
            let byte = bytes[at];
            let held_back = self.step(byte);
            if held_back {
                if run_start < at {
                    feed(&bytes[run_start..at]);
                }
                // Skip the rest of the payload in this call at once.
                let mut end = at + 1;
                while end < bytes.len() && !ends_payload(bytes[end]) {
                    end += 1;
                }
                at = end;
                run_start = end;
                continue;
            }
            at += 1;
        }
        if run_start < bytes.len() {
            feed(&bytes[run_start..]);
        }
    }

    /// Moves past `byte`; true when it is payload past the cap (not fed).
    fn step(&mut self, byte: u8) -> bool {
        let (next, held_back) = match (self.state, byte) {
            (_, ESC) => (State::Escape, false),
            (_, CAN | SUB) => (State::Other, false),
            (State::Other, _) => (State::Other, false),
            (State::Escape, b']') => (State::Osc(0), false),
            (State::Escape | State::EscapeIntermediate, 0x20..=0x2F) => (State::EscapeIntermediate, false),
            (State::Escape | State::EscapeIntermediate, 0x30..=0x7E) => (State::Other, false),
            (State::Escape | State::EscapeIntermediate, _) => (self.state, false),
            (State::Osc(_), BEL) => (State::Other, false),
            (State::Osc(kept), 0x00..=0x1F) => (State::Osc(kept), false),
            (State::Osc(kept), _) if kept >= self.cap => (State::Osc(kept), true),
            (State::Osc(kept), _) => (State::Osc(kept + 1), false),
        };
        self.state = next;
        held_back
    }
}

/// Whether `byte` is one the payload skip stops at: an OSC's end, or a C0
/// byte (ignored in an OSC; fed, as the parser would have seen it).
fn ends_payload(byte: u8) -> bool {
    byte < 0x20
}

#[cfg(test)]
mod tests {
    use super::{OscCap, OSC_PAYLOAD_CAP};

    /// What `cap` feeds of `chunks`, one after another.
    fn passed(cap: &mut OscCap, chunks: &[&[u8]]) -> Vec<u8> {
        let mut fed = Vec::new();
        for chunk in chunks {
            cap.pass(chunk, |run| fed.extend_from_slice(run));
        }
        fed
    }

    #[test]
    fn output_without_a_long_osc_passes_whole() {
        let output: &[u8] =
            b"plain \x1b[1;31mred\x1b[0m \x1b]0;title\x07 \x1b]133;A\x1b\\ \x1bP1$r\x1b\\ \x1b(B done\r\n";
        assert_eq!(passed(&mut OscCap::default(), &[output]), output);
        // Whatever the chunks.
        let mut cap = OscCap::default();
        let chunks: Vec<&[u8]> = output.chunks(1).collect();
        assert_eq!(passed(&mut cap, &chunks), output);
    }

    #[test]
    fn a_payload_is_fed_up_to_the_cap_and_its_end_after() {
        let mut output = b"\x1b]2;".to_vec();
        output.extend(std::iter::repeat_n(b'x', 3 * OSC_PAYLOAD_CAP));
        output.extend_from_slice(b"\x07after");
        let fed = passed(&mut OscCap::default(), &[&output]);
        // "2;" and the first of the x's make the cap.
        let mut expected = b"\x1b]2;".to_vec();
        expected.extend(std::iter::repeat_n(b'x', OSC_PAYLOAD_CAP - 2));
        expected.extend_from_slice(b"\x07after");
        assert_eq!(fed.len(), expected.len());
        assert!(fed == expected);
    }

    #[test]
    fn the_cap_holds_across_chunks_and_each_end_ends_the_osc() {
        for end in [&b"\x07"[..], b"\x1b\\", b"\x18", b"\x1a", b"\x1b[0m"] {
            let mut cap = OscCap::default();
            let payload = vec![b'y'; 1000];
            let mut chunks: Vec<&[u8]> = vec![b"\x1b", b"]", b"0;"];
            chunks.extend(std::iter::repeat_n(&payload[..], 2 * OSC_PAYLOAD_CAP / 1000));
            chunks.push(end);
            chunks.push(b"text");
            let fed = passed(&mut cap, &chunks);
            assert_eq!(fed.len(), 4 + OSC_PAYLOAD_CAP - 2 + end.len() + 4, "{end:?}");
            assert!(fed.ends_with(&[end, b"text"].concat()), "{end:?}");
        }
    }

    #[test]
    fn c0_bytes_in_a_payload_are_fed_and_do_not_count() {
        let mut output = b"\x1b]0;".to_vec();
        output.extend(std::iter::repeat_n(b'z', OSC_PAYLOAD_CAP));
        output.extend_from_slice(b"\x01\x02zz\x08\x07");
        let fed = passed(&mut OscCap::default(), &[&output]);
        assert!(fed.ends_with(b"z\x01\x02\x08\x07"), "{:?}", &fed[fed.len() - 8..]);
    }

    #[test]
    fn an_escape_that_is_not_an_osc_opens_none() {
        // ESC ( ] is a charset designation with an intermediate, not an
        // OSC; ESC ESC ] is one; ESC DEL ] is one (DEL is ignored).
        for (prefix, osc) in [(&b"\x1b(]"[..], false), (b"\x1b\x1b]", true), (b"\x1b\x7f]", true), (b"\x1b[]", false)] {
            let mut output = prefix.to_vec();
            output.extend(std::iter::repeat_n(b'q', 2 * OSC_PAYLOAD_CAP));
            let fed = passed(&mut OscCap::default(), &[&output]);
            assert_eq!(fed.len() < output.len(), osc, "{prefix:?}");
        }
    }
}
