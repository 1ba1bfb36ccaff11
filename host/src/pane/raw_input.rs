//! When a runtime that reads raw keys (a full-screen agent CLI) is ready
//! for its first submission: once its terminal is in raw mode (before,
//! typed text meets the terminal's own line editing, which hands the Enter
//! on as a newline) and its drawing has settled (some CLIs take raw mode,
//! then still draw their start and drop an Enter that comes meanwhile:
//! Qwen Code kept the text in its input box, unsent), or, for a runtime
//! that names a ready marker, once its screen shows the marker.

use std::sync::atomic::{AtomicBool, Ordering};

/// A pane's readiness for raw input.
#[derive(Debug)]
pub(super) struct RawInput {
    /// Whether the runtime reads raw keys at all.
    reads_raw_input: bool,
    /// A wait ran out (the program never took raw mode): submissions no
    /// longer wait.
    given_up: AtomicBool,
    /// The program's start has settled once: later submissions wait for
    /// raw mode only.
    start_settled: AtomicBool,
    /// What the screen shows once the program reads its first submission.
    ready_marker: Option<String>,
}

impl RawInput {
    pub(super) fn new(reads_raw_input: bool, ready_marker: Option<String>) -> Self {
        RawInput {
            reads_raw_input,
            given_up: AtomicBool::new(false),
            start_settled: AtomicBool::new(false),
            ready_marker,
        }
    }

    /// What the screen shows once the program reads its first submission.
    pub(super) fn ready_marker(&self) -> Option<&str> {
        self.ready_marker.as_deref()
    }

    /// Whether a submission waits for raw mode.
    pub(super) fn awaits_raw_mode(&self) -> bool {
        self.reads_raw_input && !self.given_up.load(Ordering::Relaxed)
    }

    /// Whether a submission, once raw mode is on, also waits for the
    /// program's start to settle.
    pub(super) fn awaits_start_settled(&self) -> bool {
        self.awaits_raw_mode() && !self.start_settled.load(Ordering::Relaxed)
    }

    pub(super) fn mark_start_settled(&self) {
        self.start_settled.store(true, Ordering::Relaxed);
    }

    pub(super) fn give_up(&self) {
        self.given_up.store(true, Ordering::Relaxed);
    }
}
