//! Events pushed on a subscription, and how a subscription's stream begins.

use crate::byte_buf::ByteBuf;
use crate::pane::{ExitStatus, PaneId, PaneSummary, Size};
use crate::screen::ScreenSnapshot;
use crate::turn::Usage;
use serde::{Deserialize, Serialize};

/// Why a subscription ended (`ended`'s `reason`). Travels as a string.
pub mod end_reason {
    /// The pane's process exited (after `exited`).
    pub const EXITED: &str = "exited";
    /// The pane was closed, or the host is going away.
    pub const CLOSED: &str = "closed";
    /// The client's `unsubscribe` ended it.
    pub const UNSUBSCRIBED: &str = "unsubscribed";

    /// Every reason: the known values of the `EndReason` vocabulary
    /// ([`crate::vocabulary`]).
    pub const ALL: &[&str] = &[EXITED, CLOSED, UNSUBSCRIBED];
}

/// The subscriptions an event travels on: a pane's stream (`events`,
/// `reconnect`) or a `watch` of every pane.
pub mod stream {
    /// A pane's stream, which `events` and `reconnect` open.
    pub const PANE: &str = "pane";
    /// A `watch` of every pane.
    pub const WATCH: &str = "watch";
}

/// Each event, in the order of [`Event`]'s variants, with the
/// subscriptions it travels on ([`stream`]). The schema states it as each
/// event variant's `x-streams`.
pub const STREAMS: &[(&str, &[&str])] = &[
    ("output", &[stream::PANE]),
    ("resync", &[stream::PANE]),
    ("resized", &[stream::PANE]),
    ("exited", &[stream::PANE]),
    ("ended", &[stream::PANE, stream::WATCH]),
    ("turn_started", &[stream::PANE]),
    ("turn_completed", &[stream::PANE]),
    ("awaiting_input", &[stream::PANE]),
    ("approval_requested", &[stream::PANE]),
    ("pane_started", &[stream::WATCH]),
    ("pane_activity", &[stream::WATCH]),
    ("pane_exited", &[stream::WATCH]),
    ("pane_ended", &[stream::WATCH]),
    ("pane_list", &[stream::WATCH]),
    ("pane_changed", &[stream::WATCH]),
];

/// How a subscription's stream begins.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum StreamStart {
    /// Output events follow from exactly `from`; nothing is skipped and
    /// nothing repeats.
    Replay {
        /// The offset of the first byte that will follow.
        from: u64,
    },
    /// The stream begins with this screen; output events follow from
    /// `snapshot.offset`.
    Snapshot {
        /// The screen at the point the stream begins.
        snapshot: ScreenSnapshot,
        /// When the client asked to resume from an offset the host no
        /// longer holds, that offset: the raw bytes from it up to
        /// `snapshot.offset` will not be delivered (the snapshot stands for
        /// them). Absent when the client asked for no offset.
        skipped_from: Option<u64>,
    },
    /// The process behind the pane was replaced since the generation the
    /// client named; the stream begins with the new generation's screen.
    GenerationChanged {
        /// The generation the client named.
        previous: u64,
        /// The new generation's screen; output follows from its offset.
        snapshot: ScreenSnapshot,
    },
}

/// Something that happened on a subscribed pane.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum Event {
    /// Output bytes. `offset` is the absolute offset of `data[0]`; each
    /// output event starts where the previous one ended.
    Output {
        /// Offset of the first byte.
        offset: u64,
        /// The bytes (base64 in JSON).
        data: ByteBuf,
    },
    /// The subscriber fell behind the pane's output ring. The bytes from
    /// `skipped_from` up to `snapshot.offset` are not delivered; the screen
    /// stands for them, and output continues at `snapshot.offset`.
    Resync {
        /// The offset the subscriber had reached.
        skipped_from: u64,
        /// The screen at the offset where output resumes.
        snapshot: ScreenSnapshot,
    },
    /// The pane's terminal was resized.
    Resized {
        /// The new size.
        size: Size,
    },
    /// The pane's process exited. Every output byte has been delivered
    /// before this event: `offset` is the pane's final end offset.
    Exited {
        /// How it ended.
        status: ExitStatus,
        /// The final end offset.
        offset: u64,
    },
    /// The subscription is over; no more events carry its id.
    Ended {
        /// `exited`, `closed` or `unsubscribed` ([`end_reason`]).
        #[schemars(with = "crate::vocabulary::EndReasonSchema")]
        reason: String,
    },
    /// A turn began: input was submitted, or the CLI said so.
    TurnStarted {
        /// The output offset when it was observed.
        offset: u64,
        /// Where the signal came from (see [`crate::turn::source`]).
        #[schemars(with = "crate::vocabulary::TurnSourceSchema")]
        source: String,
    },
    /// A turn ended.
    TurnCompleted {
        /// The output offset when it was observed.
        offset: u64,
        /// Where the signal came from (see [`crate::turn::source`]).
        #[schemars(with = "crate::vocabulary::TurnSourceSchema")]
        source: String,
        /// Usage of the turn, or `unavailable`.
        usage: Usage,
        /// The exit status of the command the turn ran (its `$?`), when
        /// the shell's integration marks reported it (revision 3).
        #[serde(default)]
        exit_code: Option<u32>,
    },
    /// The CLI waits for the user's input.
    AwaitingInput {
        /// The output offset when it was observed.
        offset: u64,
        /// Where the signal came from (see [`crate::turn::source`]).
        #[schemars(with = "crate::vocabulary::TurnSourceSchema")]
        source: String,
        /// What the CLI said, when it said something.
        detail: String,
    },
    /// The CLI asks the user to approve an action.
    ApprovalRequested {
        /// The output offset when it was observed.
        offset: u64,
        /// Where the signal came from (see [`crate::turn::source`]).
        #[schemars(with = "crate::vocabulary::TurnSourceSchema")]
        source: String,
        /// What the CLI said, when it said something.
        detail: String,
    },
    /// On a `watch` subscription (revision 3): a pane came to the host (a
    /// `start` or `login`). Panes restored after a restart are in the
    /// list `watching` answers with.
    PaneStarted {
        /// The pane, as `list` describes it.
        pane: PaneSummary,
    },
    /// On a `watch` subscription: a pane's activity changed (see
    /// [`crate::turn::activity`]).
    PaneActivity {
        /// The pane.
        pane: PaneId,
        /// Its activity now.
        #[schemars(with = "crate::vocabulary::ActivitySchema")]
        activity: String,
    },
    /// On a `watch` subscription: a pane's process exited; the pane stays,
    /// with its output and screen, until it is closed.
    PaneExited {
        /// The pane.
        pane: PaneId,
        /// How the process ended.
        status: ExitStatus,
    },
    /// On a `watch` subscription: a pane left the host (`closed`; or
    /// `ended when the host restarted: ...`).
    PaneEnded {
        /// The pane.
        pane: PaneId,
        /// Why, as `UNKNOWN_PANE` would later say it.
        reason: String,
    },
    /// On a `watch` subscription: the subscriber fell behind and events
    /// were dropped for it; this is every pane now, and events follow on
    /// from it.
    PaneList {
        /// Every pane, as `list` describes them.
        panes: Vec<PaneSummary>,
        /// How many events were dropped.
        missed: u64,
    },
    /// On a `watch` subscription (revision 8): a pane's size or window
    /// title changed; both are stated as they are now.
    PaneChanged {
        /// The pane.
        pane: PaneId,
        /// Its terminal's size now.
        size: Size,
        /// Its window title now (as `list` shows it; empty when the
        /// program set none).
        title: String,
    },
}

impl Event {
    /// The event's name on the wire (`output`, `pane_started`, ...).
    pub fn name(&self) -> &'static str {
        match self {
            Event::Output { .. } => "output",
            Event::Resync { .. } => "resync",
            Event::Resized { .. } => "resized",
            Event::Exited { .. } => "exited",
            Event::Ended { .. } => "ended",
            Event::TurnStarted { .. } => "turn_started",
            Event::TurnCompleted { .. } => "turn_completed",
            Event::AwaitingInput { .. } => "awaiting_input",
            Event::ApprovalRequested { .. } => "approval_requested",
            Event::PaneStarted { .. } => "pane_started",
            Event::PaneActivity { .. } => "pane_activity",
            Event::PaneExited { .. } => "pane_exited",
            Event::PaneEnded { .. } => "pane_ended",
            Event::PaneList { .. } => "pane_list",
            Event::PaneChanged { .. } => "pane_changed",
        }
    }

    /// Whether this event travels on subscriptions of kind `stream`
    /// ([`STREAMS`]).
    pub fn travels_on(&self, stream: &str) -> bool {
        let name = self.name();
        STREAMS.iter().any(|(event, streams)| *event == name && streams.contains(&stream))
    }
}
