//! The screen heuristic: a turn ends when the output stays quiet for a
//! while after input. It is a guess, and its signal says so.

use super::Pane;
use crate::limits::HEURISTIC_QUIET;
use std::sync::Arc;

/// Watches the pane while a turn is open; ends it when no output arrives
/// for [`HEURISTIC_QUIET`].
pub(super) async fn run(pane: Arc<Pane>) {
    let mut progress = pane.progress();
    loop {
        // Wait for a turn to open (or the pane to end).
        let ended = progress.until(|state| state.over() || pane.busy()).await.map(|state| state.over()).unwrap_or(true);
        if ended {
            return;
        }
        // Each change of the output restarts the quiet period.
        loop {
            let seen_end = progress.latest().end;
            match tokio::time::timeout(HEURISTIC_QUIET, progress.changed()).await {
                Err(_quiet) => {
                    pane.record_quiet();
                    break;
                }
                Ok(Err(_closed)) => return,
                Ok(Ok(())) => {
                    let state = progress.peek();
                    if state.over() {
                        return;
                    }
                    if !pane.busy() {
                        break;
                    }
                    let _ = seen_end;
                }
            }
        }
    }
}
