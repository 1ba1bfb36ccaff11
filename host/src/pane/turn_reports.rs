//! A pane's turns as the host learns of them: input it submitted, hooks'
//! and notify programs' reports, terminal notifications, quiet output and
//! interrupts, each published as a turn signal.

use super::turn::{Reported, TerminalNotice, TurnSignal};
use super::{lock, Pane};
use crate::limits;
use panehost_adapters::descriptor::ReferenceCapture;
use panehost_adapters::CompletionSignal;
use std::sync::Arc;

impl Pane {
    /// How the end of a turn is observed for this pane.
    pub fn completion(&self) -> CompletionSignal {
        lock(&self.turns).completion()
    }

    /// `idle`, `busy`, `awaiting_input`, `awaiting_approval` or `unknown`.
    pub fn activity(&self) -> &'static str {
        lock(&self.turns).activity()
    }

    /// True while a turn is open.
    pub fn busy(&self) -> bool {
        lock(&self.turns).busy()
    }

    /// True while a shell has not started the command of the turn the
    /// host's input opened (see [`Progress::commands_started`] to wait for
    /// it).
    pub fn awaits_its_command(&self) -> bool {
        lock(&self.turns).awaits_its_command()
    }

    /// Whether a turn is open, and the sequence number the next turn signal
    /// will have, read together.
    pub fn turn_state(&self) -> (bool, u64) {
        let turns = lock(&self.turns);
        (turns.busy(), turns.next_seq())
    }

    /// Turn signals from sequence number `from_seq` on.
    pub fn signals_from(&self, from_seq: u64) -> Vec<TurnSignal> {
        lock(&self.turns).signals_from(from_seq)
    }

    /// The first signal sequence number at or after `offset`.
    pub fn first_signal_at(&self, offset: u64) -> u64 {
        lock(&self.turns).first_seq_at(offset)
    }

    /// An interrupt was confirmed by the output going quiet: the open turn
    /// (if any) ends, labelled as a heuristic.
    pub fn turn_interrupted(&self) {
        let offset = self.current_progress().end;
        let mut turns = lock(&self.turns);
        if !turns.busy() {
            return;
        }
        let signal = turns.interrupted(offset);
        drop(turns);
        self.publish(signal);
    }

    /// Stops waiting for the program to show it is ready to read (a shell
    /// whose prompt marks never came, a program that never took raw mode):
    /// submissions go ahead from now on.
    pub fn give_up_waiting_for_ready(&self) {
        self.raw_input.give_up();
        self.progress.mark_ready_for_input();
    }

    /// Records that the host submitted input (`text`, empty when only
    /// keys) as a turn, its Enter written when the output had reached
    /// `before_enter` (see [`Pane::output_end`]).
    pub fn input_submitted(&self, before_enter: u64, text: &str) {
        let signal = lock(&self.turns).input_submitted(before_enter, text);
        self.publish(signal);
    }

    /// How far the output has been read: taken just before a submission's
    /// Enter is written, it tells the output that came after it.
    pub fn output_end(&self) -> u64 {
        self.current_progress().end
    }

    /// A hook or notify program's report. Returns false when the token is
    /// not this pane's. The end of a turn is recorded once the output
    /// after the report has settled (at most [`limits::HOOK_SETTLE_LIMIT`]
    /// later), at the offset reached then: a CLI may run its hook before it
    /// draws the answer.
    pub fn report(self: &Arc<Self>, token: &str, event: &str, payload: &str) -> bool {
        if !same_secret(token.as_bytes(), self.notify_token.as_bytes()) {
            return false;
        }
        let offset = self.current_progress().end;
        let reported = lock(&self.turns).reported(event, payload, offset);
        self.act_on(reported);
        if let ReferenceCapture::HookField(field) = &self.reference_capture {
            let value = serde_json::from_str::<serde_json::Value>(payload).ok();
            if let Some(reference) = value.as_ref().and_then(|value| value.get(field)).and_then(|value| value.as_str())
            {
                self.capture_reference(reference);
            }
        }
        true
    }

    /// Tells the turns of terminal notices, each at the offset just past
    /// the bytes that made it.
    pub(super) fn record_terminal_notices(self: &Arc<Self>, placed: &[(u64, TerminalNotice)]) {
        let notices: Vec<&TerminalNotice> = placed.iter().map(|(_, notice)| notice).collect();
        // The last of the shell's marks says whether its line editor reads;
        // told before the prompt count, so that a waiter woken by a new
        // prompt never sees the line editor of the prompt before it.
        let last_mark = notices.iter().rev().find_map(|notice| match notice {
            TerminalNotice::PromptShown => Some(true),
            TerminalNotice::CommandStarted | TerminalNotice::CommandFinished(_) => Some(false),
            _ => None,
        });
        if let (Some(reading), CompletionSignal::ShellIntegration) = (last_mark, self.completion()) {
            self.progress.set_line_editor_reading(reading);
        }
        let prompts = notices.iter().filter(|notice| matches!(notice, TerminalNotice::CommandFinished(_))).count();
        if prompts > 0 && self.completion() == CompletionSignal::ShellIntegration {
            self.progress.add_prompts(prompts as u64);
        }
        // The turns learn of the whole batch under one lock: nobody sees
        // the state between two marks of one output (a command's end, then
        // a prompt begun with a line waiting, which opens that line's
        // turn), and what they report is published after.
        let learned: Vec<(Reported, bool)> = {
            let mut turns = lock(&self.turns);
            placed
                .iter()
                .map(|(offset, notice)| (turns.terminal_notice(notice, *offset), turns.ready_for_input()))
                .collect()
        };
        for (reported, ready) in learned {
            if ready && !self.progress.get().ready_for_input {
                // The shell's first prompt: submissions waiting for it go
                // ahead, and its activity (now idle) is news.
                self.progress.mark_ready_for_input();
                self.publish(None);
            }
            self.act_on(reported);
        }
        // Counted once the turns know of them, for a waiter to look again.
        let commands = notices.iter().filter(|notice| matches!(notice, TerminalNotice::CommandStarted)).count();
        if commands > 0 && self.completion() == CompletionSignal::ShellIntegration {
            self.progress.add_commands_started(commands as u64);
        }
    }

    /// Publishes a signal now, or records a reported end once the output
    /// after it has settled (at most [`limits::HOOK_SETTLE_LIMIT`] later),
    /// at the offset reached then.
    fn act_on(self: &Arc<Self>, reported: Reported) {
        match reported {
            Reported::Now(signal) => self.publish(signal),
            Reported::EndPending(pending) => {
                let pane = Arc::clone(self);
                tokio::spawn(async move {
                    pane.wait_output_quiet(limits::HOOK_SETTLE_QUIET, limits::HOOK_SETTLE_LIMIT).await;
                    let offset = pane.current_progress().end;
                    let signal = lock(&pane.turns).end_reported(pending, offset);
                    pane.publish(signal);
                });
            }
        }
    }

    pub(super) fn record_quiet(&self) {
        let offset = self.current_progress().end;
        let signal = lock(&self.turns).quiet(offset);
        self.publish(signal);
    }

    pub(super) fn publish(&self, signal: Option<TurnSignal>) {
        if let Some(signal) = signal {
            tracing::debug!(pane = %self.info.id, seq = signal.seq, event = ?signal.event, "turn signal");
            self.progress.set_signals(signal.seq + 1);
        }
        self.news.activity(&self.info.id, || self.activity());
    }
}

/// Compares two secrets in time that depends on their lengths only.
fn same_secret(given: &[u8], expected: &[u8]) -> bool {
    given.len() == expected.len() && given.iter().zip(expected).fold(0u8, |diff, (a, b)| diff | (a ^ b)) == 0
}
