//! Which reported turns are the pane's conversation.
//!
//! A CLI may report turns of threads of its own beside the user's
//! conversation (Codex titles a new conversation in a thread of its own,
//! and reports that turn too). Where payloads name their thread (see
//! `panehost_adapters::notify_payload`), the pane holds on to its
//! conversation's thread: the one whose reported input is what the host
//! submitted. Reports of other threads are ignored, and so is a second
//! report of a turn already counted.

use panehost_adapters::notify_payload::ReportedTurn;

/// The pane's conversation, as far as reports have shown it.
#[derive(Debug, Default)]
pub(super) struct Conversation {
    /// The conversation's thread, once a report has shown it.
    thread: Option<String>,
    /// What the host submitted for the open turn, normalised.
    submitted: Option<String>,
    /// The last turn counted.
    last_turn: Option<String>,
}

impl Conversation {
    /// The host submitted `text` (empty when it submitted no text).
    pub(super) fn submitted(&mut self, text: &str) {
        let text = normalise(text);
        self.submitted = (!text.is_empty()).then_some(text);
    }

    /// What the host submitted for the open turn, while its end has not
    /// been reported.
    pub(super) fn pending_submission(&self) -> Option<String> {
        self.submitted.clone()
    }

    /// Whether a report of the end of `turn` is the conversation's, and
    /// counts. A report that names no thread always counts. One whose
    /// input is what the host submitted shows the conversation's thread
    /// (a conversation the user cleared moves to a new one). Otherwise it
    /// counts when it comes from the conversation's thread, or, before any
    /// report has shown that thread, when the host submitted nothing it
    /// could be matched against.
    pub(super) fn admits_end(&mut self, turn: &ReportedTurn) -> bool {
        let Some(thread) = &turn.thread else { return true };
        if turn.turn.is_some() && turn.turn == self.last_turn {
            return false;
        }
        let input_matches = self
            .submitted
            .as_ref()
            .is_some_and(|submitted| turn.inputs.iter().any(|input| normalise(input) == *submitted));
        let admitted = match &self.thread {
            _ if input_matches => true,
            Some(conversation) => conversation == thread,
            None => self.submitted.is_none(),
        };
        if admitted {
            self.thread = Some(thread.clone());
            self.last_turn = turn.turn.clone();
            self.submitted = None;
        }
        admitted
    }
}

/// Text as compared: line endings as `\n`, surrounding whitespace trimmed.
fn normalise(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\r', "\n").trim().to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn turn(thread: &str, turn: &str, input: &str) -> ReportedTurn {
        ReportedTurn { thread: Some(thread.into()), turn: Some(turn.into()), inputs: vec![input.into()] }
    }

    #[test]
    fn a_side_thread_never_counts_whichever_ends_first() {
        let title = "Generate a concise title.\n\nUser prompt:\nPING";
        let mut conversation = Conversation::default();
        conversation.submitted("PING\r");
        assert!(!conversation.admits_end(&turn("title", "t1", title)), "the side thread ended first");
        assert!(conversation.admits_end(&turn("main", "m1", "PING")));
        assert!(!conversation.admits_end(&turn("title", "t1", title)));
        assert!(!conversation.admits_end(&turn("main", "m1", "PING")), "a turn counts once");
        conversation.submitted("next");
        assert!(conversation.admits_end(&turn("main", "m2", "next (as the CLI rewrote it)")));
    }

    #[test]
    fn without_a_submission_the_first_thread_is_the_conversation() {
        let mut conversation = Conversation::default();
        assert!(conversation.admits_end(&turn("typed", "a", "by hand")));
        assert!(!conversation.admits_end(&turn("other", "b", "x")));
        assert!(conversation.admits_end(&ReportedTurn::default()), "a report naming no thread counts");
        conversation.submitted("after /clear");
        assert!(conversation.admits_end(&turn("new", "c", "after /clear")), "the conversation moved");
        assert!(!conversation.admits_end(&turn("typed", "d", "x")));
    }
}
