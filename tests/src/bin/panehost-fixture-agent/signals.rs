//! SIGINT and SIGHUP, turned into flags that the main loop polls.
//!
//! The handlers only set an atomic flag. Reads of stdin happen on their own
//! thread, so it does not matter that the handlers restart interrupted system
//! calls: the main loop never blocks for longer than one poll interval.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use signal_hook::consts::{SIGHUP, SIGINT};

/// A signal that arrived since the last look.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Received {
    /// The terminal went away: leave quietly.
    Hangup,
    /// Ctrl-C (or `kill -INT`).
    Interrupt,
}

/// The installed handlers' flags.
pub struct Signals {
    interrupt: Arc<AtomicBool>,
    hangup: Arc<AtomicBool>,
}

impl Signals {
    /// Installs the handlers. From here on SIGINT and SIGHUP no longer kill the process.
    pub fn install() -> io::Result<Self> {
        let interrupt = Arc::new(AtomicBool::new(false));
        let hangup = Arc::new(AtomicBool::new(false));
        signal_hook::flag::register(SIGINT, Arc::clone(&interrupt))?;
        signal_hook::flag::register(SIGHUP, Arc::clone(&hangup))?;
        Ok(Signals { interrupt, hangup })
    }

    /// Takes the pending signal, if any. A hangup stays pending (it is final);
    /// an interrupt is consumed, and several before one look count as one.
    pub fn take(&self) -> Option<Received> {
        if self.hangup.load(Ordering::SeqCst) {
            Some(Received::Hangup)
        } else if self.interrupt.swap(false, Ordering::SeqCst) {
            Some(Received::Interrupt)
        } else {
            None
        }
    }
}
