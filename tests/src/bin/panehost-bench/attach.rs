//! The operator's keystroke: echo through an attach client that runs in a
//! pseudo-terminal, as a person's terminal would hold it.
//!
//! The bench holds the outer terminal's master. It writes one byte there;
//! the attach client reads it from its terminal, sends it to the pane; the
//! pane's program (`stty raw -echo; cat`) echoes it; the attach client
//! writes it to its terminal; the bench reads it from the master. The
//! clock runs from the write to the read.
//!
//! - raw PTY: the echoing program in the bench's terminal itself;
//! - tmux: `tmux attach` in the bench's terminal, the program in a pane of
//!   its server (status line off, so nothing else is drawn);
//! - panehost: `panehost attach` in the bench's terminal, the program in a
//!   pane of the bench's host.
//!
//! After each byte, outside the clock, the bench types a carriage return,
//! which the program echoes too (so the line never wraps and the terminal
//! never scrolls), and reads until the client has been quiet for a few
//! milliseconds (tmux writes the return as a cursor move). Bytes are
//! letters that no escape sequence here ends with. The systems take turns,
//! one sample each; the first 50 of each are a warm-up.

use crate::host::shell_pane;
use crate::raw_pty::{read_until, RawPty};
use crate::report::{Better, Figure};
use crate::stats::percentile;
use crate::{progress, Bench, BenchResult};
use std::io::Write;
use std::time::{Duration, Instant};

/// Samples taken and dropped before the measured ones.
const WARMUP: usize = 50;

/// The echoing program, which says when it is ready.
const ECHO: &str = "stty raw -echo; printf READY; exec cat";

/// Letters that end no escape sequence tmux or a program writes here.
const LETTERS: &[u8] = b"abcdefgijknopqvwxyz";

pub fn run(bench: &Bench) -> BenchResult<Vec<Figure>> {
    let samples = bench.options.samples;
    let mut raw = Attached::new(RawPty::spawn(&["sh", "-c", ECHO])?)?;

    let tmux_server = bench.start_tmux(2000)?;
    tmux_server.cmd(&["set", "-g", "status", "off"])?;
    tmux_server.cmd(&["new-session", "-d", "-s", "attach", "-x", "80", "-y", "24", ECHO])?;
    let mut tmux_command = vec!["tmux".to_owned(), "-L".to_owned(), tmux_server.name().to_owned()];
    tmux_command.extend(["-f", "/dev/null", "attach-session", "-t", "attach"].map(str::to_owned));
    let mut tmux = Attached::new(RawPty::spawn(&tmux_command.iter().map(String::as_str).collect::<Vec<_>>())?)?;

    let host = bench.start_host(&[])?;
    let client = bench.runtime.block_on(host.connect())?;
    let pane = bench.runtime.block_on(client.start(shell_pane(&["sh", "-c", ECHO])))?.id;
    let bin = bench.panehost_bin.display().to_string();
    let socket = host.socket.display().to_string();
    let mut panehost = Attached::new(RawPty::spawn(&[&bin, "--socket", &socket, "attach", pane.as_str()])?)?;

    let (mut raw_us, mut tmux_us, mut panehost_us) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..WARMUP + samples {
        let byte = LETTERS[i % LETTERS.len()];
        let r = raw.sample(byte)?;
        let t = tmux.sample(byte)?;
        let p = panehost.sample(byte)?;
        if i >= WARMUP {
            raw_us.push(r);
            tmux_us.push(t);
            panehost_us.push(p);
        }
    }
    progress(&format!(
        "attach: p50 raw {:.0} us, tmux attach {:.0} us, panehost attach {:.0} us",
        percentile(&raw_us, 50.0),
        percentile(&tmux_us, 50.0),
        percentile(&panehost_us, 50.0)
    ));
    // Detach (Ctrl-\), then end what is left.
    panehost.pty.writer.write_all(b"\x1c")?;
    panehost.pty.writer.flush()?;
    read_until(&mut panehost.pty.reader, b"detached")?;
    panehost.pty.end();
    bench.runtime.block_on(client.close(&pane))?;
    host.stop();
    tmux.pty.end();
    tmux_server.kill();
    raw.pty.end();

    let figure = |p: f64| {
        Figure::single(
            &format!("attach-echo/p{p}"),
            "us",
            Better::Lower,
            percentile(&panehost_us, p),
            Some(percentile(&tmux_us, p)),
            Some(percentile(&raw_us, p)),
        )
    };
    Ok(vec![
        figure(50.0).note(format!(
            "{samples} samples each, taken in turns, each client in a pseudo-terminal the bench holds; \
             tmux: `tmux attach` (status line off); panehost: `panehost attach`"
        )),
        figure(99.0),
    ])
}

/// A client (or the program itself) in a terminal the bench holds, ready
/// for keystrokes.
struct Attached {
    pty: RawPty,
}

impl Attached {
    /// Waits until the program has said it is ready and the client has
    /// finished drawing.
    fn new(mut pty: RawPty) -> BenchResult<Attached> {
        read_until(&mut pty.reader, b"READY")?;
        pty.drain_until_quiet(Duration::from_millis(300))?;
        Ok(Attached { pty })
    }

    /// Types `byte`, waits for its echo; then a carriage return, and its
    /// echo, outside the clock.
    fn sample(&mut self, byte: u8) -> BenchResult<f64> {
        let started = Instant::now();
        self.pty.writer.write_all(&[byte])?;
        self.pty.writer.flush()?;
        read_until(&mut self.pty.reader, &[byte])?;
        let elapsed = started.elapsed().as_secs_f64() * 1e6;
        self.pty.writer.write_all(b"\r")?;
        self.pty.writer.flush()?;
        self.pty.drain_until_quiet(Duration::from_millis(5))?;
        Ok(elapsed)
    }
}
