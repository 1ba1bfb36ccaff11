//! `panehost-fixture-agent`: a small, deterministic program that behaves like
//! an AI coding-agent CLI in a terminal, so end-to-end tests can drive a real
//! process in a real pseudo-terminal. It reads its terminal, has a busy phase
//! that Ctrl-C cancels, and keeps resumable sessions on disk.
//!
//! # Command line
//!
//! ```text
//! panehost-fixture-agent [--store DIR] [--resume ID | --continue]
//! panehost-fixture-agent --print PROMPT
//! panehost-fixture-agent --version | --help
//! ```
//!
//! * `--store DIR`: the session store, created if missing. Default
//!   `$HOME/.panehost-fixture-agent`; with neither, exit 2.
//! * `--resume ID`: resume session `ID`. An `ID` that does not match
//!   `^fx-[0-9a-f]{16}$`, or has no log in the store, prints
//!   `error: unknown session ID` on stderr and exits 2.
//! * `--continue`: resume the session named by `<store>/latest`. When there is
//!   none, print `no session to continue; starting a new session` and start a
//!   new one.
//! * `--print PROMPT`: answer once on stdout and exit 0, with no session:
//!   the first `{...}` object the prompt holds, verbatim (as a model told
//!   to reply with exactly that object would), else the prompt reversed.
//! * `--version`: print `panehost-fixture-agent 1.0.0`, exit 0.
//! * `--help`: usage on stdout, exit 0.
//! * Anything else (unknown flag, stray argument, missing value, `--resume`
//!   with `--continue`): `error: <why>` and the usage on stderr, exit 2.
//!
//! Values go after a space or `=` (`--store DIR`, `--store=DIR`). Any other
//! failure to start (store not creatable, no random source) exits 1.
//!
//! # Output
//!
//! Everything goes to stdout, flushed after every write. Lines end in `\n`
//! (the terminal's ONLCR turns that into `\r\n`). The prompt is `fixture> `,
//! with no newline. At start:
//!
//! ```text
//! panehost fixture agent 1.0.0
//! no session to continue; starting a new session     (--continue with none only)
//! session: fx-0123456789abcdef
//! prompt: <earlier prompt>                            (on resume: the stored
//! answer: <earlier answer>                             conversation, in order)
//! fixture>
//! ```
//!
//! # Input
//!
//! stdin is read a line at a time, in whatever mode the terminal is in (the
//! agent never changes it: in canonical mode the line discipline echoes and
//! edits). A line loses its line end, any bracketed-paste markers
//! (`ESC[200~`, `ESC[201~`) and surrounding whitespace; invalid UTF-8 becomes
//! U+FFFD. An empty line just prints the prompt again. A line starting with `/`
//! is a command; any other line is a prompt and starts a turn. Lines typed
//! while a turn works are handled, in order, after it.
//!
//! # A turn
//!
//! ```text
//! working: <prompt>\n
//! ...                 one `.` per full 100 ms of the delay (default 300 ms: 3 dots)
//! \nanswer: <prompt with its characters in reverse order>\n
//! ESC ] 9 ; turn complete BEL       (OSC 9 notification)
//! fixture>
//! ```
//!
//! Before the notification the turn is appended to the store.
//!
//! # Ctrl-C (SIGINT)
//!
//! * While a turn works (signals are checked every 10 ms): the turn stops;
//!   `\ninterrupted\n`, then the prompt. Nothing is stored and no notification
//!   is sent.
//! * At the prompt: `\n(press Ctrl-C again to exit)\n` and the prompt. Another
//!   Ctrl-C within 2 s prints `\n` and exits with status 130. A line of input
//!   in between, or waiting longer, starts over.
//! * During `/flood` (checked after every chunk of about 16 KiB): the flood
//!   stops with `\ninterrupted\n`, then the prompt.
//!
//! End of input, a read error on stdin, SIGHUP, or stdout no longer writable:
//! exit 0 quietly.
//!
//! # Commands
//!
//! Each prints what is listed, then the prompt. A known command with a bad
//! argument prints its usage line (`usage: /delay MS`, ...).
//!
//! | command        | output |
//! |----------------|--------|
//! | `/delay MS`    | sets the busy duration; `delay: MS` |
//! | `/flood N`     | exactly N bytes (see below), then `\nflood done\n` |
//! | `/exit [CODE]` | nothing; exits with CODE (0–255, default 0) |
//! | `/title TEXT`  | `ESC ] 2 ; TEXT BEL` only (control characters dropped from TEXT) |
//! | `/alt`         | `ESC[?1049h` then `alternate screen` |
//! | `/main`        | `ESC[?1049l` then `main screen` |
//! | `/paste-on`    | `ESC[?2004h` then `bracketed paste: on` |
//! | `/paste-off`   | `ESC[?2004l` then `bracketed paste: off` |
//! | `/env NAME`    | `NAME=value` or `NAME unset` |
//! | `/session`     | `session: fx-…` |
//! | `/bell`        | BEL (`\x07`) only |
//! | `/help`        | the list of commands |
//! | anything else  | `unknown command: /x` (`/x` is the first word of the line) |
//!
//! `/flood N` writes the first N bytes of the stream of lines
//! `flood 00000001 abcdefghijklmnopqrstuvwxyz\n`, `flood 00000002 …`
//! (numbered from 1, zero-padded to 8 digits, 42 bytes per line), cut off
//! after exactly N bytes, with no newline added; then `\nflood done\n`. The
//! agent writes exactly N flood bytes; the master side of a terminal with
//! ONLCR receives one extra `\r` per `\n` among them, that is N + floor(N / 42)
//! bytes, followed by `\r\nflood done\r\n`.
//!
//! # Session store
//!
//! ```text
//! <store>/<id>.log   created empty when the session starts; per turn, appended
//!                    in one write: "prompt: <prompt>\nanswer: <answer>\n"
//! <store>/latest     "<id>\n": the session last started, resumed or appended
//!                    to; replaced atomically (temporary file, then rename)
//! ```
//!
//! Session ids are `fx-` and 16 lowercase hex digits read from `/dev/urandom`.
//! Malformed log lines, and a malformed or dangling `latest`, are reported on
//! stderr and skipped.

mod args;
mod commands;
mod flood;
mod input;
mod output;
mod session;
mod signals;
mod turn;

use std::convert::Infallible;
use std::env;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use args::{Action, Options, Start, UsageError};
use input::{Input, Poll};
use output::{report, Output};
use session::{Entry, SessionId, Store};
use signals::{Received, Signals};

const VERSION: &str = "1.0.0";
/// The store's directory under `$HOME` when `--store` is not given.
const DEFAULT_STORE_DIR: &str = ".panehost-fixture-agent";
const DEFAULT_DELAY: Duration = Duration::from_millis(300);
/// How often waiting (for input, or in a turn's busy phase) looks for signals.
const POLL_INTERVAL: Duration = Duration::from_millis(10);
/// A second Ctrl-C at the prompt within this long of the first exits.
const EXIT_CONFIRM_WINDOW: Duration = Duration::from_secs(2);

const EXIT_FAILURE: u8 = 1;
const EXIT_USAGE: u8 = 2;
const EXIT_INTERRUPTED: u8 = 130;

const NO_SESSION_TO_CONTINUE: &str = "no session to continue; starting a new session";

fn main() -> ExitCode {
    let status = match args::parse(env::args_os().skip(1)) {
        Ok(Action::Version) => print_and_succeed(&format!("panehost-fixture-agent {VERSION}\n")),
        Ok(Action::Help) => print_and_succeed(&format!("{}\n{}", args::USAGE, args::HELP)),
        Ok(Action::Print(prompt)) => print_and_succeed(&format!("{}\n", turn::one_shot_answer(&prompt))),
        Ok(Action::Run(options)) => run(options),
        Err(UsageError(why)) => {
            report(&format!("error: {why}"));
            report(args::USAGE.trim_end());
            EXIT_USAGE
        }
    };
    ExitCode::from(status)
}

fn print_and_succeed(text: &str) -> u8 {
    let mut stdout = io::stdout();
    match stdout.write_all(text.as_bytes()).and_then(|()| stdout.flush()) {
        Ok(()) => 0,
        Err(_) => EXIT_FAILURE,
    }
}

/// Starts the session the options ask for and runs it; returns the exit status.
fn run(options: Options) -> u8 {
    match start(options) {
        Ok((agent, greeting)) => agent.run(greeting),
        Err(fatal) => {
            report(&fatal.message);
            fatal.status
        }
    }
}

/// A reason not to start, with the exit status it calls for.
struct Fatal {
    message: String,
    status: u8,
}

impl Fatal {
    fn failure(message: String) -> Self {
        Fatal { message, status: EXIT_FAILURE }
    }

    fn usage(message: &str) -> Self {
        Fatal { message: message.to_owned(), status: EXIT_USAGE }
    }
}

/// What is printed between the banner and the first prompt.
#[derive(Default)]
struct Greeting {
    notice: Option<&'static str>,
    history: Vec<Entry>,
}

fn start(options: Options) -> Result<(Agent, Greeting), Fatal> {
    let signals =
        Signals::install().map_err(|error| Fatal::failure(format!("error: cannot handle signals: {error}")))?;
    let store = open_store(options.store)?;
    let (session, greeting) = choose_session(&store, options.start)?;
    let input = Input::spawn().map_err(|error| Fatal::failure(format!("error: cannot read stdin: {error}")))?;
    let agent = Agent { out: Output::new(), input, signals, store, session, delay: DEFAULT_DELAY, exit_armed_at: None };
    Ok((agent, greeting))
}

fn open_store(dir: Option<PathBuf>) -> Result<Store, Fatal> {
    let dir = match dir {
        Some(dir) => dir,
        None => env::var_os("HOME")
            .filter(|home| !home.is_empty())
            .map(|home| PathBuf::from(home).join(DEFAULT_STORE_DIR))
            .ok_or_else(|| Fatal::usage("error: HOME is not set; give --store DIR"))?,
    };
    Store::open(dir.clone())
        .map_err(|error| Fatal::failure(format!("error: cannot open session store {}: {error}", dir.display())))
}

fn choose_session(store: &Store, start: Start) -> Result<(SessionId, Greeting), Fatal> {
    match start {
        Start::New => Ok((new_session(store)?, Greeting::default())),
        Start::Resume(requested) => {
            let id = requested
                .to_str()
                .and_then(SessionId::parse)
                .filter(|id| store.contains(id))
                .ok_or_else(|| Fatal::usage("error: unknown session ID"))?;
            Ok(resume_session(store, id))
        }
        Start::Continue => match store.latest() {
            Some(id) => Ok(resume_session(store, id)),
            None => {
                let greeting = Greeting { notice: Some(NO_SESSION_TO_CONTINUE), history: Vec::new() };
                Ok((new_session(store)?, greeting))
            }
        },
    }
}

fn new_session(store: &Store) -> Result<SessionId, Fatal> {
    store.create_session().map_err(|error| Fatal::failure(format!("error: cannot create a session: {error}")))
}

fn resume_session(store: &Store, id: SessionId) -> (SessionId, Greeting) {
    if let Err(error) = store.mark_latest(&id) {
        report(&format!("warning: cannot update the latest session: {error}"));
    }
    let history = store.history(&id);
    (id, Greeting { notice: None, history })
}

/// Why the agent stops.
enum Stop {
    Exit(u8),
    /// stdout cannot be written any more: the terminal is gone.
    OutputClosed,
}

impl Stop {
    fn status(&self) -> u8 {
        match self {
            Stop::Exit(status) => *status,
            Stop::OutputClosed => 0,
        }
    }
}

impl From<io::Error> for Stop {
    fn from(_: io::Error) -> Self {
        Stop::OutputClosed
    }
}

/// A running session.
struct Agent {
    out: Output,
    input: Input,
    signals: Signals,
    store: Store,
    session: SessionId,
    /// How long a turn's busy phase lasts (`/delay`).
    delay: Duration,
    /// When a Ctrl-C at the prompt asked for a second one to exit.
    exit_armed_at: Option<Instant>,
}

impl Agent {
    /// Greets, then handles input until something stops the agent; returns the exit status.
    fn run(mut self, greeting: Greeting) -> u8 {
        match self.serve(greeting) {
            Ok(never) => match never {},
            Err(stop) => stop.status(),
        }
    }

    fn serve(&mut self, greeting: Greeting) -> Result<Infallible, Stop> {
        self.greet(greeting)?;
        loop {
            let line = self.next_line()?;
            self.exit_armed_at = None;
            self.handle_line(line.trim())?;
            self.out.prompt()?;
        }
    }

    fn greet(&mut self, greeting: Greeting) -> Result<(), Stop> {
        self.out.line(&format!("panehost fixture agent {VERSION}"))?;
        if let Some(notice) = greeting.notice {
            self.out.line(notice)?;
        }
        self.out.line(&format!("session: {}", self.session))?;
        for entry in &greeting.history {
            self.out.line(&entry.to_string())?;
        }
        self.out.prompt()?;
        Ok(())
    }

    /// Waits for the next line of input, answering Ctrl-C at the prompt meanwhile.
    fn next_line(&mut self) -> Result<String, Stop> {
        loop {
            match self.signals.take() {
                Some(Received::Hangup) => return Err(Stop::Exit(0)),
                Some(Received::Interrupt) => self.interrupt_at_prompt()?,
                None => {}
            }
            match self.input.poll(POLL_INTERVAL) {
                Poll::Line(line) => return Ok(line),
                Poll::Waiting => {}
                Poll::Closed => return Err(Stop::Exit(0)),
            }
        }
    }

    /// The first Ctrl-C at the prompt warns; a second within the window exits.
    fn interrupt_at_prompt(&mut self) -> Result<(), Stop> {
        let now = Instant::now();
        let confirmed = self.exit_armed_at.is_some_and(|armed_at| now.duration_since(armed_at) <= EXIT_CONFIRM_WINDOW);
        if confirmed {
            self.out.text("\n")?;
            return Err(Stop::Exit(EXIT_INTERRUPTED));
        }
        self.exit_armed_at = Some(now);
        self.out.text("\n(press Ctrl-C again to exit)\n")?;
        self.out.prompt()?;
        Ok(())
    }

    /// Handles one trimmed line of input. The caller prints the next prompt.
    fn handle_line(&mut self, line: &str) -> Result<(), Stop> {
        if line.is_empty() {
            Ok(())
        } else if line.starts_with('/') {
            self.run_command(commands::parse(line))
        } else {
            self.run_turn(line)
        }
    }
}
