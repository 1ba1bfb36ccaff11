//! [`FollowCursor`]: the bookkeeping behind an exact resume, without IO.

use panehost_ipc::{Event, PaneId, Request, StreamStart};

/// Where a follower stands in a pane's output: the generation it saw and
/// the end offset of the output it has handed on.
///
/// The rules:
/// - a stream start sets the generation, and the offset to where the
///   stream's output begins (`from` of a replay, the snapshot's offset
///   otherwise);
/// - an [`Event::Output`] moves the offset to its end (`offset` +
///   `data.len()`); an [`Event::Resync`] moves it to its snapshot's offset;
/// - output that lies wholly before the offset is a duplicate and is
///   dropped; output that begins before it is trimmed to start at it.
///   Either only happens if a host replays more than asked; it keeps the
///   "no duplicate" promise on this side too.
///
/// After a lost connection, [`FollowCursor::resume_request`] is the request
/// that continues exactly where the caller stopped.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FollowCursor {
    generation: Option<u64>,
    offset: Option<u64>,
    ended: bool,
}

impl FollowCursor {
    /// A cursor that has seen nothing yet; `from` is the offset to start
    /// after, if any.
    pub fn new(from: Option<u64>) -> Self {
        FollowCursor { generation: None, offset: from, ended: false }
    }

    /// A cursor that stands where an earlier follower stopped: after
    /// `offset` of generation `generation` (its resume is a `reconnect`).
    pub fn at(generation: u64, offset: u64) -> Self {
        FollowCursor { generation: Some(generation), offset: Some(offset), ended: false }
    }

    /// The generation of the last stream start, once there was one.
    pub fn generation(&self) -> Option<u64> {
        self.generation
    }

    /// The end offset of the output handed on so far (or the start offset
    /// asked for, before any stream began).
    pub fn offset(&self) -> Option<u64> {
        self.offset
    }

    /// True once [`Event::Ended`] passed.
    pub fn is_ended(&self) -> bool {
        self.ended
    }

    /// The request that (re)opens the stream: `reconnect` with the
    /// generation and offset once a stream has begun, otherwise `events`
    /// from the starting offset.
    pub fn resume_request(&self, pane: &PaneId) -> Request {
        match (self.generation, self.offset) {
            (Some(generation), Some(offset)) => Request::Reconnect { pane: pane.clone(), generation, offset },
            (_, from) => Request::Events { pane: pane.clone(), from },
        }
    }

    /// Notes a stream start.
    pub fn on_start(&mut self, generation: u64, start: &StreamStart) {
        self.generation = Some(generation);
        self.offset = Some(match start {
            StreamStart::Replay { from } => *from,
            StreamStart::Snapshot { snapshot, .. } | StreamStart::GenerationChanged { snapshot, .. } => snapshot.offset,
        });
    }

    /// Notes an event about to be handed on, and returns what to hand on:
    /// the event itself, a trimmed output event, or `None` for output that
    /// was handed on already.
    pub fn admit(&mut self, event: Event) -> Option<Event> {
        match event {
            Event::Output { offset, data } => {
                let end = offset + data.len() as u64;
                match self.offset {
                    Some(current) if end <= current && !(data.is_empty() && offset == current) => {
                        tracing::debug!(offset, end, current, "dropping output handed on already");
                        None
                    }
                    Some(current) if offset < current => {
                        let skip = (current - offset) as usize;
                        self.offset = Some(end);
                        let data = data.as_slice()[skip..].to_vec().into();
                        Some(Event::Output { offset: current, data })
                    }
                    current => {
                        if let Some(current) = current.filter(|current| offset > *current) {
                            tracing::warn!(offset, current, "output continues after a gap");
                        }
                        self.offset = Some(end);
                        Some(Event::Output { offset, data })
                    }
                }
            }
            Event::Resync { skipped_from, snapshot } => {
                self.offset = Some(snapshot.offset);
                Some(Event::Resync { skipped_from, snapshot })
            }
            Event::Ended { reason } => {
                self.ended = true;
                Some(Event::Ended { reason })
            }
            other @ (Event::Resized { .. }
            | Event::Exited { .. }
            | Event::TurnStarted { .. }
            | Event::TurnCompleted { .. }
            | Event::AwaitingInput { .. }
            | Event::ApprovalRequested { .. }
            | Event::PaneStarted { .. }
            | Event::PaneActivity { .. }
            | Event::PaneExited { .. }
            | Event::PaneEnded { .. }
            | Event::PaneList { .. }
            | Event::PaneChanged { .. }) => Some(other),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use panehost_ipc::{ByteBuf, Cursor, ExitStatus, InputModes, ScreenSnapshot, Size};

    fn snapshot(offset: u64) -> ScreenSnapshot {
        ScreenSnapshot {
            offset,
            size: Size::DEFAULT,
            text: String::new(),
            formatted: ByteBuf::default(),
            cursor: Cursor { row: 0, col: 0, visible: true },
            title: String::new(),
            alternate_screen: false,
            modes: InputModes::default(),
            trimmed: false,
        }
    }

    fn output(offset: u64, data: &str) -> Event {
        Event::Output { offset, data: data.into() }
    }

    fn pane() -> PaneId {
        PaneId::from("p1")
    }

    #[test]
    fn before_any_stream_it_subscribes_from_the_starting_offset() {
        assert_eq!(FollowCursor::new(None).resume_request(&pane()), Request::Events { pane: pane(), from: None });
        assert_eq!(
            FollowCursor::new(Some(42)).resume_request(&pane()),
            Request::Events { pane: pane(), from: Some(42) }
        );
    }

    #[test]
    fn reconnects_from_the_end_of_the_last_output_handed_on() {
        let mut cursor = FollowCursor::new(None);
        cursor.on_start(3, &StreamStart::Snapshot { snapshot: snapshot(100), skipped_from: None });
        assert_eq!(cursor.offset(), Some(100));
        cursor.admit(output(100, "hello")).unwrap();
        cursor.admit(output(105, "!")).unwrap();
        assert_eq!(cursor.resume_request(&pane()), Request::Reconnect { pane: pane(), generation: 3, offset: 106 });
    }

    #[test]
    fn each_start_kind_sets_the_offset() {
        let mut cursor = FollowCursor::new(Some(7));
        cursor.on_start(1, &StreamStart::Replay { from: 7 });
        assert_eq!((cursor.generation(), cursor.offset()), (Some(1), Some(7)));
        cursor.on_start(1, &StreamStart::Snapshot { snapshot: snapshot(500), skipped_from: Some(7) });
        assert_eq!(cursor.offset(), Some(500));
        cursor.on_start(2, &StreamStart::GenerationChanged { previous: 1, snapshot: snapshot(9) });
        assert_eq!((cursor.generation(), cursor.offset()), (Some(2), Some(9)));
    }

    #[test]
    fn resync_moves_to_the_snapshot() {
        let mut cursor = FollowCursor::new(None);
        cursor.on_start(1, &StreamStart::Replay { from: 0 });
        cursor.admit(output(0, "abc")).unwrap();
        cursor.admit(Event::Resync { skipped_from: 3, snapshot: snapshot(4096) }).unwrap();
        assert_eq!(cursor.offset(), Some(4096));
    }

    #[test]
    fn duplicates_are_dropped_and_overlaps_trimmed() {
        let mut cursor = FollowCursor::new(None);
        cursor.on_start(1, &StreamStart::Replay { from: 10 });
        assert_eq!(cursor.admit(output(5, "abcde")), None);
        assert_eq!(cursor.admit(output(8, "xyZW")), Some(output(10, "ZW")));
        assert_eq!(cursor.offset(), Some(12));
        assert_eq!(cursor.admit(output(12, "q")), Some(output(12, "q")));
        assert_eq!(cursor.offset(), Some(13));
    }

    #[test]
    fn a_gap_is_handed_on_and_followed() {
        let mut cursor = FollowCursor::new(None);
        cursor.on_start(1, &StreamStart::Replay { from: 0 });
        assert_eq!(cursor.admit(output(20, "ab")), Some(output(20, "ab")));
        assert_eq!(cursor.offset(), Some(22));
    }

    #[test]
    fn exit_and_resize_do_not_move_the_offset_and_ended_is_noted() {
        let mut cursor = FollowCursor::new(None);
        cursor.on_start(1, &StreamStart::Replay { from: 0 });
        cursor.admit(output(0, "ab")).unwrap();
        cursor.admit(Event::Resized { size: Size { cols: 100, rows: 30 } }).unwrap();
        cursor.admit(Event::Exited { status: ExitStatus { code: 0, signal: None }, offset: 2 }).unwrap();
        assert_eq!(cursor.offset(), Some(2));
        assert!(!cursor.is_ended());
        cursor.admit(Event::Ended { reason: "exited".into() }).unwrap();
        assert!(cursor.is_ended());
    }
}
