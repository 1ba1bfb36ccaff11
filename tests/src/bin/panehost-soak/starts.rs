//! What a stream start must look like for the offset a subscription asked
//! for (sections 6 and 8 of the protocol), and the gap it announces.

use panehost_ipc::StreamStart;

/// A stream start that agrees with the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CheckedStart {
    /// The offset the stream's output follows from.
    pub output_from: u64,
    /// The bytes the host announced it will not deliver, `[from, to)`.
    pub announced_gap: Option<(u64, u64)>,
    /// The start was a `generation_changed`.
    pub generation_changed: bool,
}

/// Checks the start of an `events` answer for `from`.
pub fn check_events_start(from: Option<u64>, start: &StreamStart) -> Result<CheckedStart, String> {
    match (from, start) {
        (None, StreamStart::Snapshot { snapshot, skipped_from: None }) => {
            Ok(CheckedStart { output_from: snapshot.offset, announced_gap: None, generation_changed: false })
        }
        (Some(from), start) => check_resume(from, start, None),
        (None, other) => Err(format!("events without an offset started with {}", describe(other))),
    }
}

/// Checks the start of a `reconnect` answer for `generation` and `offset`.
pub fn check_reconnect_start(generation: u64, offset: u64, start: &StreamStart) -> Result<CheckedStart, String> {
    check_resume(offset, start, Some(generation))
}

fn check_resume(from: u64, start: &StreamStart, generation: Option<u64>) -> Result<CheckedStart, String> {
    match start {
        StreamStart::Replay { from: replayed } if *replayed == from => {
            Ok(CheckedStart { output_from: from, announced_gap: None, generation_changed: false })
        }
        StreamStart::Snapshot { snapshot, skipped_from: Some(skipped) }
            if *skipped == from && snapshot.offset >= from =>
        {
            let gap = (snapshot.offset > from).then_some((from, snapshot.offset));
            Ok(CheckedStart { output_from: snapshot.offset, announced_gap: gap, generation_changed: false })
        }
        // The new generation's screen may trail the offset asked for (a
        // screen model lags the output), so its offset is not bounded here.
        StreamStart::GenerationChanged { previous, snapshot } if generation == Some(*previous) => {
            let gap = (snapshot.offset > from).then_some((from, snapshot.offset));
            Ok(CheckedStart { output_from: snapshot.offset, announced_gap: gap, generation_changed: true })
        }
        other => Err(format!(
            "asked from offset {from}{}, the stream started with {}",
            generation.map(|g| format!(" of generation {g}")).unwrap_or_default(),
            describe(other)
        )),
    }
}

/// A stream start in a few words.
pub fn describe(start: &StreamStart) -> String {
    match start {
        StreamStart::Replay { from } => format!("replay from {from}"),
        StreamStart::Snapshot { snapshot, skipped_from } => {
            format!("a snapshot at {} (skipped_from {skipped_from:?})", snapshot.offset)
        }
        StreamStart::GenerationChanged { previous, snapshot } => {
            format!("a generation change from {previous} with a snapshot at {}", snapshot.offset)
        }
    }
}

/// The offset a stream's output follows from, whatever its start.
pub fn output_from(start: &StreamStart) -> u64 {
    match start {
        StreamStart::Replay { from } => *from,
        StreamStart::Snapshot { snapshot, .. } | StreamStart::GenerationChanged { snapshot, .. } => snapshot.offset,
    }
}
