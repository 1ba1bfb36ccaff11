//! A turn: the busy phase that follows a prompt, then the answer.

use std::thread;
use std::time::{Duration, Instant};

use crate::output::{report, sequence};
use crate::signals::Received;
use crate::{Agent, Stop, POLL_INTERVAL};

/// One `.` is printed per this much of the busy phase.
const DOT_INTERVAL: Duration = Duration::from_millis(100);

/// How the busy phase ended.
enum Outcome {
    Finished,
    Interrupted,
}

impl Agent {
    /// Works on `prompt`, then answers it and saves the turn, unless Ctrl-C
    /// cancels it first. The caller prints the next prompt.
    pub(crate) fn run_turn(&mut self, prompt: &str) -> Result<(), Stop> {
        self.out.line(&format!("working: {prompt}"))?;
        match self.work()? {
            Outcome::Interrupted => self.out.text("\ninterrupted\n")?,
            Outcome::Finished => {
                let answer = reversed(prompt);
                self.out.text(&format!("\nanswer: {answer}\n"))?;
                if let Err(error) = self.store.append_turn(&self.session, prompt, &answer) {
                    report(&format!("warning: cannot save the turn in {}: {error}", self.store.dir().display()));
                }
                self.out.text(sequence::TURN_COMPLETE)?;
            }
        }
        Ok(())
    }

    /// The busy phase: lasts `self.delay`, prints a dot per full 100 ms of it,
    /// and looks for signals every 10 ms.
    fn work(&mut self) -> Result<Outcome, Stop> {
        let started = Instant::now();
        let dots_in_total = self.delay.as_millis() / DOT_INTERVAL.as_millis();
        let mut dots_printed = 0;
        loop {
            match self.signals.take() {
                Some(Received::Hangup) => return Err(Stop::Exit(0)),
                Some(Received::Interrupt) => return Ok(Outcome::Interrupted),
                None => {}
            }
            let elapsed = started.elapsed();
            let dots_due = (elapsed.as_millis() / DOT_INTERVAL.as_millis()).min(dots_in_total);
            while dots_printed < dots_due {
                self.out.text(".")?;
                dots_printed += 1;
            }
            if elapsed >= self.delay {
                return Ok(Outcome::Finished);
            }
            thread::sleep(POLL_INTERVAL.min(self.delay - elapsed));
        }
    }
}

/// The one-shot answer (`--print`): the first balanced `{...}` of the
/// prompt, verbatim, else the prompt reversed.
pub fn one_shot_answer(prompt: &str) -> String {
    if let Some(start) = prompt.find('{') {
        let mut depth = 0usize;
        for (index, character) in prompt[start..].char_indices() {
            match character {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        return prompt[start..start + index + 1].to_owned();
                    }
                }
                _ => {}
            }
        }
    }
    reversed(prompt)
}

/// The answer to a prompt: its characters in reverse order.
fn reversed(prompt: &str) -> String {
    prompt.chars().rev().collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_shot_answers_echo_the_first_object_or_reverse() {
        assert_eq!(one_shot_answer("Reply with {\"a\":{\"b\":1}} only"), "{\"a\":{\"b\":1}}");
        assert_eq!(one_shot_answer("no object {"), "{ tcejbo on");
    }

    #[test]
    fn answers_reverse_characters() {
        assert_eq!(reversed("hello world"), "dlrow olleh");
        assert_eq!(reversed("héllo"), "olléh");
        assert_eq!(reversed(""), "");
    }
}
