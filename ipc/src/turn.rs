//! Turns: what the host observed of an agent's work cycle.

use serde::{Deserialize, Serialize};

/// Where a turn signal came from. Travels as a string:
/// `hook` (the CLI's own hooks, pointed at the host), `notify_program` (the
/// CLI's notify program), `terminal_notification` (OSC 9, OSC 777 or BEL in
/// the output), `heuristic` (the screen stayed still after input; a guess,
/// labelled as one), `input` (the host itself submitted the input that
/// started the turn), `restored` (a turn open when the last host stopped,
/// opened again by the host that took the pane back), `shell_integration`
/// (the prompt marks of a shell the host set up: the end of a command, with
/// its exit status).
pub mod source {
    /// The CLI's own hooks.
    pub const HOOK: &str = "hook";
    /// The CLI's notify program.
    pub const NOTIFY_PROGRAM: &str = "notify_program";
    /// A terminal notification in the output.
    pub const TERMINAL_NOTIFICATION: &str = "terminal_notification";
    /// A screen-stability heuristic.
    pub const HEURISTIC: &str = "heuristic";
    /// Input the host submitted.
    pub const INPUT: &str = "input";
    /// A turn that was open when the host before this one stopped, opened
    /// again by this host (its end comes as usual).
    pub const RESTORED: &str = "restored";
    /// The shell's prompt marks (OSC 133) the host set up for it.
    pub const SHELL_INTEGRATION: &str = "shell_integration";

    /// Every source: the known values of the `TurnSource` vocabulary
    /// ([`crate::vocabulary`]).
    pub const ALL: &[&str] =
        &[HOOK, NOTIFY_PROGRAM, TERMINAL_NOTIFICATION, HEURISTIC, INPUT, RESTORED, SHELL_INTEGRATION];
}

/// How the end of a turn is observed for a pane (`PaneSummary.completion`)
/// or a runtime (`RuntimeInfo.completion`): the strongest signal the host
/// uses. Travels as a string.
pub mod completion {
    /// The CLI's own hooks, pointed at the host.
    pub const HOOK: &str = "hook";
    /// The CLI's notify program, pointed at the host.
    pub const NOTIFY_PROGRAM: &str = "notify_program";
    /// Terminal notifications in the output (OSC 9, OSC 777, BEL).
    pub const TERMINAL_NOTIFICATION: &str = "terminal_notification";
    /// A screen-stability heuristic: a guess.
    pub const SCREEN_HEURISTIC: &str = "screen_heuristic";
    /// Nothing: the host cannot tell when a turn ends.
    pub const UNOBSERVED: &str = "unobserved";
    /// The prompt marks (OSC 133) of a shell the host set up: the end of
    /// each command, with its exit status.
    pub const SHELL_INTEGRATION: &str = "shell_integration";

    /// Every signal: the known values of the `CompletionSource` vocabulary
    /// ([`crate::vocabulary`]).
    pub const ALL: &[&str] =
        &[HOOK, NOTIFY_PROGRAM, TERMINAL_NOTIFICATION, SCREEN_HEURISTIC, UNOBSERVED, SHELL_INTEGRATION];
}

/// How a turn's [`Usage`] is known. Travels as a string.
pub mod usage_kind {
    /// The CLI reported it.
    pub const MEASURED: &str = "measured";
    /// Estimated.
    pub const ESTIMATED: &str = "estimated";
    /// The CLI did not say; that is not the same as zero.
    pub const UNAVAILABLE: &str = "unavailable";

    /// Every kind: the known values of the `UsageKind` vocabulary
    /// ([`crate::vocabulary`]).
    pub const ALL: &[&str] = &[MEASURED, ESTIMATED, UNAVAILABLE];
}

/// What a pane's agent is doing, as far as the host can tell. Travels as a
/// string: `idle`, `busy`, `awaiting_input`, `awaiting_approval`, `unknown`
/// (nothing observed yet, the process exited, or the runtime's completion
/// is unobserved). An open vocabulary: a client treats a value it does not
/// know as `unknown`.
pub mod activity {
    /// Between turns.
    pub const IDLE: &str = "idle";
    /// In a turn.
    pub const BUSY: &str = "busy";
    /// The CLI asked the user for something other than an approval (an
    /// answer, or only their attention).
    pub const AWAITING_INPUT: &str = "awaiting_input";
    /// The CLI asked the user to approve an action (running a command,
    /// editing a file): its last notification was an `approval_requested`.
    pub const AWAITING_APPROVAL: &str = "awaiting_approval";
    /// Not known.
    pub const UNKNOWN: &str = "unknown";

    /// Every activity: the known values of the `Activity` vocabulary
    /// ([`crate::vocabulary`]).
    pub const ALL: &[&str] = &[IDLE, BUSY, AWAITING_INPUT, AWAITING_APPROVAL, UNKNOWN];
}

/// Token and cost usage of one turn.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Usage {
    /// `measured` (the CLI reported it), `estimated`, or `unavailable` (the
    /// CLI did not say; that is not the same as zero).
    #[schemars(with = "crate::vocabulary::UsageKindSchema")]
    pub kind: String,
    /// Input tokens, when known.
    #[serde(default)]
    pub input_tokens: Option<u64>,
    /// Output tokens, when known.
    #[serde(default)]
    pub output_tokens: Option<u64>,
    /// Cost in millionths of a US dollar, when known.
    #[serde(default)]
    pub cost_micro_usd: Option<u64>,
}

impl Usage {
    /// Usage the CLI did not report.
    pub fn unavailable() -> Usage {
        Usage { kind: usage_kind::UNAVAILABLE.into(), ..Usage::default() }
    }
}

/// What `ask` answers: one completed turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TurnReport {
    /// How the end of the turn was observed (see [`source`]).
    #[schemars(with = "crate::vocabulary::TurnSourceSchema")]
    pub source: String,
    /// The output offset when the input was submitted.
    pub started_offset: u64,
    /// The output offset when the end was observed.
    pub completed_offset: u64,
    /// Milliseconds from submitting the input to observing the end.
    pub duration_ms: u64,
    /// What the turn put on the screen, as lines: for a turn a shell's
    /// prompt marks ended, the command line and every line the command
    /// printed (its last lines, within bounds); otherwise the lines on the
    /// screen after the turn that were not on it before, in screen order.
    pub added_text: String,
    /// Usage, or `unavailable`.
    pub usage: Usage,
    /// The exit status of the command the turn ran (its `$?`), when the
    /// shell's integration marks reported it (revision 3).
    #[serde(default)]
    pub exit_code: Option<u32>,
}
