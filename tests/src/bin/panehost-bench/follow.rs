//! Following one subscription to its end, counting what arrives.

use crate::BenchResult;
use panehost_client::EventStream;
use panehost_ipc::{Event, StreamStart};
use std::time::Instant;

/// What one subscriber received up to the pane's exit.
#[derive(Debug, Clone, Copy)]
pub struct Followed {
    /// When the `exited` event arrived.
    pub exited_at: Instant,
    /// Output bytes received.
    pub bytes: u64,
    /// Resyncs received (each stands for bytes it did not receive).
    pub resyncs: u64,
    /// The pane's final end offset, as `exited` reported it.
    pub end: u64,
}

/// The offset output follows from at the start of a stream.
pub fn start_offset(start: &StreamStart) -> u64 {
    match start {
        StreamStart::Replay { from } => *from,
        StreamStart::Snapshot { snapshot, .. } => snapshot.offset,
        StreamStart::GenerationChanged { snapshot, .. } => snapshot.offset,
    }
}

/// Reads `events` until the pane's exit, checking that output arrives
/// without gaps or repeats (a resync aside).
pub async fn follow_to_exit(mut events: EventStream) -> BenchResult<Followed> {
    let mut next = start_offset(events.start());
    let mut bytes = 0u64;
    let mut resyncs = 0u64;
    while let Some(event) = events.next().await {
        match event {
            Event::Output { offset, data } => {
                if offset != next {
                    return Err(format!("output at offset {offset}, expected {next}").into());
                }
                bytes += data.len() as u64;
                next = offset + data.len() as u64;
            }
            Event::Resync { snapshot, .. } => {
                resyncs += 1;
                next = snapshot.offset;
            }
            Event::Exited { offset, .. } => {
                return Ok(Followed { exited_at: Instant::now(), bytes, resyncs, end: offset });
            }
            _ => {}
        }
    }
    Err("the subscription ended before the pane exited".into())
}
