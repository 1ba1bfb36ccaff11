//! The screen follower: parses the ring into the terminal model, off the
//! read path, applying resizes at the offsets where they happened; and
//! puts the model to sleep once the pane has been quiet for a while.

use super::parse_budget::ParseBudget;
use super::Pane;
use crate::limits::{FLOOD_TAIL_WAIT, PARSE_STEP_TIME};
use crate::memory_trim;
use crate::pane::ring::RingRead;
use std::sync::Arc;

/// Follows the ring until the pane is closed.
pub(super) async fn run(pane: Arc<Pane>) {
    // However this task ends, the reader must not wait for it any more.
    let _stopped = FollowerStopped(Arc::clone(&pane));
    let mut progress = pane.progress();
    let mut resets = 0;
    let mut applied_size = progress.peek().size;
    // Whether a flood's last screenful may wait for more output.
    let mut leave_tail = true;
    let mut budget = ParseBudget::new();
    loop {
        let parsed = pane.model.parsed();
        // Apply every resize that happened at or before this offset, and
        // never parse past the next one.
        let (resize, read) = pane.output.next_for_model(parsed, budget.bytes());
        if let Some(size) = resize {
            pane.awake_screen().resize(size);
            applied_size = size;
        }
        match read {
            RingRead::Bytes(data) => {
                // A tail left in the ring is small beside it: the reader
                // never waits for the model on its account.
                let may_leave_tail = leave_tail && data.len() * 4 <= pane.output.capacity();
                // One step is bounded in time, whatever the output costs: the
                // rest of a step cut short is parsed in the next one.
                let began = std::time::Instant::now();
                let deadline = began + PARSE_STEP_TIME;
                let (now_parsed, taken, notices, model_resets, title_changed) = {
                    let mut screen = pane.awake_screen();
                    let taken = screen.process_until(&data, may_leave_tail, Some(deadline));
                    let title_changed = pane.model.note_title(&screen);
                    (screen.parsed(), taken, screen.take_placed_notices(), screen.resets(), title_changed)
                };
                if title_changed {
                    pane.tell_title();
                }
                let out_of_time = std::time::Instant::now() >= deadline;
                budget.took(taken, data.len(), began.elapsed(), out_of_time && taken < data.len());
                if model_resets != resets {
                    resets = model_resets;
                    redraw_after_model_failure(&pane, now_parsed);
                }
                pane.capture_reference_from_output(&data[..taken]);
                if !notices.is_empty() {
                    crate::jitter::at(crate::jitter::Point::NoticesParsed).await;
                    pane.record_terminal_notices(&notices);
                }
                // Published once the turns know of the notices: a waiter
                // for an offset parsed finds them told (`Pane::catch_up`).
                pane.model.publish_parsed(now_parsed);
                if taken < data.len() && !out_of_time {
                    // A flood's last screenful was left: more of the flood
                    // may scroll it off too. When no more comes soon, it
                    // is parsed whole.
                    let seen = parsed + data.len() as u64;
                    let more = |progress: &super::Progress| {
                        progress.end > seen || progress.size != applied_size || progress.over()
                    };
                    leave_tail = match tokio::time::timeout(FLOOD_TAIL_WAIT, progress.until(more)).await {
                        Ok(Ok(progress)) => progress.end > seen && progress.size == applied_size && !progress.over(),
                        // Quiet, or the pane is gone.
                        Ok(Err(_)) | Err(_) => false,
                    };
                } else {
                    leave_tail = true;
                    // Parsing is CPU work: let the reader and subscribers run.
                    tokio::task::yield_now().await;
                }
            }
            RingRead::UpToDate => {
                if progress.latest().closed {
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
                    let until_due = pane.model.until_may_sleep();
                    match tokio::time::timeout(until_due, progress.until(&mut more)).await {
                        Ok(waited) => break waited.is_err(),
                        Err(_quiet) => {
                            if pane.model.try_sleep(&pane.output, &pane.info.id) {
                                memory_trim::request();
                            }
                        }
                    }
                };
                if closed {
                    break;
                }
            }
            RingRead::Behind { start } => {
                // The reader's backpressure makes this impossible; if it
                // ever happens, say so and go on from what the ring holds.
                tracing::error!(pane = %pane.info.id, parsed, start, "terminal model lost its place in the ring");
                pane.awake_screen().restart_blank_at(start);
                pane.model.publish_parsed(start);
            }
            RingRead::Ahead => {
                tracing::error!(pane = %pane.info.id, parsed, "terminal model ahead of the ring; stopping it");
                break;
            }
        }
    }
}

/// Marks the follower stopped when its task ends, however it ends, and
/// wakes a reader that may wait for parsing progress.
struct FollowerStopped(Arc<Pane>);

impl Drop for FollowerStopped {
    fn drop(&mut self) {
        self.0.model.follower_stopped();
    }
}

/// The model failed on some output and a blank one went on: the screen
/// lacks what was drawn before. A resize to one column less and back makes
/// a full-screen program draw it again.
fn redraw_after_model_failure(pane: &Pane, parsed: u64) {
    tracing::error!(pane = %pane.info.id, offset = parsed, "the terminal model failed on this pane's output; asking the program to redraw");
    let size = pane.current_progress().size;
    let narrower = panehost_ipc::Size { cols: size.cols.saturating_sub(1).max(1), rows: size.rows };
    let _ = pane.resize_terminal_only(narrower);
    let _ = pane.resize_terminal_only(size);
}

#[cfg(test)]
mod tests {
    use crate::pane::fake_keeper::{behaviour, exit_of, screen_caught_up, FakeKeeper, SIZE};
    use crate::pane::PaneLimits;
    use panehost_adapters::CompletionSignal;

    const ROWS: usize = 20;
    const COLS: usize = 70;

    /// What row `row` shows in the end.
    fn final_row(row: usize) -> String {
        let text = format!("row {row:02} drawn last ");
        text.chars().cycle().take(COLS).collect()
    }

    /// `printf`'s argv for a grid of [`ROWS`] x [`COLS`] cells drawn one
    /// cell at a time by cursor addressing: every cell a dot first, then
    /// every cell its final character, from the last cell to the first.
    /// A screen that missed or reordered any of the output shows a dot or
    /// a blank somewhere (the program writes it in a few KiB at a time).
    fn grid_drawing() -> Vec<String> {
        let mut argv = vec!["/usr/bin/printf".to_owned(), "\x1b[%d;%dH%s".to_owned()];
        let cells: Vec<(usize, usize)> = (1..=ROWS).flat_map(|row| (1..=COLS).map(move |col| (row, col))).collect();
        for &(row, col) in &cells {
            argv.extend([row.to_string(), col.to_string(), ".".to_owned()]);
        }
        for &(row, col) in cells.iter().rev() {
            let cell = final_row(row).chars().nth(col - 1).expect("a cell");
            argv.extend([row.to_string(), col.to_string(), cell.to_string()]);
        }
        argv
    }

    async fn screen_after_the_grid(limits: PaneLimits) {
        let argv = grid_drawing();
        let argv: Vec<&str> = argv.iter().map(String::as_str).collect();
        let (_keeper, pane) = FakeKeeper::pane(&argv, SIZE, behaviour(CompletionSignal::Unobserved), limits).await;
        exit_of(&pane).await;
        screen_caught_up(&pane).await;
        let end = pane.current_progress().end;
        let (at, text) = pane.screen_text();
        assert_eq!(at, end, "the screen reflects all the output");
        let rows: Vec<&str> = text.lines().map(str::trim_end).collect();
        let expected: Vec<String> = (1..=ROWS).map(final_row).collect();
        assert_eq!(rows[..ROWS], expected[..]);
        assert!(rows[ROWS..].iter().all(|row| row.is_empty()), "{rows:?}");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn the_screen_is_drawn_from_every_byte_in_order() {
        screen_after_the_grid(PaneLimits::default()).await;
    }

    /// A ring smaller than the output: the reader waits for the model
    /// rather than drop bytes it has not parsed.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn through_a_ring_smaller_than_the_output_the_screen_misses_nothing() {
        screen_after_the_grid(PaneLimits { ring_bytes: 4096, ..PaneLimits::default() }).await;
    }

    /// The follower leaves a flood's last screenful for the next chunk
    /// while more comes; once no more comes (the program still runs), it
    /// parses it.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_floods_last_screenful_is_parsed_once_the_output_stops() {
        // seq writes a few KiB at a time: reads that fill the buffer.
        let (_keeper, pane) = FakeKeeper::pane(
            &["/bin/sh", "-c", "seq 1 30000; read -r x"],
            SIZE,
            behaviour(CompletionSignal::Unobserved),
            PaneLimits::default(),
        )
        .await;
        let written: u64 = (1..=30000).map(|i| format!("{i}\r\n").len() as u64).sum();
        let mut progress = pane.progress();
        tokio::time::timeout(crate::pane::fake_keeper::WAIT, progress.until(|progress| progress.end >= written))
            .await
            .expect("the output in time")
            .expect("the pane");
        screen_caught_up(&pane).await;
        let (_, text) = pane.screen_text();
        let rows: Vec<&str> = text.lines().map(str::trim_end).filter(|row| !row.is_empty()).collect();
        let expected: Vec<String> = (30000 - (SIZE.rows as usize - 2)..=30000).map(|i| i.to_string()).collect();
        assert_eq!(rows, expected);
    }
}
