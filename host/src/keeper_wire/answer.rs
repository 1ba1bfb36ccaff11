//! A keeper's answer to a pane request, one line on its stdout:
//! `ready <child-pid>` or `error <message>`.

/// The longest answer line the host reads (`error` with its message).
pub const MAX_ANSWER_LINE: usize = 64 * 1024;

/// A keeper's answer to one pane request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answer {
    /// The pane's child runs, with this pid, and its socket listens.
    Ready(u32),
    /// The pane could not be started; the message says why.
    Error(String),
}

impl Answer {
    /// The line, newline included; a message's own newlines become spaces.
    pub fn line(&self) -> String {
        match self {
            Answer::Ready(pid) => format!("ready {pid}\n"),
            Answer::Error(message) => format!("error {}\n", message.replace('\n', " ")),
        }
    }

    /// Parses a line (without its newline).
    ///
    /// # Errors
    /// A sentence quoting a line that is no answer.
    pub fn parse(line: &[u8]) -> Result<Answer, String> {
        let line = String::from_utf8_lossy(line);
        let line = line.trim_end();
        match line.split_once(' ') {
            Some(("ready", pid)) => {
                pid.parse().map(Answer::Ready).map_err(|_| format!("unexpected keeper answer {line:?}"))
            }
            Some(("error", message)) => Ok(Answer::Error(message.to_owned())),
            _ => Err(format!("unexpected keeper answer {line:?}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::Answer;

    #[test]
    fn answers_round_trip_and_anything_else_is_refused() {
        for answer in [Answer::Ready(4242), Answer::Error("no such program".into())] {
            let line = answer.line();
            assert_eq!(Answer::parse(line.strip_suffix('\n').unwrap().as_bytes()), Ok(answer));
        }
        assert_eq!(Answer::Error("a\nb".into()).line(), "error a b\n");
        for line in [&b"ready"[..], b"ready x", b"ready -1", b"hello 1", b"", b"\xff\xfe"] {
            assert!(Answer::parse(line).is_err(), "{line:?}");
        }
    }
}
