//! The screen follower: parses the ring into the terminal model, off the
//! read path, applying resizes at the offsets where they happened; and
//! puts the model to sleep once the pane has been quiet for a while.

use super::{lock, Pane};
use crate::limits::PARSE_CHUNK;
use crate::memory_trim;
use crate::pane::ring::RingRead;
use std::sync::Arc;

/// Follows the ring until the pane is closed.
pub(super) async fn run(pane: Arc<Pane>) {
    let mut progress = pane.progress();
    let mut applied_size = progress.borrow().size;
    loop {
        let parsed = lock(&pane.screen).parsed();
        // Apply every resize that happened at or before this offset, and
        // never parse past the next one.
        let (read, resize) = {
            let mut output = lock(&pane.output);
            let mut resize = None;
            while let Some(&(at, size)) = output.pending_resizes.front() {
                if at > parsed {
                    break;
                }
                resize = Some(size);
                output.pending_resizes.pop_front();
            }
            let limit = match output.pending_resizes.front() {
                Some(&(at, _)) => ((at - parsed) as usize).min(PARSE_CHUNK),
                None => PARSE_CHUNK,
            };
            (output.ring.read_from(parsed, limit), resize)
        };
        if let Some(size) = resize {
            pane.awake_screen().resize(size);
            applied_size = size;
        }
        match read {
            RingRead::Bytes(data) => {
                let (parsed, notices) = {
                    let mut screen = pane.awake_screen();
                    screen.process(&data);
                    (screen.parsed(), screen.take_notices())
                };
                pane.parsed.send_replace(parsed);
                pane.capture_reference_from_output(&data);
                if !notices.is_empty() {
                    pane.record_terminal_notices(&notices, parsed);
                }
                // Parsing is CPU work: let the reader and subscribers run.
                tokio::task::yield_now().await;
            }
            RingRead::UpToDate => {
                if progress.borrow_and_update().closed {
                    break;
                }
                let current = parsed;
                // New output, a resize to apply, or the end.
                let mut more = |progress: &super::Progress| {
                    progress.end > current || progress.size != applied_size || progress.closed
                };
                // Once the model has been left alone for the sleep delay, it
                // may sleep (again, when a client woke it).
                let closed = loop {
                    let until_due = pane.until_screen_may_sleep();
                    match tokio::time::timeout(until_due, progress.wait_for(&mut more)).await {
                        Ok(waited) => break waited.is_err(),
                        Err(_quiet) => {
                            if pane.try_sleep_screen() {
                                memory_trim::request();
                            }
                        }
                    }
                };
                if closed {
                    break;
                }
            }
            other => {
                // The reader's backpressure makes this impossible; if it
                // ever happens, say so and keep the model usable.
                tracing::error!(pane = %pane.info.id, ?other, parsed, "terminal model lost its place in the ring");
                break;
            }
        }
    }
    // Release a reader that may wait for parsing progress.
    pane.parsed.send_modify(|_| {});
}
