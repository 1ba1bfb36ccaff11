//! The commands the explorer types, and finding their markers.
//!
//! Command `n` prints `EXP-n-beg` first and `EXP-n-end` last and exits
//! with a chosen status. The typed line builds each marker with `printf`
//! from a format (`'EXP-%s-beg\n' n`), so the marker is in the command's
//! output but never in the echo of the typed line: a check can tell the
//! command's output from its echo. A command may read a line from the
//! terminal between its markers (`read -t`, so it ends by itself when
//! nothing answers); the `answer` operation types that line.

/// One command to type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommandSpec {
    /// Unique within the schedule; the marker's number.
    pub id: u64,
    /// The exit status it ends with.
    pub status: u8,
    /// Lines printed between its two markers.
    pub filler: u8,
    /// How long it sleeps before its end marker, in ms.
    pub sleep_ms: u32,
    /// How long it waits for a line from the terminal before its end
    /// marker, in ms (0: it reads nothing).
    pub reads_ms: u32,
}

impl CommandSpec {
    /// The line typed at the prompt.
    pub fn typed(&self) -> String {
        let mut line = format!("printf 'EXP-%s-beg\\n' {}; ", self.id);
        for _ in 0..self.filler {
            line.push_str("echo filler; ");
        }
        if self.sleep_ms > 0 {
            line.push_str(&format!("sleep {}.{:03}; ", self.sleep_ms / 1000, self.sleep_ms % 1000));
        }
        if self.reads_ms > 0 {
            line.push_str(&format!("read -r -t {}.{:03} line; ", self.reads_ms / 1000, self.reads_ms % 1000));
        }
        line.push_str(&format!("printf 'EXP-%s-end\\n' {}; (exit {})", self.id, self.status));
        line
    }

    /// The marker printed first.
    pub fn begin(&self) -> String {
        format!("EXP-{}-beg", self.id)
    }

    /// The marker printed last.
    pub fn end(&self) -> String {
        format!("EXP-{}-end", self.id)
    }

    /// Short form for the printed schedule.
    pub fn describe(&self) -> String {
        let reads = if self.reads_ms > 0 { format!(" reads a line for {} ms", self.reads_ms) } else { String::new() };
        format!("#{} exit {} filler {} sleep {} ms{reads}", self.id, self.status, self.filler, self.sleep_ms)
    }
}

/// Which marker of a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mark {
    /// `EXP-n-beg`.
    Begin,
    /// `EXP-n-end`.
    End,
}

/// Every marker in `text`, in order: `(command id, which)`.
pub fn markers(text: &[u8]) -> Vec<(u64, Mark)> {
    let mut found = Vec::new();
    let mut at = 0;
    while let Some(pos) = find(&text[at..], b"EXP-") {
        let start = at + pos + 4;
        let digits = text[start..].iter().take_while(|b| b.is_ascii_digit()).count();
        at = start;
        if digits == 0 || digits > 18 {
            continue;
        }
        let Ok(id) = std::str::from_utf8(&text[start..start + digits]).unwrap_or("x").parse::<u64>() else {
            continue;
        };
        let rest = &text[start + digits..];
        if rest.starts_with(b"-beg") {
            found.push((id, Mark::Begin));
        } else if rest.starts_with(b"-end") {
            found.push((id, Mark::End));
        }
        at = start + digits;
    }
    found
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|window| window == needle)
}

/// How many times `needle` occurs in `text`.
pub fn count(text: &str, needle: &str) -> usize {
    text.matches(needle).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_typed_line_holds_no_marker_and_its_output_does() {
        let spec = CommandSpec { id: 17, status: 5, filler: 1, sleep_ms: 250, reads_ms: 0 };
        assert_eq!(
            spec.typed(),
            "printf 'EXP-%s-beg\\n' 17; echo filler; sleep 0.250; printf 'EXP-%s-end\\n' 17; (exit 5)"
        );
        let reading = CommandSpec { reads_ms: 1500, sleep_ms: 0, filler: 0, ..spec };
        assert_eq!(
            reading.typed(),
            "printf 'EXP-%s-beg\\n' 17; read -r -t 1.500 line; printf 'EXP-%s-end\\n' 17; (exit 5)"
        );
        assert!(markers(reading.typed().as_bytes()).is_empty());
        assert!(markers(spec.typed().as_bytes()).is_empty());
        assert_eq!(
            markers(b"x EXP-17-beg\r\nEXP-1-end EXP-17-end"),
            [(17, Mark::Begin), (1, Mark::End), (17, Mark::End)]
        );
    }
}
