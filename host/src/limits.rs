//! The host's own sizes, counts and timeouts, each with its reason: every
//! one of them is here. (The defaults the environment can change are read
//! in `config.rs`; the limits of a wire are part of its definition: the
//! protocol's in the ipc crate, the keeper's in `keeper_wire/`.)

use std::time::Duration;

/// Output bytes a pane keeps for replay (its ring), by default.
pub(crate) const DEFAULT_RING_BYTES: usize = 4 * 1024 * 1024;
/// Lines a `history` request returns when it names no count.
pub(crate) const DEFAULT_HISTORY_LINES: u32 = 1000;
/// How long an interrupt right after a submission to a shell with prompt
/// marks waits for the shell to start the submitted command (its `C`
/// mark) before sending its keys anyway.
pub(crate) const COMMAND_START_WAIT: Duration = Duration::from_secs(2);
/// What large answers (`inspect`, `history`) being built or waiting to be
/// written may hold in all, host-wide (`PANEHOST_ANSWER_BUDGET_BYTES`
/// changes it): enough for a dozen `history` answers of the largest pane
/// at once, far below what a machine can give.
pub(crate) const ANSWER_BUDGET_BYTES: usize = 256 * 1024 * 1024;
/// The budget's grain.
pub(crate) const ANSWER_BUDGET_UNIT: usize = 64 * 1024;
/// How long a large answer waits for the budget before `BUSY`.
pub(crate) const ANSWER_BUDGET_WAIT: Duration = Duration::from_secs(10);
/// Lines an `ask` answered by a shell's prompt marks gives in its
/// `added_text` at most (the last ones; fewer for wide panes, as for
/// history).
pub(crate) const MAX_ADDED_TEXT_LINES: usize = 10_000;
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

/// How many keepers take new panes at once: a keeper answers one pane
/// request at a time, so starts made at the same moment are spread over
/// this many (`pane/keeper_intake.rs`), and a keeper slow to answer holds
/// up only the start asking it. Few, because each keeper started for a
/// burst costs a process (about 130 KiB) until it is given its share.
pub(crate) const KEEPERS_TAKING_PANES: usize = 4;
/// How long a keeper may take to read a pane request and answer it: a
/// keeper that stops answering must not hold up its lane for good. A
/// keeper answers once the PTY is open, the child forked and its socket
/// bound (milliseconds); it is then given no more panes and the start is
/// tried once more in another.
pub(crate) const KEEPER_ANSWER_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest read from a PTY master at once.
pub(crate) const PTY_READ_CHUNK: usize = 64 * 1024;
/// The read buffer of a quiet pane; it grows (4x per full read) up to
/// [`PTY_READ_CHUNK`] while output floods.
pub(crate) const PTY_READ_CHUNK_IDLE: usize = 4 * 1024;
/// A read of the PTY at least this large means output floods: the reader
/// reads again at once instead of waiting for the next readiness event
/// (the terminal driver hands over about 4 KiB per read at most; an echo
/// or a prompt is far smaller).
pub(crate) const FLOOD_READ: usize = 2 * 1024;
// Below the smallest read buffer: a read that fills the buffer is a flood.
const _: () = assert!(FLOOD_READ < PTY_READ_CHUNK_IDLE);
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
/// How long one step of a pane's terminal model may take, about: output
/// that costs more per byte (on a large screen, a thousand times more) is
/// parsed in several steps, and between two the model and the worker
/// thread are free for everything else.
pub(crate) const PARSE_STEP_TIME: Duration = Duration::from_millis(2);
/// The smallest offer of output to one step (see `pane::parse_budget`).
pub(crate) const PARSE_CHUNK_LEAST: usize = 256;
/// How long the screen follower waits for more of a flood before it
/// parses the last screenful it left (see `pane::scroll_shortcut`).
pub(crate) const FLOOD_TAIL_WAIT: Duration = Duration::from_millis(2);
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
/// The sweep of what a pane started (`pane::sweep`): how long its
/// processes have after SIGTERM before SIGKILL (they may be saving
/// something)…
pub(crate) const SWEEP_GRACE: Duration = Duration::from_millis(1000);
/// …how long it waits for them to go after each SIGKILL…
pub(crate) const SWEEP_KILL_WAIT: Duration = Duration::from_millis(1000);
/// …how often it looks whether a pane's control group has emptied after
/// `cgroup.kill` (nothing it could wait on says so more cheaply)…
pub(crate) const SWEEP_CGROUP_LOOK: Duration = Duration::from_millis(10);
/// …how many times it looks again and sends SIGKILL before it reports
/// survivors (one that left the pane's tree while it looked, a process
/// the kernel holds in an uninterruptible sleep)…
pub(crate) const SWEEP_ROUNDS: usize = 5;
/// …and, in each round, how many times it looks again for processes
/// their stopped parents started before it sends SIGKILL to them all
/// (stopped, none can start another).
pub(crate) const SWEEP_STOP_PASSES: usize = 16;
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
/// How long an interrupt at a shell's idle prompt waits for the prompt to
/// be drawn again (its mark), before it answers.
pub(crate) const PROMPT_REDRAW_WAIT: Duration = Duration::from_millis(1000);
/// An interrupt whose command ended on its own sends its keys again at the
/// prompt once the shell's output has been quiet this long (whatever the
/// first keys made it print is told by then), and lets the input line go
/// after as long a quiet.
pub(crate) const STRAY_INTERRUPT_QUIET: Duration = Duration::from_millis(200);
/// How long an `ask` at a shell that looks idle waits for it to wait for
/// input (a line typed ahead and not read yet is read first), or for a
/// turn to open, before it goes ahead.
pub(crate) const SHELL_READING_WAIT: Duration = Duration::from_millis(1000);
/// How often an interrupt at a shell's idle prompt asks the kernel whether
/// the shell's wait for input has begun.
pub(crate) const LINE_EDITOR_POLL: Duration = Duration::from_millis(2);
/// How often a submission to a runtime that reads raw keys looks at the
/// terminal's settings while it waits for raw mode (output makes it look
/// at once).
pub(crate) const RAW_MODE_POLL: Duration = Duration::from_millis(20);
/// How long the first submission to a runtime that reads raw keys waits,
/// once raw mode is on, for its start to settle (its ready marker on the
/// screen where it names one, then [`READY_QUIET`] without output). Qwen
/// Code 0.24.4 draws its start for up to about 9 s on a loaded machine and
/// drops a prompt typed before its input box is drawn.
pub(crate) const START_SETTLE_LIMIT: Duration = Duration::from_secs(15);
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

// Bounds of `server/passed_descriptors.rs`.

/// The most descriptors a request may bring: a terminal to read keys
/// from and one to write to.
pub(crate) const MAX_PASSED_DESCRIPTORS: usize = 2;

/// Bytes read from the socket at a time, into a buffer of the reader's
/// own: the caller's buffer would have to be zeroed before each read.
pub(crate) const CONNECTION_READ_BYTES: usize = 8 * 1024;

// Bounds of `handlers/terminal_attach/mod.rs`.

/// Bytes read from the terminal at a time: far more than a person types
/// between two reads, and a paste of this size arrives in a few.
pub(crate) const TERMINAL_KEY_READ_BYTES: usize = 4096;

// Bounds of `handlers/wait_for.rs`.

/// Output read per step.
pub(crate) const WAIT_FOR_READ_BYTES: usize = 64 * 1024;

// Bounds of `handlers/turns.rs`.

/// How long a `send` may wait for the process to take its input.
pub(crate) const INPUT_TIMEOUT: Duration = Duration::from_secs(10);

/// Between two presses of an interrupt key that must be pressed twice, so
/// the CLI reads two presses rather than one escape sequence.
pub(crate) const KEY_PRESS_GAP: Duration = Duration::from_millis(400);

/// Before the Enter that submits, the echo of the text must begin within
/// this long…
pub(crate) const SUBMIT_ECHO_WAIT: Duration = Duration::from_millis(1000);

/// …and then the output must be quiet this long…
pub(crate) const SUBMIT_SETTLE: Duration = Duration::from_millis(150);

/// …or this much time must have passed.
pub(crate) const SUBMIT_SETTLE_LIMIT: Duration = Duration::from_millis(1000);

// Bounds of `store/receipts.rs`.

/// The largest receipt file read: a receipt holds a short detail and an
/// executable's identity, a few KiB at most.
pub(crate) const MAX_RECEIPT_BYTES: u64 = 1024 * 1024;

// Bounds of `store/records.rs`.

/// How far ahead of the output offsets are reserved.
pub(crate) const RESERVE_STEP: u64 = 1024 * 1024;

/// The largest record a host writes: a record holds a saved screen, whose
/// formatted bytes are held to `MAX_SNAPSHOT_FORMATTED_LEN` (4 MiB, 5.4 MiB
/// in base64) whatever the program drew.
pub(crate) const MAX_RECORD_BYTES: u64 = 16 * 1024 * 1024;

/// The largest record file read at all. One over [`MAX_RECORD_BYTES`] (an
/// earlier host saved screens without a bound: 21 MB for a 1000x250 pane
/// with colours and combining marks in every cell) is read without its
/// saved screen, so that the pane is still taken back from its keeper;
/// its program redraws at the restore's resize nudge.
pub(crate) const MAX_OVERSIZED_RECORD_BYTES: u64 = 64 * 1024 * 1024;

/// The largest ring a restarted host maps from the file the last host
/// left (its capacity is the file's; the default is 4 MiB).
pub(crate) const MAX_REOPENED_RING_BYTES: usize = 1024 * 1024 * 1024;

/// The largest offset or generation a record may hold: far beyond what any
/// pane reaches (2^62 bytes of output), and far enough from `u64::MAX`
/// that adding a reservation step or one more generation cannot overflow.
pub const MAX_RECORDED_COUNT: u64 = 1 << 62;

/// The longest notify token a record may hold.
pub(crate) const MAX_RECORDED_TOKEN_LEN: usize = 128;

/// The longest runtime id a record may hold.
pub(crate) const MAX_RECORDED_RUNTIME_ID_LEN: usize = 256;

// Bounds of `pane/turn.rs`.

/// Turn signals kept for late subscribers and replays.
pub(crate) const SIGNAL_LOG_LEN: usize = 256;

// Bounds of `pane/recorder.rs`.

/// How often the saved screen is refreshed while output flows.
pub(crate) const SCREEN_SAVE_INTERVAL: Duration = Duration::from_secs(2);

/// How long output must pause before the screen is saved early.
pub(crate) const SCREEN_SAVE_SETTLE: Duration = Duration::from_millis(200);

// Bounds of `pane/screen.rs`.

/// Notifications kept between two takes; more are dropped (a flood of
/// bells means nothing more than one).
pub(crate) const MAX_PENDING_NOTICES: usize = 64;

/// Resizes a model's origin records; a pane resized more often than this
/// keeps its model awake.
pub(crate) const MAX_REPLAYED_RESIZES: usize = 256;

// Bounds of `pane/session_capture.rs`.

/// The least time between two listings of a store.
pub(crate) const SESSION_STORE_RESCAN: Duration = Duration::from_secs(10);

// Waits written where they are used, named here.

/// How long a closing connection's last frames may take to reach a client
/// that still reads.
pub(crate) const OUTBOX_CLOSE_WAIT: Duration = Duration::from_secs(1);
/// The pause after a failed `accept` (out of descriptors, say) before the
/// next: the other connections go on meanwhile.
pub(crate) const ACCEPT_RETRY_PAUSE: Duration = Duration::from_millis(50);
/// How long `ask` lets the screen model catch up with the end of the turn
/// before it reads the answer from the screen.
pub(crate) const ASK_SCREEN_CATCH_UP: Duration = Duration::from_secs(2);
/// How long a restart waits for the keeper of a pane no record names to
/// report the exit of the process it was just told to kill.
pub(crate) const UNRECORDED_EXIT_WAIT: Duration = Duration::from_secs(5);
/// How long the host waits for a keeper's greeting (with the master) once
/// connected to a pane's socket.
pub(crate) const KEEPER_GREETING_TIMEOUT: Duration = Duration::from_secs(10);
/// How often a keeper this host started is looked at to be reaped, where
/// the system gives no pidfd.
pub(crate) const KEEPER_REAP_POLL: Duration = Duration::from_secs(1);
/// How often a pane's process is looked at when its keeper is lost and the
/// system gives no pidfd.
pub(crate) const CHILD_EXIT_POLL: Duration = Duration::from_millis(100);
