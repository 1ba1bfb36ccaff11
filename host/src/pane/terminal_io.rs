//! The pane's data path: output into the ring and out to readers (ring,
//! screen, history), input to the terminal in the order it was asked for,
//! and resizes.

use super::input_line::{InputPlace, InputTurn};
use super::ring::RingRead;
use super::{lock, Pane};
use panehost_ipc::{ScreenSnapshot, Size};
use std::io;
use std::time::Duration;
use tokio::sync::watch;

impl Pane {
    /// Up to `max` output bytes from `cursor`.
    pub fn read_output(&self, cursor: u64, max: usize) -> RingRead {
        lock(&self.output).ring.read_from(cursor, max)
    }

    /// True when the ring can replay from `offset`.
    pub fn ring_holds(&self, offset: u64) -> bool {
        lock(&self.output).ring.holds(offset)
    }

    /// The screen at the offset the terminal model has reached. That
    /// offset is always still in the ring (the reader never lets the ring
    /// drop bytes the model has not parsed), so output can follow it.
    pub fn snapshot(&self) -> ScreenSnapshot {
        self.awake_screen().snapshot()
    }

    /// The visible screen as text, and the offset it reflects.
    pub fn screen_text(&self) -> (u64, String) {
        self.awake_screen().text()
    }

    /// The output the ring holds, its offset, and the pane's size: what
    /// [`history::render`] re-parses.
    pub fn held_output(&self) -> (u64, Vec<u8>, Size) {
        let size = self.current_progress().size;
        let output = lock(&self.output);
        let start = output.ring.start();
        let bytes = output.ring.held_between(start, output.ring.end()).unwrap_or_default();
        (start, bytes, size)
    }

    /// A receiver of the terminal model's offset.
    pub fn parsed_offset(&self) -> watch::Receiver<u64> {
        self.parsed.subscribe()
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
        lock(&self.record).size = size;
        let mut output = lock(&self.output);
        let at = output.ring.end();
        output.pending_resizes.push_back((at, size));
        drop(output);
        self.progress.set_size(size);
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
        // (only) when this chunk would push such bytes out.
        let capacity = self.ring_capacity as u64;
        let target = (self.progress.end() + data.len() as u64).saturating_sub(capacity);
        if *self.parsed.borrow() < target {
            let mut parsed = self.parsed.subscribe();
            // The follower only stops once the pane is closed (or, were it
            // ever to fail, when its task ends); then nothing waits for it.
            let _ = parsed
                .wait_for(|offset| {
                    *offset >= target
                        || self.progress.closed()
                        || self.follower_stopped.load(std::sync::atomic::Ordering::SeqCst)
                })
                .await;
        }
        debug_assert!(
            self.progress.end() + data.len() as u64 <= lock(&self.record).reserved_offset,
            "the reader reserves offsets before it reads"
        );
        let end = loop {
            let mut output = lock(&self.output);
            if self.append_would_drop_sleeping_origin(&output, data.len()) {
                drop(output);
                drop(self.awake_screen());
                continue;
            }
            output.ring.append(data);
            break output.ring.end();
        };
        self.progress.set_end(end);
    }

    pub(super) fn finish_reading(&self) {
        lock(&self.output).reader_done = true;
        // Wake whoever waits for the drain.
        self.progress.wake();
    }

    pub(super) fn reader_done(&self) -> bool {
        lock(&self.output).reader_done
    }
}
