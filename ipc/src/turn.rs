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
}

/// What a pane's agent is doing, as far as the host can tell. Travels as a
/// string: `idle`, `busy`, `awaiting_input`, `unknown` (nothing observed yet,
/// the process exited, or the runtime's completion is unobserved).
pub mod activity {
    /// Between turns.
    pub const IDLE: &str = "idle";
    /// In a turn.
    pub const BUSY: &str = "busy";
    /// The CLI asked the user for something (an answer, an approval).
    pub const AWAITING_INPUT: &str = "awaiting_input";
    /// Not known.
    pub const UNKNOWN: &str = "unknown";
}

/// Token and cost usage of one turn.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Usage {
    /// `measured` (the CLI reported it), `estimated`, or `unavailable` (the
    /// CLI did not say; that is not the same as zero).
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
        Usage { kind: "unavailable".into(), ..Usage::default() }
    }
}

/// What `ask` answers: one completed turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TurnReport {
    /// How the end of the turn was observed (see [`source`]).
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
