//! Catching up with the program: waiting until every byte it wrote before
//! now is in the ring, parsed, and its terminal notices (prompt marks)
//! told to the pane's turns.
//!
//! The turns learn of a shell's marks some time after the shell wrote
//! them: the bytes wait in the PTY until the reader takes them, then in
//! the ring until the screen follower parses them. What the kernel says of
//! the shell (it sleeps at its prompt, waiting for input) is about now; to
//! weigh the turns against it, they must first have caught up with what
//! the shell wrote before it slept. A shell that ran a line typed ahead
//! and came back to its prompt has written that line's marks by then, and
//! a turn that looked ended (its `D` mark told, the `A ; input_waiting=1`
//! after it not yet) is seen for what it was.

use super::Pane;
use std::time::Instant;

impl Pane {
    /// Returns true once every byte the program wrote before this call is
    /// in the ring, and the terminal model has parsed it and told the
    /// turns of its notices; false when `deadline` passes first or the
    /// pane is over.
    pub(crate) async fn catch_up(&self, deadline: Instant) -> bool {
        let end = loop {
            if self.current_progress().over() {
                return false;
            }
            // The order matters: the PTY holds nothing now, and then no
            // read that took bytes before now is still on its way to the
            // ring (the reader marks a read in flight before it reads).
            if !self.pty_holds_output() && !self.output.read_in_flight() {
                break self.progress.end();
            }
            if Instant::now() >= deadline {
                return false;
            }
            // The reader takes what the PTY holds; its append wakes this.
            let mut progress = self.progress();
            progress.mark_seen();
            let wait = CATCH_UP_POLL.min(deadline.saturating_duration_since(Instant::now()));
            let _ = tokio::time::timeout(wait, progress.changed()).await;
        };
        let parsed = self.model.wait_parsed(end, || self.current_progress().over());
        tokio::time::timeout_at(deadline.into(), parsed).await.is_ok() && self.model.parsed() >= end
    }

    /// Whether the PTY holds output the reader has not taken. A poll of
    /// the master first moves what the program wrote into what a read
    /// would return (the kernel passes a terminal's output on a moment
    /// after the write), so a write made before this call is seen.
    fn pty_holds_output(&self) -> bool {
        use rustix::event::{poll, PollFd, PollFlags, Timespec};
        let mut fds = [PollFd::new(self.io.get_ref(), PollFlags::IN)];
        match poll(&mut fds, Some(&Timespec { tv_sec: 0, tv_nsec: 0 })) {
            Ok(_) => fds[0].revents().contains(PollFlags::IN),
            // Not known: taken as holding output, until the deadline.
            Err(_) => true,
        }
    }
}

/// How often the catch-up looks at the PTY again while the reader has not
/// taken what it holds (its appends wake the look sooner).
const CATCH_UP_POLL: std::time::Duration = std::time::Duration::from_millis(2);

#[cfg(test)]
mod tests {
    use crate::pane::fake_keeper::{behaviour, eventually, output_with, screen_caught_up, FakeKeeper, SIZE, WAIT};
    use crate::pane::PaneLimits;
    use panehost_adapters::CompletionSignal;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    /// A shell's prompt, then, once it reads a line, `filler` bytes of
    /// output and the marks of a command typed ahead (it ran, and a line
    /// waits again); then `written` is made, and it waits for input.
    fn typed_ahead_script(filler: usize, written: &std::path::Path) -> String {
        format!(
            "printf '\\033]133;D;0\\007\\033]133;A\\007$ \\033]133;B\\007'; IFS= read -r go; \
             head -c {filler} /dev/zero | tr '\\0' x; \
             printf '\\033]133;C\\007ran\\r\\n\\033]133;D;0\\007\\033]133;A;input_waiting=1\\007'; \
             : > '{}'; IFS= read -r never",
            written.display()
        )
    }

    /// Runs the script with the terminal model held (its follower cannot
    /// parse): the turns lag the program. A catch-up begun once the
    /// program waits for input cannot end while they lag; once the model
    /// is let go, it ends, and the turns know the line typed ahead (a turn
    /// is open).
    #[expect(clippy::await_holding_lock, reason = "the held model is the lag the test makes")]
    async fn a_catch_up_waits_for_the_turns(filler: usize, limits: PaneLimits) {
        let scratch = tempfile::tempdir().expect("a scratch directory");
        let written = scratch.path().join("written");
        let script = typed_ahead_script(filler, &written);
        let (_keeper, pane) =
            FakeKeeper::pane(&["/bin/sh", "-c", &script], SIZE, behaviour(CompletionSignal::ShellIntegration), limits)
                .await;
        output_with(&pane, "$ ").await;
        screen_caught_up(&pane).await;
        assert!(!pane.turn_state().0, "idle at the first prompt");

        let held = pane.awake_screen();
        let turn = pane.join_input_line().wait().await;
        pane.write_input(&turn, b"go\r", WAIT).await.expect("the line is written");
        drop(turn);
        let pid = pane.info().pid;
        // All its output is written (in the PTY or the ring), and it waits
        // in its second `read`.
        eventually("the program waits for input after its output", || {
            written.exists() && crate::input_wait::waits_for_input(pid) == Some(true)
        })
        .await;
        let catching_up = tokio::spawn({
            let pane = Arc::clone(&pane);
            async move { pane.catch_up(Instant::now() + WAIT).await }
        });
        let mut catching_up = std::pin::pin!(catching_up);
        let early = tokio::time::timeout(Duration::from_millis(300), &mut catching_up).await;
        assert!(early.is_err(), "the catch-up ended while the turns could not know the output: {early:?}");
        assert!(!pane.turn_state().0, "the turns lag: they have not seen the line typed ahead");
        drop(held);
        let caught_up = tokio::time::timeout(WAIT, catching_up).await.expect("the catch-up ends").expect("it runs");
        assert!(caught_up);
        assert!(pane.turn_state().0, "the turns know the line typed ahead");
        assert!(pane.snapshot().text.contains("ran"), "the screen shows the command's output");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_catch_up_ends_once_the_turns_know_what_the_ring_holds() {
        a_catch_up_waits_for_the_turns(0, PaneLimits::default()).await;
    }

    /// A small ring: the reader, which may not drop what the model has not
    /// parsed, stops taking output, and the PTY holds the rest.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_catch_up_ends_once_the_turns_know_what_the_pty_held() {
        let limits = PaneLimits { ring_bytes: 4096, ..PaneLimits::default() };
        a_catch_up_waits_for_the_turns(8 * 1024, limits).await;
    }
}
