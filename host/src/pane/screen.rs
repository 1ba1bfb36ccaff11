//! The pane's terminal model: a vt100 screen that follows the output.

use crate::limits;
use panehost_ipc::{ByteBuf, Cursor, InputModes, ScreenSnapshot, Size};
use std::time::Instant;

use super::osc_cap::OscCap;
use super::screen_resize::resize_keeping_cursor;
use super::scroll_shortcut::ScrollShortcut;
use super::snapshot_bounds;
use super::turn::TerminalNotice;

/// Records what the vt100 callbacks report: the title, and terminal
/// notifications (bells, OSC 9, OSC 777, prompt marks) until they are
/// taken.
#[derive(Debug, Default)]
pub struct ScreenCallbacks {
    title: String,
    notices: Vec<TerminalNotice>,
}

impl ScreenCallbacks {
    fn notice(&mut self, notice: TerminalNotice) {
        if self.notices.len() < limits::MAX_PENDING_NOTICES {
            self.notices.push(notice);
        }
    }
}

impl vt100::Callbacks for ScreenCallbacks {
    fn set_window_title(&mut self, _: &mut vt100::Screen, title: &[u8]) {
        self.title = String::from_utf8_lossy(title).into_owned();
    }

    fn audible_bell(&mut self, _: &mut vt100::Screen) {
        self.notice(TerminalNotice::Bell);
    }

    fn unhandled_osc(&mut self, _: &mut vt100::Screen, params: &[&[u8]]) {
        let text = |parts: &[&[u8]]| {
            parts.iter().map(|part| String::from_utf8_lossy(part).into_owned()).collect::<Vec<_>>().join(";")
        };
        match params {
            [b"9", rest @ ..] => self.notice(TerminalNotice::Osc9(text(rest))),
            [b"777", b"notify", rest @ ..] => self.notice(TerminalNotice::Osc777(text(rest))),
            // Prompt marks: a command runs (C), a command ended (D, with
            // its status when the shell gave one), the prompt is drawn and
            // the line editor reads (B, at the prompt's end). A (where the
            // prompt starts) says nothing, unless the host's shell
            // integration found a line already waiting to be read.
            [b"133", b"A", rest @ ..] if rest.iter().any(|part| *part == b"input_waiting=1") => {
                self.notice(TerminalNotice::InputWaiting)
            }
            [b"133", b"B", ..] => self.notice(TerminalNotice::PromptShown),
            [b"133", b"C", ..] => self.notice(TerminalNotice::CommandStarted),
            [b"133", b"D", rest @ ..] => {
                let status = rest.first().and_then(|status| std::str::from_utf8(status).ok()?.parse().ok());
                self.notice(TerminalNotice::CommandFinished(status));
            }
            _ => {}
        }
    }
}

/// The terminal model and the output offset it has parsed up to.
///
/// It keeps no scrollback: nothing reads parsed lines once they leave the
/// screen, and the ring holds the raw bytes, from which
/// [`history`](super::history) re-parses older lines when a client asks.
/// (1,000 parsed lines of 80 columns cost about 2.6 MiB per pane.)
///
/// A quiet pane's model can be put to sleep: the parser (about 60 KiB for
/// 80x24, a grid of 32-byte cells) is dropped, and rebuilt exactly when it
/// is needed again by replaying what it was built from (its origin: size,
/// saved screen, offset, resizes) and the output since, which the ring
/// still holds.
pub struct TerminalScreen {
    state: ModelState,
    parsed: u64,
    /// The size the model has now.
    size: Size,
    /// How many times the model failed on some output and was replaced
    /// by a blank one (see [`TerminalScreen::resets`]).
    resets: u64,
    /// When the model was last used (see [`touch`](Self::touch)).
    used_at: std::time::Instant,
    /// `None` once the model can no longer be rebuilt: the ring dropped
    /// output the replay would need, or the pane resized too often.
    origin: Option<ModelOrigin>,
    /// Follows the model's parser from what it is fed (a new model, a new
    /// one).
    feeder: Feeder,
    /// How many times the model has been put to sleep: a [`Rebuild`] is
    /// for the sleep it was taken in.
    sleeps: u64,
    /// Notices parsed and not taken yet, each with the offset just past
    /// the bytes that made it (see [`process_until`](Self::process_until)).
    placed: Vec<(u64, TerminalNotice)>,
}

/// What follows the model's parser state from the bytes it is fed, to
/// feed it less: the scroll shortcut spares it output that scrolls off
/// within a chunk, the OSC cap an OSC's payload past its bound.
#[derive(Debug, Default)]
struct Feeder {
    shortcut: ScrollShortcut,
    osc_cap: OscCap,
}

enum ModelState {
    /// Boxed, so that a sleeping model keeps none of the parser's own
    /// ~700 bytes either.
    Awake(Box<vt100::Parser<ScreenCallbacks>>),
    /// Asleep; the callbacks (the title) are kept.
    Asleep(ScreenCallbacks),
}

/// What rebuilds the model: a blank screen of `size`, `redraw` processed on
/// it, then the output from `offset` on, with each resize applied at the
/// offset where the model applied it.
#[derive(Clone)]
struct ModelOrigin {
    offset: u64,
    size: Size,
    redraw: Vec<u8>,
    resizes: Vec<(u64, Size)>,
}

/// What rebuilds a sleeping model, taken out of it (see
/// [`TerminalScreen::rebuild`]): the replay, which may take a while for a
/// full ring, needs no lock.
pub struct Rebuild {
    origin: ModelOrigin,
    parsed: u64,
    sleep: u64,
}

impl std::fmt::Debug for Rebuild {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Rebuild")
            .field("from", &self.origin.offset)
            .field("parsed", &self.parsed)
            .field("sleep", &self.sleep)
            .finish_non_exhaustive()
    }
}

impl Rebuild {
    /// The output to replay: from this offset to [`parsed`](Self::parsed).
    pub fn from(&self) -> u64 {
        self.origin.offset
    }

    /// Where the replay ends: where the model had parsed up to.
    pub fn parsed(&self) -> u64 {
        self.parsed
    }

    /// The model rebuilt from `output` (the bytes from
    /// [`from`](Self::from) to [`parsed`](Self::parsed)); `None` when the
    /// parser failed on them.
    pub fn replay(&self, output: &[u8]) -> Option<Box<vt100::Parser<ScreenCallbacks>>> {
        let origin = &self.origin;
        contained(|| {
            let mut model = parser(origin.size);
            // The replay is spared what scrolls off, as the first parse was.
            let mut feeder = Feeder::default();
            feed(&mut model, &mut feeder, &origin.redraw, false, None);
            let mut at = origin.offset;
            let mut rest = output;
            for &(resize_at, size) in &origin.resizes {
                let before = (resize_at.saturating_sub(at) as usize).min(rest.len());
                feed(&mut model, &mut feeder, &rest[..before], false, None);
                rest = &rest[before..];
                at += before as u64;
                resize_keeping_cursor(&mut model, size.rows, size.cols);
            }
            feed(&mut model, &mut feeder, rest, false, None);
            model
        })
    }
}

impl std::fmt::Debug for TerminalScreen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TerminalScreen")
            .field("parsed", &self.parsed)
            .field("asleep", &self.is_asleep())
            .finish_non_exhaustive()
    }
}

fn parser(size: Size) -> Box<vt100::Parser<ScreenCallbacks>> {
    Box::new(vt100::Parser::new_with_callbacks(size.rows, size.cols, 0, ScreenCallbacks::default()))
}

impl TerminalScreen {
    /// A blank screen of `size` whose next byte of output is at `offset`,
    /// with `redraw` (a saved screen's formatted bytes, or nothing) drawn
    /// on it without counting as output.
    pub fn new(size: Size, offset: u64, redraw: &[u8]) -> Self {
        // A saved screen the model cannot draw is not drawn.
        let mut feeder = Feeder::default();
        let model = contained(|| {
            let mut model = parser(size);
            feed(&mut model, &mut feeder, redraw, false, None);
            model
        });
        let mut model = model.unwrap_or_else(|| {
            feeder = Feeder::default();
            parser(size)
        });
        model.callbacks_mut().notices.clear();
        TerminalScreen {
            state: ModelState::Awake(model),
            parsed: offset,
            size,
            resets: 0,
            used_at: std::time::Instant::now(),
            origin: Some(ModelOrigin { offset, size, redraw: redraw.to_vec(), resizes: Vec::new() }),
            feeder,
            sleeps: 0,
            placed: Vec::new(),
        }
    }

    fn model(&mut self) -> &mut vt100::Parser<ScreenCallbacks> {
        if let ModelState::Asleep(callbacks) = &mut self.state {
            // The pane wakes the model before it uses it; if that ever
            // fails to happen, carry on with a blank screen rather than stop.
            tracing::error!(parsed = self.parsed, "terminal model used while asleep; starting it blank");
            let callbacks = std::mem::take(callbacks);
            let mut model = parser(self.origin.as_ref().map_or(Size::DEFAULT, |origin| origin.size));
            *model.callbacks_mut() = callbacks;
            self.state = ModelState::Awake(model);
            self.origin = None;
            self.feeder = Feeder::default();
        }
        match &mut self.state {
            ModelState::Awake(model) => model,
            ModelState::Asleep(_) => unreachable!("woken above"),
        }
    }

    /// Feeds output that starts exactly at [`parsed`](Self::parsed).
    ///
    /// Output the model fails on (a panic inside the parser) is contained:
    /// the model is replaced by a blank one of the same size, which goes on
    /// from the end of `data`, and [`resets`](Self::resets) grows.
    pub fn process(&mut self, data: &[u8]) {
        self.process_leaving_tail(data, false);
    }

    /// As [`process`](Self::process), but a flood's last screenful may be
    /// left for the next call (see [`ScrollShortcut::shorten`]):
    /// gives how much of `data` was parsed; the next call starts there.
    pub fn process_leaving_tail(&mut self, data: &[u8], leave_tail: bool) -> usize {
        self.process_until(data, leave_tail, None)
    }

    /// As [`process_leaving_tail`](Self::process_leaving_tail), but output
    /// the model must parse as it is stops once `deadline` has passed (see
    /// [`feed`]): gives how much of `data` was parsed.
    ///
    /// Each notice is placed at the offset just past the sequence that made
    /// it (a prompt mark, a bell, an OSC 9), not where the call's output
    /// ends: output that holds a command's end and, after it, the next
    /// command's start and end tells each where it is. So the output is
    /// fed in pieces that end after each BEL or ST (`ESC \`), where a
    /// notice can be made.
    pub fn process_until(&mut self, data: &[u8], leave_tail: bool, deadline: Option<Instant>) -> usize {
        let mut taken = 0;
        loop {
            let rest = &data[taken..];
            let piece = notice_end(rest).map_or(rest.len(), |end| end.min(rest.len()));
            let last = piece == rest.len();
            let fed = self.process_piece(&rest[..piece], leave_tail && last, deadline);
            taken += fed;
            self.place_notices();
            if last || fed < piece || deadline.is_some_and(|deadline| Instant::now() >= deadline) {
                return taken;
            }
        }
    }

    /// Moves the notices the model made into [`placed`](Self::placed), at
    /// the offset parsed so far (at most [`limits::MAX_PENDING_NOTICES`]).
    fn place_notices(&mut self) {
        let parsed = self.parsed;
        let made = match &mut self.state {
            ModelState::Awake(model) => std::mem::take(&mut model.callbacks_mut().notices),
            ModelState::Asleep(callbacks) => std::mem::take(&mut callbacks.notices),
        };
        let room = limits::MAX_PENDING_NOTICES.saturating_sub(self.placed.len());
        self.placed.extend(made.into_iter().take(room).map(|notice| (parsed, notice)));
    }

    /// One piece of [`process_until`](Self::process_until).
    fn process_piece(&mut self, data: &[u8], leave_tail: bool, deadline: Option<Instant>) -> usize {
        let mut feeder = std::mem::take(&mut self.feeder);
        let processed = self.guarded(|model| feed(model, &mut feeder, data, leave_tail, deadline));
        match processed {
            Some(parsed) => {
                self.feeder = feeder;
                self.parsed += parsed as u64;
                parsed
            }
            // The blank model that goes on has a feeder of its own.
            None => {
                self.parsed += data.len() as u64;
                self.restart_origin();
                data.len()
            }
        }
    }

    /// Replaces the model by a blank one that goes on from `offset`: for
    /// when the output it was following is no longer held.
    pub fn restart_blank_at(&mut self, offset: u64) {
        self.replace_failed_model();
        self.parsed = offset;
        self.restart_origin();
    }

    /// How many times output made the model fail, so that it was replaced
    /// by a blank one. The screen is then incomplete until the program
    /// draws it again.
    pub fn resets(&self) -> u64 {
        self.resets
    }

    /// Runs `f` on the model. When the model panics, it is replaced by a
    /// blank one of the current size (keeping the title) and `None` is
    /// returned; the caller says where the new model's origin is.
    fn guarded<R>(&mut self, f: impl FnOnce(&mut vt100::Parser<ScreenCallbacks>) -> R) -> Option<R> {
        let model = self.model();
        let result = contained(|| f(model));
        if result.is_none() {
            self.replace_failed_model();
        }
        result
    }

    fn replace_failed_model(&mut self) {
        let title = self.title().to_owned();
        let mut model = parser(self.size);
        model.callbacks_mut().title = title;
        self.state = ModelState::Awake(model);
        self.origin = None;
        self.feeder = Feeder::default();
        self.resets += 1;
        tracing::error!(parsed = self.parsed, size = %self.size, "the terminal model failed on this output; a blank one goes on");
    }

    /// After a failure: the blank model is rebuilt from the output after
    /// [`parsed`](Self::parsed).
    fn restart_origin(&mut self) {
        self.origin =
            Some(ModelOrigin { offset: self.parsed, size: self.size, redraw: Vec::new(), resizes: Vec::new() });
    }

    /// The offset of the next byte the screen expects.
    pub fn parsed(&self) -> u64 {
        self.parsed
    }

    /// Changes the size, at [`parsed`](Self::parsed).
    pub fn resize(&mut self, size: Size) {
        self.size = size;
        if self.guarded(|model| resize_keeping_cursor(model, size.rows, size.cols)).is_none() {
            self.restart_origin();
            return;
        }
        if let Some(origin) = &mut self.origin {
            origin.resizes.push((self.parsed, size));
            if origin.resizes.len() > limits::MAX_REPLAYED_RESIZES {
                self.origin = None;
            }
        }
    }

    /// Whether the process turned bracketed paste on (no snapshot made).
    pub fn bracketed_paste(&mut self) -> bool {
        self.guarded(|model| model.screen().bracketed_paste()).unwrap_or(false)
    }

    /// The window title the process set.
    pub fn title(&self) -> &str {
        match &self.state {
            ModelState::Awake(model) => &model.callbacks().title,
            ModelState::Asleep(callbacks) => &callbacks.title,
        }
    }

    /// Terminal notifications seen since the last take.
    pub fn take_notices(&mut self) -> Vec<TerminalNotice> {
        self.take_placed_notices().into_iter().map(|(_, notice)| notice).collect()
    }

    /// The notices parsed since the last take, each with the offset just
    /// past the bytes that made it.
    pub fn take_placed_notices(&mut self) -> Vec<(u64, TerminalNotice)> {
        self.place_notices();
        std::mem::take(&mut self.placed)
    }

    /// Records a use of the model: it sleeps only after a quiet spell.
    pub fn touch(&mut self) {
        self.used_at = std::time::Instant::now();
    }

    /// How long since the model was last used.
    pub fn idle_for(&self) -> std::time::Duration {
        self.used_at.elapsed()
    }

    /// True while the model is asleep.
    pub fn is_asleep(&self) -> bool {
        matches!(self.state, ModelState::Asleep(_))
    }

    /// The offset from which the output must still be held for the model
    /// to be rebuilt, when it can be.
    pub fn origin_offset(&self) -> Option<u64> {
        self.origin.as_ref().map(|origin| origin.offset)
    }

    /// Says the output before the origin is gone: the model can no longer
    /// be rebuilt, so it stays awake from now on.
    pub fn forget_origin(&mut self) {
        self.origin = None;
    }

    /// Drops the model, keeping what rebuilds it. Nothing happens when it
    /// cannot be rebuilt. The caller makes sure the output from
    /// [`origin_offset`](Self::origin_offset) to [`parsed`](Self::parsed)
    /// stays held while the model sleeps.
    pub fn sleep(&mut self) -> bool {
        if self.origin.is_none() {
            return false;
        }
        if let ModelState::Awake(model) = &mut self.state {
            let callbacks = std::mem::take(model.callbacks_mut());
            self.state = ModelState::Asleep(callbacks);
            self.sleeps += 1;
        }
        true
    }

    /// Rebuilds a sleeping model from `output`: the bytes from
    /// [`origin_offset`](Self::origin_offset) to [`parsed`](Self::parsed).
    pub fn wake(&mut self, output: &[u8]) {
        if let Some(rebuild) = self.rebuild() {
            let replayed = rebuild.replay(output);
            self.install(&rebuild, replayed);
        }
    }

    /// What rebuilds the sleeping model, to replay with no lock held
    /// ([`Rebuild::replay`], then [`install`](Self::install)); `None`
    /// while it is awake.
    pub fn rebuild(&self) -> Option<Rebuild> {
        if !self.is_asleep() {
            return None;
        }
        let origin = self.origin.clone()?;
        Some(Rebuild { origin, parsed: self.parsed, sleep: self.sleeps })
    }

    /// Wakes the model with what `rebuild` replayed (`None`: the replay
    /// failed, and the model starts blank); false, changing nothing, when
    /// the model is no longer in the sleep `rebuild` was taken in (woken
    /// meanwhile, and perhaps asleep again).
    pub fn install(&mut self, rebuild: &Rebuild, replayed: Option<Box<vt100::Parser<ScreenCallbacks>>>) -> bool {
        let ModelState::Asleep(callbacks) = &mut self.state else { return false };
        if self.sleeps != rebuild.sleep {
            return false;
        }
        let callbacks = std::mem::take(callbacks);
        // The replay's bells and notifications were reported the first
        // time; the title is the one kept.
        match replayed {
            Some(mut model) => {
                *model.callbacks_mut() = callbacks;
                self.state = ModelState::Awake(model);
            }
            None => {
                self.state = ModelState::Awake(parser(self.size));
                *self.model().callbacks_mut() = callbacks;
                self.replace_failed_model();
                self.restart_origin();
            }
        }
        true
    }

    /// The visible screen as text (what a snapshot's `text` holds), and
    /// the offset it reflects, [`parsed`](Self::parsed).
    pub fn text(&mut self) -> (u64, String) {
        let parsed = self.parsed;
        if let Some(text) = self.guarded(|model| model.screen().contents()) {
            return (parsed, text);
        }
        self.restart_origin();
        (parsed, self.guarded(|model| model.screen().contents()).unwrap_or_default())
    }

    /// The screen at [`parsed`](Self::parsed).
    pub fn snapshot(&mut self) -> ScreenSnapshot {
        let parsed = self.parsed;
        if let Some(snapshot) = self.guarded(|model| describe(model, parsed)) {
            return snapshot;
        }
        self.restart_origin();
        // A blank model describes itself.
        self.guarded(|model| describe(model, parsed)).unwrap_or_else(|| blank_snapshot(self.size, parsed))
    }
}

/// Feeds `data` to `model` through `feeder`, which has followed all it
/// was fed before; gives how much of `data` that was (all of it unless
/// `leave_tail`).
fn feed(
    model: &mut vt100::Parser<ScreenCallbacks>,
    feeder: &mut Feeder,
    data: &[u8],
    leave_tail: bool,
    deadline: Option<Instant>,
) -> usize {
    let (rows, _) = model.screen().size();
    let alternate = model.screen().alternate_screen();
    let before = deadline.map(|_| feeder.shortcut.clone());
    let mut shortened = Vec::new();
    let (fed, parsed) = feeder.shortcut.shorten(data, rows, alternate, leave_tail, &mut shortened);
    let osc_cap = &mut feeder.osc_cap;
    let (Some(deadline), Some(before)) = (deadline, before) else {
        osc_cap.pass(fed, |run| model.process(run));
        return parsed;
    };
    if !std::ptr::eq(fed.as_ptr(), data.as_ptr()) || fed.len() != parsed {
        // Shortened: plain output, whose cost is a few microseconds a
        // kilobyte whatever the screen.
        osc_cap.pass(fed, |run| model.process(run));
        return parsed;
    }
    // Output parsed as it is may cost a thousand times that (a
    // cursor-home-and-erase rewrites every cell of a 1000x250 screen): fed
    // in slices, it stops once the deadline has passed, and the shortcut
    // is told of what was fed alone.
    let mut done = 0;
    for slice in fed.chunks(TIMED_SLICE) {
        osc_cap.pass(slice, |run| model.process(run));
        done += slice.len();
        if Instant::now() >= deadline {
            break;
        }
    }
    if done < parsed {
        feeder.shortcut = before;
        let (_, again) = feeder.shortcut.shorten(&data[..done], rows, alternate, false, &mut Vec::new());
        debug_assert_eq!(again, done);
    }
    done
}

/// Where the first piece of `data` that may make a notice ends: just past
/// its first BEL or ST (`ESC \`), which end an OSC sequence (a prompt
/// mark, an OSC 9 or 777) or are a bell; `None` when it has neither.
fn notice_end(data: &[u8]) -> Option<usize> {
    let bell = memchr::memchr(0x07, data);
    let st = memchr::memmem::find(data, b"\x1b\\");
    match (bell, st) {
        (Some(bell), Some(st)) if st < bell => Some(st + 2),
        (Some(bell), _) => Some(bell + 1),
        (None, Some(st)) => Some(st + 2),
        (None, None) => None,
    }
}

/// How much output parsed as it is the model takes between two looks at
/// the clock (see [`feed`]): a few of the costliest sequences.
const TIMED_SLICE: usize = 128;

/// Runs `f`, containing a panic of the terminal model inside it.
fn contained<R>(f: impl FnOnce() -> R) -> Option<R> {
    crate::contained::contained("the terminal model", f)
}

/// A snapshot of an empty screen, for when no model can describe one.
fn blank_snapshot(size: Size, offset: u64) -> ScreenSnapshot {
    ScreenSnapshot {
        offset,
        size,
        text: String::new(),
        formatted: ByteBuf(b"\x1b[H\x1b[2J".to_vec()),
        cursor: Cursor { row: 0, col: 0, visible: true },
        title: String::new(),
        alternate_screen: false,
        modes: InputModes::default(),
        trimmed: false,
    }
}

/// The screen a model shows, at output offset `parsed`.
fn describe(model: &mut vt100::Parser<ScreenCallbacks>, parsed: u64) -> ScreenSnapshot {
    let (title, title_cut) = snapshot_bounds::title(model.callbacks().title.clone());
    let screen = model.screen();
    let (rows, cols) = screen.size();
    let (cursor_row, cursor_col) = screen.cursor_position();
    let (formatted, formatted_cut) = snapshot_bounds::formatted(screen, &title);
    let (text, text_cut) = snapshot_bounds::text(screen.contents());
    ScreenSnapshot {
        offset: parsed,
        size: Size { cols, rows },
        text,
        formatted: ByteBuf(formatted),
        cursor: Cursor { row: cursor_row, col: cursor_col, visible: !screen.hide_cursor() },
        title,
        alternate_screen: screen.alternate_screen(),
        modes: InputModes {
            bracketed_paste: screen.bracketed_paste(),
            mouse: screen.mouse_protocol_mode() != vt100::MouseProtocolMode::None,
            application_keypad: screen.application_keypad(),
            application_cursor: screen.application_cursor(),
        },
        trimmed: title_cut || formatted_cut || text_cut,
    }
}

#[cfg(test)]
#[path = "screen_tests.rs"]
mod tests;
