//! The turn tracker: what a pane's agent is doing, from the signals the
//! host can observe, each labelled with where it came from.
//!
//! Which signals end a turn depends on how the runtime's completion is
//! observed: hooks and notify programs report through `notify`; terminal
//! notifications (OSC 9, OSC 777, BEL) are read from the output; the screen
//! heuristic fires when the output stays quiet after input. Signals that a
//! runtime's completion does not rely on are ignored, so a stray bell in a
//! hook-driven CLI does not end its turn. A hook's end of a turn is only
//! counted when it is the pane's conversation's (see `conversation.rs`), and
//! is recorded once the output after it has settled: some CLIs run their
//! hooks before they draw the answer.

use super::conversation::Conversation;
use crate::limits;
use panehost_adapters::completion::HookInjection;
use panehost_adapters::notify_payload::{notification, reported_turn, usage, Notification};
use panehost_adapters::CompletionSignal;
use panehost_ipc::turn::{activity, source};
use panehost_ipc::{Event, Usage};
use std::collections::VecDeque;

/// A terminal notification seen in the output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TerminalNotice {
    /// `OSC 9 ; text`.
    Osc9(String),
    /// `OSC 777 ; notify ; title ; body`.
    Osc777(String),
    /// A bell.
    Bell,
    /// `OSC 133 ; C`: the shell runs a command.
    CommandStarted,
    /// `OSC 133 ; D [; status]`: the shell's command ended.
    CommandFinished(Option<u32>),
    /// `OSC 133 ; B`: the shell's prompt is drawn (the mark ends it), and
    /// its line editor reads.
    PromptShown,
    /// `OSC 133 ; A ; input_waiting=1`: the shell starts its prompt with a
    /// whole line already waiting in the terminal (typed while the last
    /// command ran, and not read by it), which its line editor reads at
    /// once: a command typed ahead is about to run.
    InputWaiting,
}

/// One recorded signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnSignal {
    /// Its position in the pane's sequence of signals.
    pub seq: u64,
    /// The output offset it belongs at.
    pub offset: u64,
    /// The event subscribers receive.
    pub event: Event,
}

/// A turn in progress.
#[derive(Debug, Clone)]
struct OpenTurn {
    /// Where it started.
    offset: u64,
    /// Whether the host's input opened it (it started where the output
    /// had got to when the input was written, so a signal in output read
    /// before that is not its own).
    by_input: bool,
    /// Whether the command it runs has started: a shell with prompt marks
    /// has drawn its `C` mark since (a turn the input did not open is
    /// taken to run already).
    command_started: bool,
}

impl OpenTurn {
    /// Whether a signal in output parsed up to `offset` may be this
    /// turn's: not when all of that output was read before input that
    /// opened the turn was written.
    fn may_end_at(&self, offset: u64) -> bool {
        !self.by_input || offset > self.offset
    }
}

/// What a hook's report asks of the pane.
#[derive(Debug)]
pub(super) enum Reported {
    /// A signal to publish now, or nothing.
    Now(Option<TurnSignal>),
    /// The end of a turn, to record with [`TurnTracker::end_reported`]
    /// once the output after the report has settled.
    EndPending(PendingEnd),
}

/// The end of a turn a hook reported, not yet recorded.
#[derive(Debug)]
pub(super) struct PendingEnd {
    source: &'static str,
    usage: Usage,
}

/// The state of one pane's turns.
#[derive(Debug)]
pub(super) struct TurnTracker {
    completion: CompletionSignal,
    hooks: Option<HookInjection>,
    conversation: Conversation,
    activity: &'static str,
    open: Option<OpenTurn>,
    log: VecDeque<TurnSignal>,
    next_seq: u64,
    /// A terminal notification's end waits for the output to settle: one
    /// at a time, so a storm of bells costs one wait, not one each.
    notice_end_pending: bool,
    /// Whether the program is ready to read a submission (see
    /// [`TurnTracker::ready_for_input`]).
    ready: bool,
    /// Where a shell with prompt marks last drew its prompt (its last
    /// `OSC 133 ; D`), whether or not that ended a turn.
    prompt_drawn_at: Option<u64>,
    /// The process exited: the activity is `unknown` for good, whatever
    /// the output parsed after the exit shows (a prompt it drew before).
    exited: bool,
}

impl TurnTracker {
    /// A tracker for a runtime whose completion is observed through
    /// `completion`, with hooks injected by `hooks` (whose payloads are
    /// read accordingly).
    pub(super) fn new(completion: CompletionSignal, hooks: Option<HookInjection>) -> Self {
        TurnTracker {
            completion,
            hooks,
            conversation: Conversation::default(),
            activity: activity::UNKNOWN,
            open: None,
            log: VecDeque::new(),
            next_seq: 0,
            notice_end_pending: false,
            ready: completion != CompletionSignal::ShellIntegration,
            prompt_drawn_at: None,
            exited: false,
        }
    }

    /// Whether the program is ready to read a submission, as far as its
    /// completion signal tells: a shell with prompt marks once it has drawn
    /// its first prompt (its first `OSC 133 ; D`); every other program from
    /// the start (a runtime that loses what is typed before it reads says
    /// so in its descriptor, and the handlers wait for its output instead).
    /// Text submitted before would be typed ahead of the first prompt,
    /// whose mark would then end the turn it opened.
    pub(super) fn ready_for_input(&self) -> bool {
        self.ready
    }

    /// The pane was taken back from its keeper after a host restart: a
    /// pane that was between turns (`recorded` activity `idle`) or
    /// waiting for its user (`awaiting_input`, `awaiting_approval`) still
    /// is, and a shell whose record knew of its
    /// prompt drew it long ago (no new one comes until a command ends). A
    /// shell whose record is still `unknown` may be reading its startup
    /// file yet (a host killed right after the start): it is ready once a
    /// prompt mark comes, here or in the output caught up on
    /// ([`caught_up`](Self::caught_up)). A record with no activity (an
    /// earlier host's) is taken to have known its prompt. A turn that was
    /// open is opened again by [`reopen`](Self::reopen).
    pub(super) fn taken_back(&mut self, recorded: Option<&str>) {
        let knew_a_prompt = recorded != Some(activity::UNKNOWN);
        self.ready = self.completion != CompletionSignal::ShellIntegration || knew_a_prompt;
        if self.completion != CompletionSignal::Unobserved {
            self.activity = match recorded {
                Some(activity::IDLE) => activity::IDLE,
                Some(activity::AWAITING_INPUT) => activity::AWAITING_INPUT,
                Some(activity::AWAITING_APPROVAL) => activity::AWAITING_APPROVAL,
                _ => activity::UNKNOWN,
            };
        }
    }

    /// How completion is observed.
    pub(super) fn completion(&self) -> CompletionSignal {
        self.completion
    }

    /// `idle`, `busy`, `awaiting_input`, `awaiting_approval` or `unknown`.
    pub(super) fn activity(&self) -> &'static str {
        if self.exited {
            return activity::UNKNOWN;
        }
        self.activity
    }

    /// True while a turn is open.
    pub(super) fn busy(&self) -> bool {
        self.open.is_some()
    }

    /// The sequence number the next signal will have.
    pub(super) fn next_seq(&self) -> u64 {
        self.next_seq
    }

    /// True while a shell with prompt marks has not started the command
    /// the host's input opened the open turn with (no `C` mark since).
    pub(super) fn awaits_its_command(&self) -> bool {
        self.completion == CompletionSignal::ShellIntegration
            && self.open.as_ref().is_some_and(|turn| turn.by_input && !turn.command_started)
    }

    /// The open turn, for the pane's record: where it started, and what the
    /// host submitted for it (if that is still waiting for its end).
    pub(super) fn open_turn(&self) -> Option<(u64, Option<String>)> {
        self.open.as_ref().map(|turn| (turn.offset, self.conversation.pending_submission()))
    }

    /// A restarted host took back a pane whose turn was open: it is open
    /// again from `offset` (source `restored`), and the runtime's own
    /// signal ends it as usual. A pane whose agent was waiting for its
    /// user inside that turn (an approval asked mid-turn, as agents ask)
    /// still is: its activity stays what [`taken_back`](Self::taken_back)
    /// restored, not `busy`. Nothing happens where completion is
    /// unobserved.
    pub(super) fn reopen(&mut self, offset: u64, submitted: &str) -> Option<TurnSignal> {
        if self.completion == CompletionSignal::Unobserved || self.open.is_some() {
            return None;
        }
        self.conversation.submitted(submitted);
        let waiting = matches!(self.activity, activity::AWAITING_INPUT | activity::AWAITING_APPROVAL);
        let was = self.activity;
        let signal = self.start(offset, source::RESTORED);
        if waiting {
            self.activity = was;
        }
        signal
    }

    /// A pane taken back after a restart, whose ring held output after the
    /// saved screen with these `notices` in it, at offsets up to `offset`
    /// (where this host's output begins): the last host may have died
    /// before it acted on them, or before it saved what it did. For a
    /// shell with prompt marks the last mark says how things stand now: a
    /// command's end (`D`) means the shell is at its prompt (a turn open in
    /// the record ends with that status); a command's start (`C`), or a
    /// prompt begun with a line waiting (`A ; input_waiting=1`), means one
    /// runs or is about to (a turn is open). Other notices are left alone: which turn a
    /// notification belonged to cannot be told after the fact.
    pub(super) fn caught_up(&mut self, notices: &[TerminalNotice], offset: u64) -> Option<TurnSignal> {
        if self.completion != CompletionSignal::ShellIntegration {
            return None;
        }
        if notices.iter().any(|notice| matches!(notice, TerminalNotice::CommandFinished(_))) {
            // The shell has drawn a prompt.
            self.ready = true;
        }
        let last = notices.iter().rev().find(|notice| {
            matches!(
                notice,
                TerminalNotice::CommandStarted | TerminalNotice::CommandFinished(_) | TerminalNotice::InputWaiting
            )
        })?;
        match last {
            TerminalNotice::CommandFinished(status) => {
                if self.open.is_some() {
                    return self.complete_with(offset, source::SHELL_INTEGRATION, Usage::unavailable(), *status);
                }
                self.activity = activity::IDLE;
                None
            }
            _ if self.open.is_none() => self.start(offset, source::RESTORED),
            _ => None,
        }
    }

    /// The host submitted input (`text`, empty when only keys), its Enter
    /// written when the output had reached `offset`: a turn starts (unless
    /// one is open; an answer to a question the CLI asked resumes the open
    /// one). A turn the program started in output after `offset` was the
    /// submission's own, told before this (a quick command's `C` and `D`
    /// marks may be parsed before the host records its submission): no
    /// second turn opens, which nothing would ever end. Likewise for a
    /// shell with prompt marks that drew its prompt in output after
    /// `offset`: the submission went to the command that ended there (an
    /// answer to its `read`), or was an empty line (a prompt and no
    /// command), or waits typed ahead of that prompt, where the shell's
    /// own start mark opens its command's turn. Where completion is
    /// unobserved the start is reported, but nothing will ever end the
    /// turn, so the activity stays `unknown`.
    pub(super) fn input_submitted(&mut self, offset: u64, text: &str) -> Option<TurnSignal> {
        self.conversation.submitted(text);
        if self.open.is_some() {
            self.activity = activity::BUSY;
            return None;
        }
        if self.completion != CompletionSignal::Unobserved && self.started_after(offset) {
            return None;
        }
        if self.completion == CompletionSignal::ShellIntegration && self.prompt_drawn_at.is_some_and(|at| at > offset) {
            return None;
        }
        if self.completion == CompletionSignal::Unobserved {
            return Some(self.record(offset, Event::TurnStarted { offset, source: source::INPUT.to_owned() }));
        }
        self.start(offset, source::INPUT)
    }

    /// A hook or notify program reported `event` (`turn_started`,
    /// `turn_completed` or `notification`) with its payload.
    pub(super) fn reported(&mut self, event: &str, payload: &str, offset: u64) -> Reported {
        let from = match self.completion {
            CompletionSignal::NotifyProgram => source::NOTIFY_PROGRAM,
            CompletionSignal::Hook => source::HOOK,
            // This pane's runtime was launched without hooks.
            _ => return Reported::Now(None),
        };
        let signal = match event {
            "turn_started" if self.open.is_none() => self.start(offset, from),
            "turn_started" => None,
            "turn_completed" => {
                if !self.conversation.admits_end(&reported_turn(self.hooks, payload)) {
                    tracing::debug!(payload = %payload.chars().take(200).collect::<String>(), "not the conversation's turn; ignored");
                    return Reported::Now(None);
                }
                return Reported::EndPending(PendingEnd { source: from, usage: usage(payload) });
            }
            "notification" => {
                let Notification { detail, asks_approval } = notification(payload);
                let event = if asks_approval {
                    self.activity = activity::AWAITING_APPROVAL;
                    Event::ApprovalRequested { offset, source: from.to_owned(), detail }
                } else {
                    self.activity = activity::AWAITING_INPUT;
                    Event::AwaitingInput { offset, source: from.to_owned(), detail }
                };
                Some(self.record(offset, event))
            }
            _ => None,
        };
        Reported::Now(signal)
    }

    /// Records the end of a turn a hook reported, at `offset` (where the
    /// output had settled).
    pub(super) fn end_reported(&mut self, pending: PendingEnd, offset: u64) -> Option<TurnSignal> {
        if pending.source == source::TERMINAL_NOTIFICATION {
            self.notice_end_pending = false;
        }
        self.complete(offset, pending.source, pending.usage)
    }

    /// A terminal notification in the output, at `offset`. A prompt mark
    /// acts at once; a notification that ends a turn (OSC 9, OSC 777, a
    /// bell) is recorded once the output after it has settled, as a hook's
    /// end is: a CLI may ring before it draws its answer.
    pub(super) fn terminal_notice(&mut self, notice: &TerminalNotice, offset: u64) -> Reported {
        match (self.completion, notice) {
            (
                CompletionSignal::TerminalNotification,
                TerminalNotice::Osc9(_) | TerminalNotice::Osc777(_) | TerminalNotice::Bell,
            ) => {
                if self.notice_end_pending {
                    // The end already waiting records at the settled offset.
                    return Reported::Now(None);
                }
                if self.open.as_ref().is_some_and(|turn| !turn.may_end_at(offset)) {
                    // All of it was read before the turn opened: an earlier
                    // turn's notification, not this one's end.
                    return Reported::Now(None);
                }
                self.notice_end_pending = true;
                Reported::EndPending(PendingEnd { source: source::TERMINAL_NOTIFICATION, usage: Usage::unavailable() })
            }
            _ => Reported::Now(self.prompt_mark(notice, offset)),
        }
    }

    /// A prompt mark of a shell with integration, at `offset`.
    fn prompt_mark(&mut self, notice: &TerminalNotice, offset: u64) -> Option<TurnSignal> {
        match (self.completion, notice) {
            (CompletionSignal::ShellIntegration, TerminalNotice::CommandStarted) => {
                // A command typed at the prompt (in an attached terminal,
                // say) is a turn too; one the host submitted is open
                // already, and its command has now started.
                if let Some(turn) = &mut self.open {
                    if turn.may_end_at(offset) {
                        turn.command_started = true;
                    }
                    return None;
                }
                self.start(offset, source::SHELL_INTEGRATION)
            }
            (CompletionSignal::ShellIntegration, TerminalNotice::CommandFinished(status)) => {
                let first_prompt = !self.ready;
                self.ready = true;
                self.prompt_drawn_at = Some(offset);
                match &self.open {
                    // The prompt's first mark, with no command before it,
                    // ends nothing: the shell is at its prompt.
                    None => {
                        if first_prompt {
                            self.activity = activity::IDLE;
                        }
                        None
                    }
                    // A mark in output that was all read before the turn
                    // opened belongs to an earlier prompt.
                    Some(turn) if !turn.may_end_at(offset) => None,
                    Some(_) => self.complete_with(offset, source::SHELL_INTEGRATION, Usage::unavailable(), *status),
                }
            }
            // A line typed ahead of the prompt is about to be read: the
            // pane is not waiting at its prompt, but in the turn of the
            // command on that line (or of the empty line, which ends at
            // the prompt drawn again). Without this, an `ask` in the
            // moment before the command's `C` mark was typed after it, and
            // took that command's end for its own.
            (CompletionSignal::ShellIntegration, TerminalNotice::InputWaiting) if self.open.is_none() => {
                self.start(offset, source::SHELL_INTEGRATION)
            }
            _ => None,
        }
    }

    /// The output stayed quiet after input (the screen heuristic).
    pub(super) fn quiet(&mut self, offset: u64) -> Option<TurnSignal> {
        if self.completion != CompletionSignal::ScreenHeuristic {
            return None;
        }
        self.complete(offset, source::HEURISTIC, Usage::unavailable())
    }

    /// An interrupt stopped the open turn (confirmed by the output going
    /// quiet): it ends, labelled as a heuristic.
    pub(super) fn interrupted(&mut self, offset: u64) -> Option<TurnSignal> {
        self.open.as_ref()?;
        self.complete(offset, source::HEURISTIC, Usage::unavailable())
    }

    /// The process exited: nothing is in progress any more.
    pub(super) fn exited(&mut self) {
        self.open = None;
        self.activity = activity::UNKNOWN;
        self.exited = true;
    }

    /// Signals with `seq` at or after `from_seq`, oldest first.
    pub(super) fn signals_from(&self, from_seq: u64) -> Vec<TurnSignal> {
        self.log.iter().filter(|signal| signal.seq >= from_seq).cloned().collect()
    }

    /// The first sequence number whose signal lies at or after `offset`
    /// (for a subscription that starts there).
    pub(super) fn first_seq_at(&self, offset: u64) -> u64 {
        self.log.iter().find(|signal| signal.offset >= offset).map(|signal| signal.seq).unwrap_or(self.next_seq)
    }

    /// Whether a turn started in output after `offset`.
    fn started_after(&self, offset: u64) -> bool {
        self.log
            .iter()
            .rev()
            .take_while(|signal| signal.offset > offset)
            .any(|signal| matches!(signal.event, Event::TurnStarted { .. }))
    }

    fn start(&mut self, offset: u64, from: &str) -> Option<TurnSignal> {
        let by_input = from == source::INPUT;
        self.open = Some(OpenTurn { offset, by_input, command_started: !by_input });
        self.activity = activity::BUSY;
        Some(self.record(offset, Event::TurnStarted { offset, source: from.to_owned() }))
    }

    fn complete(&mut self, offset: u64, from: &str, usage: Usage) -> Option<TurnSignal> {
        self.complete_with(offset, from, usage, None)
    }

    fn complete_with(&mut self, offset: u64, from: &str, usage: Usage, exit_code: Option<u32>) -> Option<TurnSignal> {
        self.open = None;
        self.activity = activity::IDLE;
        Some(self.record(offset, Event::TurnCompleted { offset, source: from.to_owned(), usage, exit_code }))
    }

    fn record(&mut self, offset: u64, event: Event) -> TurnSignal {
        let signal = TurnSignal { seq: self.next_seq, offset, event };
        self.next_seq += 1;
        if self.log.len() == limits::SIGNAL_LOG_LEN {
            self.log.pop_front();
        }
        self.log.push_back(signal.clone());
        signal
    }
}

#[cfg(test)]
#[path = "turn_tests.rs"]
mod tests;
