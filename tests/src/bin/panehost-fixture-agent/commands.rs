//! The slash commands: lines that start with `/`.

use std::env;
use std::time::Duration;

use crate::flood::Flood;
use crate::output::sequence;
use crate::signals::Received;
use crate::{Agent, Stop};

const HELP: &str = "\
commands:
  /delay MS     set how long a turn works, in milliseconds
  /flood N      write exactly N bytes of numbered lines, then \"flood done\"
  /exit [CODE]  exit with status CODE (0-255, default 0)
  /title TEXT   set the terminal title
  /alt          enter the alternate screen
  /main         leave the alternate screen
  /paste-on     enable bracketed paste
  /paste-off    disable bracketed paste
  /env NAME     print an environment variable
  /session      print the session id
  /bell         ring the bell
  /help         print this list
";

/// A parsed command line.
#[derive(Debug, PartialEq)]
pub enum Command<'a> {
    Delay(u64),
    Flood(u64),
    Exit(u8),
    Title(&'a str),
    AlternateScreen,
    MainScreen,
    BracketedPasteOn,
    BracketedPasteOff,
    Env(&'a str),
    Session,
    Bell,
    Help,
    /// A known command with a missing or bad argument; holds the usage line to print.
    Misused(&'static str),
    /// Not a command; holds the command word as typed.
    Unknown(&'a str),
}

/// Parses a line that starts with `/`: the command word, then its argument
/// (the rest of the line, trimmed).
pub fn parse(line: &str) -> Command<'_> {
    let (name, argument) = match line.split_once(char::is_whitespace) {
        Some((name, rest)) => (name, rest.trim()),
        None => (line, ""),
    };
    match name {
        "/delay" => argument.parse().map_or(Command::Misused("usage: /delay MS"), Command::Delay),
        "/flood" => argument.parse().map_or(Command::Misused("usage: /flood N"), Command::Flood),
        "/exit" if argument.is_empty() => Command::Exit(0),
        "/exit" => argument.parse().map_or(Command::Misused("usage: /exit CODE (0-255)"), Command::Exit),
        "/title" => Command::Title(argument),
        "/alt" => Command::AlternateScreen,
        "/main" => Command::MainScreen,
        "/paste-on" => Command::BracketedPasteOn,
        "/paste-off" => Command::BracketedPasteOff,
        "/env" if is_variable_name(argument) => Command::Env(argument),
        "/env" => Command::Misused("usage: /env NAME"),
        "/session" => Command::Session,
        "/bell" => Command::Bell,
        "/help" => Command::Help,
        _ => Command::Unknown(name),
    }
}

/// A name the environment can hold: non-empty, one word, no `=` or NUL.
fn is_variable_name(name: &str) -> bool {
    !name.is_empty() && !name.contains(|c: char| c == '=' || c == '\0' || c.is_whitespace())
}

impl Agent {
    /// Carries out a command. The caller prints the next prompt.
    pub(crate) fn run_command(&mut self, command: Command<'_>) -> Result<(), Stop> {
        match command {
            Command::Delay(milliseconds) => {
                self.delay = Duration::from_millis(milliseconds);
                self.out.line(&format!("delay: {milliseconds}"))?;
            }
            Command::Flood(total) => self.flood(total)?,
            Command::Exit(status) => return Err(Stop::Exit(status)),
            Command::Title(title) => self.out.text(&sequence::set_title(title))?,
            Command::AlternateScreen => {
                self.out.text(sequence::ALTERNATE_SCREEN_ENTER)?;
                self.out.line("alternate screen")?;
            }
            Command::MainScreen => {
                self.out.text(sequence::ALTERNATE_SCREEN_LEAVE)?;
                self.out.line("main screen")?;
            }
            Command::BracketedPasteOn => {
                self.out.text(sequence::BRACKETED_PASTE_ON)?;
                self.out.line("bracketed paste: on")?;
            }
            Command::BracketedPasteOff => {
                self.out.text(sequence::BRACKETED_PASTE_OFF)?;
                self.out.line("bracketed paste: off")?;
            }
            Command::Env(name) => match env::var_os(name) {
                Some(value) => self.out.line(&format!("{name}={}", value.to_string_lossy()))?,
                None => self.out.line(&format!("{name} unset"))?,
            },
            Command::Session => self.out.line(&format!("session: {}", self.session))?,
            Command::Bell => self.out.text(sequence::BELL)?,
            Command::Help => self.out.text(HELP)?,
            Command::Misused(usage) => self.out.line(usage)?,
            Command::Unknown(name) => self.out.line(&format!("unknown command: {name}"))?,
        }
        Ok(())
    }

    /// Writes the first `total` bytes of the flood stream, then `\nflood done\n`.
    /// Ctrl-C between chunks stops it with `\ninterrupted\n` instead.
    fn flood(&mut self, total: u64) -> Result<(), Stop> {
        let mut flood = Flood::new(total);
        while let Some(chunk) = flood.next_chunk() {
            self.out.bytes(chunk)?;
            match self.signals.take() {
                Some(Received::Hangup) => return Err(Stop::Exit(0)),
                Some(Received::Interrupt) => {
                    self.out.text("\ninterrupted\n")?;
                    return Ok(());
                }
                None => {}
            }
        }
        self.out.text("\nflood done\n")?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn commands_parse_with_their_arguments() {
        assert_eq!(parse("/delay 50"), Command::Delay(50));
        assert_eq!(parse("/flood   100000 "), Command::Flood(100_000));
        assert_eq!(parse("/exit"), Command::Exit(0));
        assert_eq!(parse("/exit 7"), Command::Exit(7));
        assert_eq!(parse("/title my  title"), Command::Title("my  title"));
        assert_eq!(parse("/env HOME"), Command::Env("HOME"));
        assert_eq!(parse("/paste-on"), Command::BracketedPasteOn);
    }

    #[test]
    fn bad_arguments_and_unknown_commands_are_reported() {
        assert!(matches!(parse("/delay soon"), Command::Misused(_)));
        assert!(matches!(parse("/delay -1"), Command::Misused(_)));
        assert!(matches!(parse("/flood"), Command::Misused(_)));
        assert!(matches!(parse("/exit 256"), Command::Misused(_)));
        assert!(matches!(parse("/env A=B"), Command::Misused(_)));
        assert!(matches!(parse("/env"), Command::Misused(_)));
        assert_eq!(parse("/x y"), Command::Unknown("/x"));
        assert_eq!(parse("/"), Command::Unknown("/"));
    }
}
