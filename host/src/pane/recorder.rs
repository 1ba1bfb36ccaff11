//! The recorder: keeps the pane's record current (its screen every few
//! seconds while output flows, and its exit).

use super::Pane;
use crate::limits;
use crate::store::records::RecordedScreen;
use std::sync::Arc;

/// Runs until the pane is closed.
pub(super) async fn run(pane: Arc<Pane>) {
    let mut progress = pane.progress();
    // Output may have arrived before this task started: the first round
    // saves whatever there is.
    let mut saved_end = None;
    let mut saved_exit = false;
    let mut saved_signals = 0;
    loop {
        let changed = tokio::time::timeout(limits::SCREEN_SAVE_INTERVAL, progress.changed()).await;
        if matches!(changed, Ok(Err(_))) {
            return;
        }
        let (end, exited, closed, signals) = {
            let state = progress.latest();
            (state.end, state.exit.is_some(), state.closed, state.signals)
        };
        if closed {
            return;
        }
        let exit_changed = exited && !saved_exit;
        // A turn that opened or ended is saved too (a restarted host opens
        // a turn that was open again).
        let turn_changed = signals != saved_signals;
        if saved_end != Some(end) || exit_changed || turn_changed {
            // An exit, or a turn that opened or ended, is saved at once: a
            // host killed while output flows must not lose it.
            if changed.is_ok() && !exit_changed && !turn_changed {
                // Save once the output pauses, and at least every interval
                // while it keeps flowing. The pause is looked for once per
                // settle period, not at every change: a flood would wake
                // this task for every read of the PTY.
                let deadline = tokio::time::Instant::now() + limits::SCREEN_SAVE_INTERVAL;
                let mut seen = progress.latest().end;
                loop {
                    let now = tokio::time::Instant::now();
                    if now >= deadline {
                        break;
                    }
                    tokio::time::sleep_until(deadline.min(now + limits::SCREEN_SAVE_SETTLE)).await;
                    let state = progress.latest();
                    if state.end == seen || state.closed {
                        break;
                    }
                    seen = state.end;
                }
                // Let the screen catch up with the output first.
                let target = progress.peek().end;
                let mut parsed = pane.parsed_offset();
                let _ =
                    tokio::time::timeout(limits::SCREEN_SAVE_SETTLE, parsed.wait_for(|parsed| *parsed >= target)).await;
            }
            pane.capture_reference_from_store().await;
            let snapshot = pane.snapshot();
            let screen_at = snapshot.offset;
            pane.set_recorded_screen(RecordedScreen { offset: screen_at, formatted: snapshot.formatted });
            pane.save_record().await;
            pane.record_saved_at(screen_at);
            // A screen saved while the model still lagged the output is
            // saved again (at the next interval) until it shows all of it,
            // even when no more output comes.
            saved_end = Some(screen_at.min(end));
            saved_exit = exited;
            saved_signals = signals;
        }
    }
}
