//! Requests: what a client asks of the host.
//!
//! Each request is one variant of [`Request`], wrapped in a [`RequestFrame`]
//! that carries the client's id for it. In JSON a frame reads
//! `{"id": 7, "request": {"inspect": {"pane": "p1"}}}`. Every variant is a
//! struct (possibly empty), so every operation has the same shape. Fields
//! marked `default` may be left out in JSON.

use crate::byte_buf::ByteBuf;
use crate::client_env::ClientEnv;
use crate::labels::Labels;
use crate::pane::{PaneId, Size};
use serde::{Deserialize, Serialize};

/// A request and the id the client chose for it. The host echoes the id in
/// the response or error that answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequestFrame {
    /// Chosen by the client; unique among its requests in flight.
    pub id: u64,
    /// What is asked.
    pub request: Request,
}

/// Every operation a client can ask for.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Request {
    /// Start a new pane running a runtime. Answered by `started`.
    Start(StartParams),
    /// Write input to a pane. Answered by `sent`.
    Send(SendParams),
    /// Interrupt what the pane's process is doing: the runtime's keys at
    /// once, then, unless the end of the turn confirms it, SIGINT to the
    /// terminal's foreground process group, and with `terminate` SIGTERM
    /// and SIGKILL after bounded waits. Answered by `interrupted`.
    Interrupt {
        /// The pane.
        pane: PaneId,
        /// Escalate to SIGTERM and SIGKILL when SIGINT is not confirmed.
        #[serde(default)]
        terminate: bool,
    },
    /// Describe a pane with its current screen. Answered by `inspected`.
    Inspect {
        /// The pane.
        pane: PaneId,
    },
    /// Subscribe to a pane's output and lifecycle events. Answered by
    /// `subscribed`; events follow, tagged with the subscription id.
    Events {
        /// The pane.
        pane: PaneId,
        /// Resume after this many bytes of output (an absolute offset).
        /// When absent, the stream starts at the current screen.
        #[serde(default)]
        from: Option<u64>,
    },
    /// Resume a subscription after a lost connection: the client names the
    /// generation it saw and the offset up to which it processed output.
    /// Answered by `subscribed`, whose `start` says how the gap was handled.
    Reconnect {
        /// The pane.
        pane: PaneId,
        /// The generation the client last saw.
        generation: u64,
        /// The offset up to which the client processed output.
        offset: u64,
    },
    /// End a subscription on this connection. Answered by `unsubscribed`.
    Unsubscribe {
        /// The subscription id from `subscribed`.
        subscription: u64,
    },
    /// Change a pane's terminal size. Answered by `resized`.
    Resize {
        /// The pane.
        pane: PaneId,
        /// The new size; both dimensions at least 1.
        size: Size,
    },
    /// List every pane, oldest first. Answered by `panes`.
    List {
        /// Only the panes carrying every one of these labels with the same
        /// value (revision 3); every pane when empty.
        #[serde(default)]
        labels: Labels,
    },
    /// End a pane's process group, reap it and forget the pane. Answered by
    /// `closed`.
    Close {
        /// The pane.
        pane: PaneId,
    },
    /// Describe the runtimes this host can start. Answered by `runtimes`.
    Runtimes {},
    /// Open a pane running the runtime's own interactive sign-in. Answered
    /// by `started`; a runtime that signs in elsewhere answers
    /// `OPERATION_UNSUPPORTED` with `LOGIN_NOT_IN_TERMINAL`, one that needs
    /// no sign-in `LOGIN_NOT_REQUIRED`.
    Login {
        /// The runtime id.
        runtime: String,
        /// The working directory; the host's home directory when absent.
        #[serde(default)]
        cwd: Option<String>,
        /// The terminal size; 80x24 when absent.
        #[serde(default)]
        size: Option<Size>,
    },
    /// Submit input as a turn and wait for the turn to end. Answered by
    /// `answered`, or `TURN_TIMEOUT` saying what was observed.
    Ask {
        /// The pane.
        pane: PaneId,
        /// The prompt; submitted as `send` with `enter` does.
        text: String,
        /// How long to wait for the end of the turn (default 10 minutes).
        #[serde(default)]
        timeout_ms: Option<u64>,
    },
    /// Report a turn signal from inside a pane (the CLI's hook or notify
    /// program, through `panehost notify`). Answered by `notified`.
    Notify {
        /// The pane, from `PANEHOST_PANE`.
        pane: PaneId,
        /// The pane's notify token, from `PANEHOST_NOTIFY_TOKEN`.
        token: String,
        /// `turn_started`, `turn_completed`, `notification` (the host reads
        /// the payload to tell awaiting input from an approval request).
        #[schemars(with = "crate::vocabulary::NotifyEventSchema")]
        event: String,
        /// What the hook received (usually JSON), passed on as text.
        #[serde(default)]
        payload: String,
    },
    /// Take a completion receipt: run the runtime's one-shot mode inside
    /// the read-only boundary, in a scratch directory, asking for one JSON
    /// object carrying a fresh random value. Answered by `receipt` (passed
    /// or not); a runtime with no one-shot mode answers
    /// `OPERATION_UNSUPPORTED` with `RECEIPT_UNAVAILABLE`.
    ProbeRuntime {
        /// The runtime id.
        runtime: String,
        /// The model to ask, when the runtime takes one.
        #[serde(default)]
        model: Option<String>,
        /// Run without the read-only boundary when the runtime cannot
        /// enforce it, rather than refuse.
        #[serde(default)]
        accept_weaker_boundary: bool,
    },
    /// The pane's last lines of output as text: what scrolled off the top
    /// of its screen, then the screen. The host keeps no parsed
    /// scrollback; it re-parses the output its ring still holds. Answered
    /// by `history`.
    History {
        /// The pane.
        pane: PaneId,
        /// How many lines from above the screen, at most; 1,000 when
        /// absent. Wide panes may get fewer (the re-parse is bounded in
        /// memory).
        #[serde(default)]
        lines: Option<u32>,
    },
    /// Follow every pane of the host (revision 3): answered by `watching`
    /// with every pane now, then `pane_started`, `pane_activity`,
    /// `pane_changed` (revision 8), `pane_exited` and `pane_ended` events
    /// as they happen, on a
    /// subscription that `unsubscribe` ends. Each event states a pane's
    /// new state and may repeat what the list showed.
    Watch {},
    /// Wait until a pane's screen, or its output, matches a pattern
    /// (revision 3). Answered by `waited`, or `WAIT_TIMEOUT`, or
    /// `PANE_EXITED` when the process ended first.
    WaitFor(crate::wait::WaitForParams),
    /// Drive the client's own terminal (revision 4; local connections
    /// only): the request's frame carries the terminal's descriptors
    /// (`SCM_RIGHTS`: the terminal to read keys from, then the one to
    /// write to, or one for both). The host draws the pane's screen on it,
    /// writes the pane's output to it and the keys read from it to the
    /// pane, as `tmux attach` does, until the detach key, the pane's end,
    /// or the end of the client's requests (it closed its sending side, or
    /// the connection). The client sets the terminal's modes (raw) before,
    /// and restores them after the answer, `terminal_released`, which comes
    /// once the host has stopped using the terminal. Without a terminal
    /// descriptor it fails with `NO_TERMINAL`.
    AttachTerminal {
        /// The pane.
        pane: PaneId,
        /// The byte that detaches (Ctrl-\ is 28): the keys before it in
        /// the same read reach the pane, it and the rest do not.
        detach_key: u8,
    },
}

/// Each operation, in the order of [`Request`]'s variants, with the
/// [`crate::Response`] variant that answers it when it succeeds (a failure
/// is an `error` message). The schema states it as each request variant's
/// `x-answer`.
pub const ANSWERS: &[(&str, &str)] = &[
    ("start", "started"),
    ("send", "sent"),
    ("interrupt", "interrupted"),
    ("inspect", "inspected"),
    ("events", "subscribed"),
    ("reconnect", "subscribed"),
    ("unsubscribe", "unsubscribed"),
    ("resize", "resized"),
    ("list", "panes"),
    ("close", "closed"),
    ("runtimes", "runtimes"),
    ("login", "started"),
    ("ask", "answered"),
    ("notify", "notified"),
    ("probe_runtime", "receipt"),
    ("history", "history"),
    ("watch", "watching"),
    ("wait_for", "waited"),
    ("attach_terminal", "terminal_released"),
];

impl Request {
    /// The operation's name on the wire (`start`, `wait_for`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Request::Start(_) => "start",
            Request::Send(_) => "send",
            Request::Interrupt { .. } => "interrupt",
            Request::Inspect { .. } => "inspect",
            Request::Events { .. } => "events",
            Request::Reconnect { .. } => "reconnect",
            Request::Unsubscribe { .. } => "unsubscribe",
            Request::Resize { .. } => "resize",
            Request::List { .. } => "list",
            Request::Close { .. } => "close",
            Request::Runtimes {} => "runtimes",
            Request::Login { .. } => "login",
            Request::Ask { .. } => "ask",
            Request::Notify { .. } => "notify",
            Request::ProbeRuntime { .. } => "probe_runtime",
            Request::History { .. } => "history",
            Request::Watch {} => "watch",
            Request::WaitFor(_) => "wait_for",
            Request::AttachTerminal { .. } => "attach_terminal",
        }
    }

    /// The name of the [`crate::Response`] variant that answers this
    /// request when it succeeds ([`ANSWERS`]).
    pub fn answer(&self) -> &'static str {
        let name = self.name();
        ANSWERS.iter().find(|(request, _)| *request == name).map_or("", |(_, answer)| answer)
    }
}

/// The turn signals a pane's hook reports through `notify` (its `event`).
pub mod notify_event {
    /// A turn began.
    pub const TURN_STARTED: &str = "turn_started";
    /// A turn ended.
    pub const TURN_COMPLETED: &str = "turn_completed";
    /// The CLI notified its user: the host reads the payload to tell
    /// awaiting input from an approval request.
    pub const NOTIFICATION: &str = "notification";

    /// The known values of the `NotifyEvent` vocabulary
    /// ([`crate::vocabulary`]).
    pub const ALL: &[&str] = &[TURN_STARTED, TURN_COMPLETED, NOTIFICATION];
}

/// Parameters of `start`.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct StartParams {
    /// The runtime id, such as `shell`.
    pub runtime: String,
    /// The working directory; the host's home directory when absent.
    #[serde(default)]
    pub cwd: Option<String>,
    /// The terminal size; 80x24 when absent.
    #[serde(default)]
    pub size: Option<Size>,
    /// For `shell` only: a command (program and arguments) to run instead
    /// of the interactive shell. Other runtimes refuse it: the host builds
    /// their argv itself.
    #[serde(default)]
    pub command: Vec<String>,
    /// The model, for runtimes that take one.
    #[serde(default)]
    pub model: Option<String>,
    /// Resume an earlier session of the runtime instead of starting fresh.
    #[serde(default)]
    pub resume: Option<ResumeRequest>,
    /// Close the pane (as `close` does) once it has run this long, in
    /// milliseconds.
    #[serde(default)]
    pub max_wall_ms: Option<u64>,
    /// The permission profile the runtime must enforce: `read_only`,
    /// `workspace_write` or `full_access`. When absent, the host's default
    /// applies (revision 7): `workspace_write` on a runtime that enforces
    /// it (`RuntimeInfo.default_permission_profile`); on one that does not,
    /// the CLI runs with its own defaults and the user's configuration.
    #[serde(default)]
    #[schemars(with = "Option<crate::vocabulary::PermissionProfileSchema>")]
    pub permission_profile: Option<String>,
    /// Start even when the runtime cannot enforce `permission_profile`
    /// (the host logs it); otherwise such a start is refused with
    /// `OPERATION_UNSUPPORTED` naming `PERMISSION_PROFILE_UNENFORCED`.
    #[serde(default)]
    pub accept_weaker_boundary: bool,
    /// Refuse the start with `RUNTIME_NOT_READY` unless the runtime is
    /// ready (or reduced) as `runtimes` reports it: supported, installed,
    /// its version not below the floor, signed in where that can be seen,
    /// and a completion receipt for this executable under 24 hours old.
    #[serde(default)]
    pub require_ready: bool,
    /// For `shell` with a `command` (revision 2): run the command again
    /// when a host restart finds its keeper gone (after a reboot, say).
    /// Without it such a pane is not restored, and ends with a reason: a
    /// one-shot command is not run twice unasked. Other runtimes resume
    /// their session natively and ignore it.
    #[serde(default)]
    pub rerun_after_host_loss: bool,
    /// Client labels (revision 3): names and values the client chooses
    /// (an owner, a task id), returned wherever the pane is described and
    /// matched by `list`. Bounded as [`crate::labels`] says.
    #[serde(default)]
    pub labels: Labels,
    /// Environment variables for the pane's process (revision 3), over
    /// what the host sets: for `shell` and runtimes from the configuration
    /// file only; agent runtimes refuse them (their environment is built
    /// from scratch). Bounded as [`crate::client_env`] says.
    #[serde(default)]
    pub env: ClientEnv,
    /// Start even when the installed version is one the runtime's adapter
    /// refuses (revision 7; `runtimes` shows it in `version_refused`, with
    /// the reason); otherwise such a start is refused with
    /// `OPERATION_UNSUPPORTED` naming `VERSION_REFUSED`. The host logs it.
    #[serde(default)]
    pub allow_refused_version: bool,
}

/// Which earlier session a start should resume.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ResumeRequest {
    /// Exactly this session reference, as the runtime recorded it.
    Reference(String),
    /// Whatever the runtime considers its latest session.
    Latest,
}

/// Parameters of `send`. Without `enter`, the bytes written are `text`
/// then `bytes`. With `enter` the input submits: `text` goes as a bracketed
/// paste when the program enabled bracketed paste, then `bytes`, then a
/// carriage return as its own write, and a turn starts.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SendParams {
    /// The pane.
    pub pane: PaneId,
    /// UTF-8 text to type.
    #[serde(default)]
    pub text: String,
    /// Raw bytes to write (base64 in JSON), for keys and control sequences.
    #[serde(default)]
    pub bytes: ByteBuf,
    /// Press Enter (a carriage return) after the input.
    #[serde(default)]
    pub enter: bool,
}

impl SendParams {
    /// `text`, `bytes` and (with `enter`) a carriage return, unwrapped: what
    /// a `send` writes when no bracketed paste applies.
    pub fn input_bytes(&self) -> Vec<u8> {
        let mut input = Vec::with_capacity(self.text.len() + self.bytes.len() + 1);
        input.extend_from_slice(self.text.as_bytes());
        input.extend_from_slice(self.bytes.as_slice());
        if self.enter {
            input.push(b'\r');
        }
        input
    }
}
