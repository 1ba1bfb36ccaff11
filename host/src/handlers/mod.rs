//! The requests whose answer waits for something: a turn, a pattern, a
//! probe, a terminal.

pub(crate) mod interrupt;
pub(crate) mod receipt;
pub(crate) mod shell_reading;
pub(crate) mod submitted_text;
pub(crate) mod terminal_attach;
pub(crate) mod turn_output_text;
pub(crate) mod turns;
pub(crate) mod wait_for;
