//! The host's own sizes, counts and timeouts, each with its reason. (The
//! defaults the environment can change are read in `config.rs`; a few
//! limits live beside the one piece of code they bound, and the wire's
//! limits are in the ipc crate.)

use std::time::Duration;

/// Output bytes a pane keeps for replay (its ring), by default.
pub(crate) const DEFAULT_RING_BYTES: usize = 4 * 1024 * 1024;
/// Lines a `history` request returns when it names no count.
pub(crate) const DEFAULT_HISTORY_LINES: u32 = 1000;
/// What the scratch model that re-parses history may cost, at most (one
/// cell of the model is 32 bytes); wide panes get fewer lines.
pub(crate) const HISTORY_MODEL_BYTES: usize = 16 * 1024 * 1024;
/// An estimate of what one cell of the terminal model costs, used to turn
/// [`HISTORY_MODEL_BYTES`] into a line limit.
pub(crate) const SCREEN_CELL_BYTES: usize = 36;

/// How many panes a host holds at most, by default. Pseudo-terminals are a
/// resource of the whole machine (4,096 by default on Linux,
/// `/proc/sys/kernel/pty/max`), shared with every other user: one user's
/// host should not take them all. 1,000 idle panes cost the host about
/// 35 MiB.
pub(crate) const MAX_PANES: usize = 1000;
/// How many subscriptions one connection holds at most, by default. Each
/// is a task with a cursor and, while it writes, a frame of up to
/// [`OUTPUT_EVENT_BYTES`].
pub(crate) const MAX_SUBSCRIPTIONS_PER_CONNECTION: usize = 1024;

/// How many requests of one connection run at once, at most. A request
/// that may wait (an `ask`, an `interrupt`, a `close`, a `start`) runs
/// beside the connection's others; beyond this many, the host reads the
/// connection's next request once one of them is answered.
pub(crate) const MAX_REQUESTS_IN_FLIGHT: usize = 256;

/// How many pane news events (`watch`) the host keeps for a watcher that
/// has not read them yet; one that falls further behind gets the list of
/// every pane instead (`pane_list`).
pub(crate) const NEWS_BACKLOG: usize = 4096;

/// How many panes that left (closed, or ended at a restore) the host
/// remembers, to tell a client what became of one.
pub(crate) const ENDED_PANES_REMEMBERED: usize = 1000;

/// How many panes one keeper process is given, by default. A keeper costs
/// about 130 KiB however many panes it holds, and a keeper that dies takes
/// its panes with it (they come back by native resume).
pub(crate) const PANES_PER_KEEPER: usize = 16;
/// The most panes one keeper may be given: it holds four descriptors per
/// pane (master, listener, connection, pidfd), and keeps the open-file
/// limit the host was started with, commonly 1,024.
pub(crate) const MAX_PANES_PER_KEEPER: usize = 200;

/// How long a keeper may take to read a pane request and answer it. Every
/// pane start goes through the one open keeper, under a lock: a keeper
/// that stops answering must not hold up every later start. A keeper
/// answers once the PTY is open, the child forked and its socket bound
/// (milliseconds); it is then given no more panes and the start fails.
pub(crate) const KEEPER_ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest read from a PTY master at once.
pub(crate) const PTY_READ_CHUNK: usize = 64 * 1024;
/// The read buffer of a quiet pane; it grows (4x per full read) up to
/// [`PTY_READ_CHUNK`] while output floods.
pub(crate) const PTY_READ_CHUNK_IDLE: usize = 4 * 1024;
/// How long a pane must be quiet before its grown read buffer is given back.
pub(crate) const PTY_READ_SHRINK_AFTER: Duration = Duration::from_secs(2);
/// How long a pane must be quiet before its terminal model is put to sleep
/// (dropped, to be rebuilt from the ring when next needed).
pub(crate) const SCREEN_SLEEP_AFTER: Duration = Duration::from_secs(5);
/// Memory freed by sleeping models is handed back to the system at most
/// this often.
pub(crate) const MEMORY_TRIM_INTERVAL: Duration = Duration::from_secs(2);
/// Largest piece of output the terminal model parses at once.
pub(crate) const PARSE_CHUNK: usize = 64 * 1024;
/// Largest output event sent to a subscriber.
pub(crate) const OUTPUT_EVENT_BYTES: usize = 32 * 1024;

/// How long a client may take to send its hello.
pub(crate) const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// After the child exits, the rest of its output is read before the exit
/// is reported: for as long as the reading (or the terminal model it may
/// wait for) moves on, and once nothing has moved for this long (a
/// descendant holds the terminal open), no longer…
pub(crate) const EXIT_DRAIN_GRACE: Duration = Duration::from_millis(500);
/// …and at most this long in all (a descendant that keeps printing).
pub(crate) const EXIT_DRAIN_LIMIT: Duration = Duration::from_secs(10);
/// Waits between the signals that end a pane (SIGHUP, SIGTERM, SIGKILL).
pub(crate) const CLOSE_SIGNAL_WAIT: Duration = Duration::from_millis(1500);
/// The screen heuristic: how long the output must stay quiet after input
/// for the turn to count as ended.
pub(crate) const HEURISTIC_QUIET: Duration = Duration::from_millis(1500);
/// The end of a turn a hook reports is recorded once the output after the
/// report has been quiet this long (some CLIs run the hook before they draw
/// the answer)…
pub(crate) const HOOK_SETTLE_QUIET: Duration = Duration::from_millis(300);
/// …or once this much time has passed since the report.
pub(crate) const HOOK_SETTLE_LIMIT: Duration = Duration::from_secs(3);
/// A runtime that loses early input gets it once the pane has shown output
/// and been quiet this long.
pub(crate) const READY_QUIET: Duration = Duration::from_millis(500);
/// How long a send waits for such a runtime to be ready.
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(30);
/// How long `ask` waits for the end of a turn by default.
pub(crate) const DEFAULT_TURN_TIMEOUT: Duration = Duration::from_secs(600);
/// How long an interrupt waits for each step to be confirmed.
pub(crate) const INTERRUPT_CONFIRM_WAIT: Duration = Duration::from_secs(2);
/// The longest one pane's restore after a host restart may take: taking
/// it back from its keeper is quick, but a restore by native resume starts
/// the CLI and may probe its version first (some CLIs take 20 s to answer
/// offline).
pub(crate) const RESTORE_PANE_TIMEOUT: Duration = Duration::from_secs(120);

/// The largest compiled program a `wait_for` pattern may make (and the
/// most its lazy DFA may cache): a short pattern such as `(\w{1000}){1000}`
/// compiles to gigabytes without it.
pub(crate) const WAIT_REGEX_SIZE_LIMIT: usize = 1 << 20;
/// How often a `wait_for` on the screen looks at it, at most, while the
/// terminal model keeps parsing: each look renders the screen as text.
pub(crate) const WAIT_SCREEN_RECHECK: Duration = Duration::from_millis(25);
