//! The pane's data path: output into the ring and out to readers (ring,
//! screen, history), input to the terminal in the order it was asked for,
//! and resizes.

use super::input_line::{InputPlace, InputTurn};
use super::ring::RingRead;
use super::screen::TerminalScreen;
use super::Pane;
use panehost_ipc::{ScreenSnapshot, Size};
use std::io;
use std::sync::MutexGuard;
use std::time::Duration;
use tokio::sync::watch;

impl Pane {
    /// Up to `max` output bytes from `cursor`.
    pub fn read_output(&self, cursor: u64, max: usize) -> RingRead {
        self.output.read_from(cursor, max)
    }

    /// True when the ring can replay from `offset`.
    pub fn ring_holds(&self, offset: u64) -> bool {
        self.output.holds(offset)
    }

    /// The screen at the offset the terminal model has reached. That
    /// offset is always still in the ring (the reader never lets the ring
    /// drop bytes the model has not parsed), so output can follow it.
    pub fn snapshot(&self) -> ScreenSnapshot {
        self.awake_screen().snapshot()
    }

    /// Whether the program has put its terminal in raw mode (canonical line
    /// editing off), so that it reads each key itself and an Enter arrives
    /// as a carriage return. Asked of the terminal's settings, which the
    /// PTY's two ends share; true when they cannot be read (nothing is
    /// gained by waiting then).
    pub fn terminal_in_raw_mode(&self) -> bool {
        rustix::termios::tcgetattr(self.io.get_ref())
            .map(|settings| !settings.local_modes.contains(rustix::termios::LocalModes::ICANON))
            .unwrap_or(true)
    }

    /// Whether the program turned bracketed paste on: what a submission
    /// needs of the screen, without describing all of it.
    pub fn bracketed_paste(&self) -> bool {
        self.awake_screen().bracketed_paste()
    }

    /// The visible screen as text, and the offset it reflects.
    pub fn screen_text(&self) -> (u64, String) {
        self.awake_screen().text()
    }

    /// How many bytes of output the ring holds (what
    /// [`held_output`](Self::held_output) would copy), at most.
    pub fn held_len(&self) -> usize {
        self.output.capacity().min(usize::try_from(self.current_progress().end).unwrap_or(usize::MAX))
    }

    /// The output from `from` to `to`, when the ring holds all of it.
    pub fn output_between(&self, from: u64, to: u64) -> Option<Vec<u8>> {
        self.output.held_between(from, to)
    }

    /// The output the ring holds, its offset, and the pane's size: what
    /// [`history::render`] re-parses.
    pub fn held_output(&self) -> (u64, Vec<u8>, Size) {
        let size = self.current_progress().size;
        let (start, bytes) = self.output.held();
        (start, bytes, size)
    }

    /// A receiver of the terminal model's offset.
    pub fn parsed_offset(&self) -> watch::Receiver<u64> {
        self.model.parsed_offset()
    }

    /// Where a subscription behind this host's first offset starts: the
    /// screen at that offset (for a pane taken back after a restart, while
    /// the ring still holds it), so that every byte this host holds
    /// follows. `None` otherwise.
    pub fn start_snapshot_before(&self, offset: u64) -> Option<ScreenSnapshot> {
        self.model.start_snapshot_before(offset, &self.output)
    }

    /// The terminal model, rebuilt first if it was asleep.
    pub(super) fn awake_screen(&self) -> MutexGuard<'_, TerminalScreen> {
        self.model.awake(&self.output, &self.info.id)
    }

    /// Waits until no output has arrived for `quiet`, at most `limit`.
    pub async fn wait_output_quiet(&self, quiet: Duration, limit: Duration) {
        let mut progress = self.progress();
        progress.mark_seen();
        let settle = async { while let Ok(Ok(())) = tokio::time::timeout(quiet, progress.changed()).await {} };
        let _ = tokio::time::timeout(limit, settle).await;
    }

    /// A place in the pane's line of input writers, taken now: input is
    /// written in the order places were taken.
    pub fn join_input_line(&self) -> InputPlace {
        self.input.join()
    }

    /// Writes input to the terminal, all of it or failing. Only the holder
    /// of the pane's input turn writes (see [`Pane::join_input_line`]), so
    /// input never interleaves.
    ///
    /// # Errors
    /// Fails when the PTY refuses the write, or (with `TimedOut`) when the
    /// process has not taken the input within `timeout`.
    pub async fn write_input(&self, _turn: &InputTurn, data: &[u8], timeout: Duration) -> io::Result<()> {
        let write_all = async {
            let mut written = 0;
            while written < data.len() {
                let mut guard = self.io.writable().await?;
                match guard.try_io(|fd| rustix::io::write(fd.get_ref(), &data[written..]).map_err(io::Error::from)) {
                    Ok(Ok(n)) => written += n,
                    Ok(Err(err)) if err.kind() == io::ErrorKind::Interrupted => {}
                    Ok(Err(err)) => return Err(err),
                    Err(_would_block) => {}
                }
            }
            Ok(())
        };
        tokio::time::timeout(timeout, write_all)
            .await
            .map_err(|_| io::Error::new(io::ErrorKind::TimedOut, "the process did not take the input in time"))?
    }

    /// Resizes the PTY (the process gets SIGWINCH) and, in order with the
    /// output, the terminal model.
    ///
    /// # Errors
    /// Fails when the resize ioctl fails.
    pub fn resize(&self, size: Size) -> io::Result<()> {
        self.resize_terminal_only(size)?;
        self.durable.set_size(size);
        self.output.push_resize(size);
        self.progress.set_size(size);
        self.tell_look();
        Ok(())
    }

    /// Sets the PTY's window size (the process gets SIGWINCH) without
    /// touching the model or the record: a nudge that makes a full-screen
    /// program draw its screen again.
    ///
    /// # Errors
    /// Fails when the resize ioctl fails.
    pub(super) fn resize_terminal_only(&self, size: Size) -> io::Result<()> {
        let winsize = rustix::termios::Winsize { ws_row: size.rows, ws_col: size.cols, ws_xpixel: 0, ws_ypixel: 0 };
        rustix::termios::tcsetwinsize(self.io.get_ref(), winsize)?;
        Ok(())
    }

    /// Appends output read from the PTY, first waiting (briefly, bounded by
    /// the parser's speed) if the ring would drop bytes the terminal model
    /// has not parsed yet.
    pub(super) async fn accept_output(&self, data: &[u8]) {
        // The ring may not drop bytes the screen model has not parsed: wait
        // (only) when this chunk would push such bytes out. The follower
        // only stops once the pane is closed (or, were it ever to fail,
        // when its task ends); then nothing waits for it.
        let capacity = self.output.capacity() as u64;
        let target = (self.progress.end() + data.len() as u64).saturating_sub(capacity);
        self.model.wait_parsed(target, || self.progress.closed()).await;
        debug_assert!(
            self.progress.end() + data.len() as u64 <= self.durable.reserved_offset(),
            "the reader reserves offsets before it reads"
        );
        let end = loop {
            match self.output.append(data) {
                Some(end) => break end,
                // A sleeping model would lose what rebuilds it: wake it.
                None => drop(self.awake_screen()),
            }
        };
        // An echo reaches an attached terminal before anyone is woken.
        self.output_taps.offer(end - data.len() as u64, data);
        self.progress.set_end(end);
    }

    pub(super) fn finish_reading(&self) {
        self.output.finish_reading();
        // Wake whoever waits for the drain.
        self.progress.wake();
    }

    pub(super) fn reader_done(&self) -> bool {
        self.output.reader_done()
    }
}

#[cfg(test)]
mod tests {
    use crate::pane::fake_keeper::{exit_of, output_with, screen_caught_up, shell_pane, WAIT};
    use panehost_ipc::Size;

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn input_written_reaches_the_program() {
        let (_keeper, pane) = shell_pane("IFS= read -r line; printf 'got <%s>\\n' \"$line\"").await;
        let turn = pane.join_input_line().wait().await;
        pane.write_input(&turn, b"hello world\r", WAIT).await.expect("the input is written");
        drop(turn);
        // What the program read, not the terminal's echo of it.
        output_with(&pane, "got <hello world>").await;
        assert_eq!(exit_of(&pane).await.code, 0);
    }

    /// Places in the input line are taken in the order requests were
    /// read: the later one waits, whatever order their writes are tried.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn input_reaches_the_program_in_the_order_it_was_asked_for() {
        let (_keeper, pane) = shell_pane("read -r a; read -r b; echo \"first=$a second=$b\"").await;
        let first = pane.join_input_line();
        let second = pane.join_input_line();
        let later = {
            let pane = std::sync::Arc::clone(&pane);
            tokio::spawn(async move {
                let turn = second.wait().await;
                pane.write_input(&turn, b"two\r", WAIT).await
            })
        };
        tokio::task::yield_now().await;
        let turn = first.wait().await;
        pane.write_input(&turn, b"one\r", WAIT).await.expect("the input is written");
        drop(turn);
        later.await.expect("the task runs").expect("the input is written");
        output_with(&pane, "first=one second=two").await;
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_resize_reaches_the_pty_the_model_and_the_record() {
        let (keeper, pane) = shell_pane("read -r x; stty size; read -r y").await;
        let size = Size { cols: 100, rows: 30 };
        pane.resize(size).expect("the resize");
        assert_eq!(keeper.terminal_size(), size, "the PTY's size");
        // The program sees it.
        let turn = pane.join_input_line().wait().await;
        pane.write_input(&turn, b"\r", WAIT).await.expect("the input is written");
        drop(turn);
        output_with(&pane, "30 100").await;
        screen_caught_up(&pane).await;
        assert_eq!(pane.snapshot().size, size, "the terminal model's size");
        assert_eq!(pane.current_progress().size, size);
        assert_eq!(pane.record().size, size);
    }
}
