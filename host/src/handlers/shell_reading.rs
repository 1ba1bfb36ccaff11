//! Whether a shell with prompt marks reads: its line editor has drawn its
//! prompt (the `B` mark), and the kernel says it sleeps in its wait for
//! input. An interrupt's keys and an `ask`'s busy check wait for it.

use crate::limits::{self, LINE_EDITOR_POLL};
use crate::pane::Pane;
use panehost_adapters::CompletionSignal;
use std::time::Instant;

/// Returns once a shell with prompt marks reads at its prompt: its line
/// editor has drawn the prompt ([`line_editor_reading`]) and the kernel
/// says it sleeps in its wait for input ([`blocked_reading`]), or the pane
/// is over. A Ctrl-C sent then is acted on at once.
pub(super) async fn reading_at_its_prompt(pane: &Pane) {
    line_editor_reading(pane).await;
    blocked_reading(pane).await;
}

/// Returns once the pane's process (a shell at its prompt) sleeps in its
/// wait for input, as far as the kernel says, or the pane is over.
async fn blocked_reading(pane: &Pane) {
    waiting_for_input(pane.info().pid, || pane.current_progress().over()).await;
}

/// Returns true once process `pid` sleeps in a wait for input, as far as
/// the kernel says; false once `stop()` is true (looked at first). Looked
/// at every [`LINE_EDITOR_POLL`]. The kernel's answer is read from two
/// files: a process that wakes between them reads as sleeping with no
/// place (not known), which happens now and then; only a kernel that says
/// so [`HIDDEN_WAIT_LOOKS`] times in a row is taken to hide where its
/// processes sleep, and is not waited for.
async fn waiting_for_input(pid: u32, stop: impl Fn() -> bool) -> bool {
    let mut not_known = 0;
    loop {
        if stop() {
            return false;
        }
        match crate::input_wait::waits_for_input(pid) {
            Some(true) => return true,
            Some(false) => not_known = 0,
            None => {
                not_known += 1;
                if not_known >= HIDDEN_WAIT_LOOKS {
                    tracing::debug!(
                        pid,
                        looks = not_known,
                        "the kernel does not say where the process sleeps; taken as waiting for input"
                    );
                    return true;
                }
            }
        }
        tokio::time::sleep(LINE_EDITOR_POLL).await;
    }
}

/// Whether a turn is open, and the sequence number the next turn signal
/// will have ([`Pane::turn_state`]), read once no turn is open and a shell
/// waits for input at its prompt, or a turn is open, or
/// [`limits::SHELL_READING_WAIT`] has passed. A line typed ahead that the
/// shell has not read yet (keys typed as a command, an attached
/// terminal's typing; a line whose Enter came after the prompt's `read -t
/// 0` looked, so the prompt did not say it waits) would run before an
/// `ask`'s text, and its end would answer the ask. The shell reads such a
/// line before it waits for input again: once it waits, none is left; if
/// it read one, that line's command starts, and its turn is told (the
/// `ask` is then told `TURN_IN_PROGRESS`). A turn that ends while this
/// waits does not end the wait: the shell may not read yet. Once the
/// shell waits, the turns are read after they have caught up with all it
/// wrote before ([`Pane::catch_up`]): they learn of its marks a moment
/// after it wrote them, and a line typed ahead may have run in that
/// moment, its start and end not told yet (its end would answer the ask).
pub(super) async fn idle_and_reading(pane: &Pane) -> (bool, u64) {
    let deadline = Instant::now() + limits::SHELL_READING_WAIT;
    let pid = pane.info().pid;
    loop {
        let (busy, first_seq) = pane.turn_state();
        let shell = pane.completion() == CompletionSignal::ShellIntegration;
        if busy || !shell || pane.current_progress().over() || Instant::now() >= deadline {
            return (busy, first_seq);
        }
        let waiting = waiting_for_input(pid, || pane.busy() || pane.current_progress().over());
        let reading = tokio::time::timeout_at(deadline.into(), waiting).await.unwrap_or(true);
        if reading {
            // The turns may lag the shell: it may have run a line typed
            // ahead and come back to its prompt, its marks not told yet.
            // They are weighed once they know all it wrote before it slept.
            pane.catch_up(deadline).await;
            return pane.turn_state();
        }
    }
}

/// How many looks in a row that find a sleeping process with no place
/// it sleeps in mean the kernel hides it ([`waiting_for_input`]).
const HIDDEN_WAIT_LOOKS: u32 = 5;

/// Returns once a shell with prompt marks has drawn its prompt since its
/// last command (its `B` mark, drawn after its line editor has taken over
/// its signals; bracketed paste comes on a moment before that, and input
/// sent then lost its first byte), or the pane is over.
pub(super) async fn line_editor_reading(pane: &Pane) {
    let mut progress = pane.progress();
    let _ = progress.until(|state| state.line_editor_reading || state.over()).await;
}
