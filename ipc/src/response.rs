//! What the host sends: responses to requests, errors, and pushed events.

use crate::error::ErrorBody;
use crate::event::{Event, StreamStart};
use crate::pane::{ExitStatus, PaneId, PaneSummary, Size};
use crate::runtime::RuntimeInfo;
use crate::screen::ScreenSnapshot;
use crate::turn::TurnReport;
use serde::{Deserialize, Serialize};

/// Every frame the host sends after the handshake.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ServerMessage {
    /// The successful answer to the request with this id.
    Response {
        /// The request's id.
        id: u64,
        /// The answer.
        body: Response,
    },
    /// The failed answer to the request with this id, or (with no id) a
    /// failure no request id could be read for. After `FRAME_TOO_LARGE` the
    /// host closes the connection; after any other error it keeps serving.
    Error {
        /// The request's id, when the failure answers one.
        id: Option<u64>,
        /// What went wrong.
        error: ErrorBody,
    },
    /// A pushed event of a subscription.
    Event {
        /// The subscription id from `subscribed`.
        subscription: u64,
        /// What happened.
        event: Event,
    },
}

/// Successful answers, one per operation.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Response {
    /// Answers `start`: the new pane.
    Started(PaneSummary),
    /// Answers `send`.
    Sent {
        /// The pane.
        pane: PaneId,
        /// How many bytes were written to the terminal.
        bytes: u64,
    },
    /// Answers `interrupt`.
    Interrupted(InterruptReport),
    /// Answers `inspect`.
    Inspected(PaneDetail),
    /// Answers `events` and `reconnect`.
    Subscribed(Subscription),
    /// Answers `unsubscribe`.
    Unsubscribed {
        /// The subscription that ended.
        subscription: u64,
    },
    /// Answers `resize`.
    Resized {
        /// The pane.
        pane: PaneId,
        /// Its new size.
        size: Size,
    },
    /// Answers `list`.
    Panes {
        /// Every pane, oldest first.
        panes: Vec<PaneSummary>,
    },
    /// Answers `close`.
    Closed {
        /// The pane, now forgotten.
        pane: PaneId,
        /// How its process ended.
        status: ExitStatus,
        /// What of the pane's other processes was ended (revision 6):
        /// everything its program started, wherever it went; `None` from
        /// a host of an older revision.
        #[serde(default)]
        sweep: Option<PaneSweep>,
    },
    /// Answers `runtimes`.
    Runtimes {
        /// Every runtime the host knows.
        runtimes: Vec<RuntimeInfo>,
    },
    /// Answers `ask`: the turn that ended.
    Answered(TurnReport),
    /// Answers `notify`.
    Notified {},
    /// Answers `probe_runtime`: the receipt taken, passed or not.
    Receipt(crate::runtime::Receipt),
    /// Answers `history`.
    History(PaneHistory),
    /// Answers `watch` (revision 3): every pane now; the subscription's
    /// `pane_*` events follow on from this list.
    Watching {
        /// The subscription id the events carry.
        subscription: u64,
        /// Every pane, as `list` describes them.
        panes: Vec<PaneSummary>,
    },
    /// Answers `wait_for` (revision 3): where the pattern was found.
    Waited(crate::wait::WaitMatch),
    /// Answers `attach_terminal` (revision 4), once the host has stopped
    /// using the client's terminal.
    TerminalReleased(crate::terminal::TerminalRelease),
}

/// What an interrupt achieved (`InterruptReport.outcome`).
pub mod interrupt_outcome {
    /// The runtime's keys ended the turn.
    pub const TURN_CANCELLED: &str = "turn_cancelled";
    /// SIGINT ended it.
    pub const PROCESS_INTERRUPTED: &str = "process_interrupted";
    /// The process exited.
    pub const PROCESS_ENDED: &str = "process_ended";
    /// With `terminate`: the program in the foreground (a job of the
    /// pane's shell) ended; the pane's process runs on.
    pub const FOREGROUND_ENDED: &str = "foreground_ended";
    /// Nothing observed confirms the stop.
    pub const UNCONFIRMED: &str = "unconfirmed";
    /// The process had already exited.
    pub const NOT_RUNNING: &str = "not_running";

    /// The known values of the `InterruptOutcome` vocabulary
    /// ([`crate::vocabulary`]).
    pub const ALL: &[&str] =
        &[TURN_CANCELLED, PROCESS_INTERRUPTED, PROCESS_ENDED, FOREGROUND_ENDED, UNCONFIRMED, NOT_RUNNING];
}

/// The steps of an interrupt (`InterruptStep.action`).
pub mod interrupt_action {
    /// The runtime's interrupt keys were written.
    pub const KEYS: &str = "keys";
    /// SIGINT to the terminal's foreground process group.
    pub const SIGINT: &str = "sigint";
    /// SIGTERM.
    pub const SIGTERM: &str = "sigterm";
    /// SIGKILL.
    pub const SIGKILL: &str = "sigkill";
    /// With `terminate`: the program's other processes were ended (the
    /// answer's `sweep` says how many).
    pub const SWEEP: &str = "sweep";
    /// What confirmed the stop, or what was seen instead.
    pub const OBSERVED: &str = "observed";

    /// The known values of the `InterruptAction` vocabulary
    /// ([`crate::vocabulary`]).
    pub const ALL: &[&str] = &[KEYS, SIGINT, SIGTERM, SIGKILL, SWEEP, OBSERVED];
}

/// How a sweep told a pane's processes from others (`PaneSweep.method`).
pub mod sweep_method {
    /// The pane's own control group; nothing can leave it.
    pub const CGROUP: &str = "cgroup";
    /// Its session, its descendants, and the orphans its keeper adopted
    /// that carry the pane's token.
    pub const PROCESS_TREE: &str = "process_tree";

    /// The known values of the `SweepMethod` vocabulary
    /// ([`crate::vocabulary`]).
    pub const ALL: &[&str] = &[CGROUP, PROCESS_TREE];
}

impl Response {
    /// The answer's name on the wire (`started`, `waited`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Response::Started(_) => "started",
            Response::Sent { .. } => "sent",
            Response::Interrupted(_) => "interrupted",
            Response::Inspected(_) => "inspected",
            Response::Subscribed(_) => "subscribed",
            Response::Unsubscribed { .. } => "unsubscribed",
            Response::Resized { .. } => "resized",
            Response::Panes { .. } => "panes",
            Response::Closed { .. } => "closed",
            Response::Runtimes { .. } => "runtimes",
            Response::Answered(_) => "answered",
            Response::Notified {} => "notified",
            Response::Receipt(_) => "receipt",
            Response::History(_) => "history",
            Response::Watching { .. } => "watching",
            Response::Waited(_) => "waited",
            Response::TerminalReleased(_) => "terminal_released",
        }
    }
}

/// A pane's last lines of output, re-parsed from the bytes its ring holds.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PaneHistory {
    /// The pane.
    pub pane: PaneId,
    /// Offset of the first byte re-parsed: the oldest the ring still held.
    pub from: u64,
    /// Offset one past the last byte re-parsed.
    pub to: u64,
    /// The lines, oldest first, joined by `\n`, trailing blanks trimmed: the
    /// lines that scrolled off the top, then the screen as it stood at
    /// `to` (the alternate screen, when one is active). A line the terminal
    /// wrapped comes back as one line.
    pub text: String,
    /// True when the answer may lack older lines: the ring no longer held
    /// the pane's first output (`from` > 0), or more lines were there than
    /// were asked for.
    pub truncated: bool,
}

/// A pane with its screen, as `inspect` returns it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PaneDetail {
    /// The pane.
    pub pane: PaneSummary,
    /// The screen at `screen.offset`, which may trail `pane.offset` by the
    /// bytes the terminal model has not parsed yet.
    pub screen: ScreenSnapshot,
}

/// A new subscription and where its stream begins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Subscription {
    /// Tags every event of this subscription.
    pub subscription: u64,
    /// The pane.
    pub pane: PaneId,
    /// The pane's current generation.
    pub generation: u64,
    /// How the stream begins.
    pub start: StreamStart,
}

/// What an interrupt did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InterruptReport {
    /// The pane.
    pub pane: PaneId,
    /// `turn_cancelled` (the keys ended the turn), `process_interrupted`
    /// (SIGINT ended it), `process_ended` (the process exited),
    /// `foreground_ended` (with `terminate`: a job of the pane's shell
    /// ended, the shell runs on),
    /// `unconfirmed` (nothing observed confirms the stop; for runtimes whose
    /// completion is unobserved this is the best there is), or
    /// `not_running` (it had already exited).
    #[schemars(with = "crate::vocabulary::InterruptOutcomeSchema")]
    pub outcome: String,
    /// Each step taken, in order.
    pub steps: Vec<InterruptStep>,
    /// With `terminate` (revision 6): what of the program's other
    /// processes was ended (those that left its process group, its
    /// session or its process tree, and the pane's processes that had
    /// left the pane's tree); `None` without `terminate`, or from a host
    /// of an older revision.
    #[serde(default)]
    pub sweep: Option<PaneSweep>,
}

/// What ending the processes a pane started found and did: every one of
/// them was sent SIGTERM, then, after a bounded grace, SIGKILL, until none
/// was left or the host gave up.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PaneSweep {
    /// How the pane's processes were told from others: `cgroup` (the
    /// pane's own control group; nothing can leave it) or `process_tree`
    /// (its session, its descendants, and the orphans its keeper adopted
    /// that carry the pane's token).
    #[schemars(with = "crate::vocabulary::SweepMethodSchema")]
    pub method: String,
    /// How many processes were ended (the pane's program itself, and a
    /// program's process group the interrupt signalled, not counted).
    pub ended: u32,
    /// The pids still running when the host gave up (at most
    /// [`MAX_SWEEP_SURVIVORS`] listed); empty when nothing survived.
    pub survivors: Vec<u32>,
}

/// The most survivors a [`PaneSweep`] lists.
pub const MAX_SWEEP_SURVIVORS: usize = 64;

/// One step of an interrupt.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct InterruptStep {
    /// What was done: `keys`, `sigint`, `sigterm`, `sigkill`, `sweep`, or
    /// `observed` (what confirmed the stop) ([`interrupt_action`]).
    #[schemars(with = "crate::vocabulary::InterruptActionSchema")]
    pub action: String,
    /// Details, such as the keys written, escaped.
    pub detail: String,
    /// Milliseconds since the interrupt began.
    pub at_ms: u64,
}
