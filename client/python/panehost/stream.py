"""A pane's events as an async iterator that resumes exactly where it was
(PROTOCOL.md, section 8): no output byte the host still holds is lost, and
none is yielded twice."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, List, Optional, Union

from . import _types as t
from .errors import HostError, PanehostError
from .subscriber import BEHIND, Subscriber

if TYPE_CHECKING:
    from .client import Client

TURN_EVENTS = (t.EventTurnStarted, t.EventTurnCompleted, t.EventAwaitingInput, t.EventApprovalRequested)
"""The events that report a turn; each carries the ``offset`` it was observed at."""


@dataclass(frozen=True)
class StreamStarted:
    """How the stream (re)starts: yielded first, after every reconnect, and
    when subscribing again after the consumer fell behind could not continue
    exactly.

    ``start`` is a ``StreamStartReplay`` (output follows from ``from_``), a
    ``StreamStartSnapshot`` (redraw from ``snapshot``; ``skipped_from`` says
    where bytes were lost) or a ``StreamStartGenerationChanged`` (the
    process was replaced). ``cause`` is ``"subscribed"``, ``"reconnected"``
    or ``"fell_behind"``."""

    pane: str
    generation: int
    start: t.StreamStart
    cause: str

    @property
    def offset(self) -> int:
        """The offset output continues from."""
        return _start_offset(self.start)


def _start_offset(start: t.StreamStart) -> int:
    if isinstance(start, t.StreamStartReplay):
        return start.from_
    if isinstance(start, (t.StreamStartSnapshot, t.StreamStartGenerationChanged)):
        return start.snapshot.offset
    raise PanehostError(f"a stream start this client does not know: {start!r}")


PaneItem = Union[StreamStarted, t.Event]
"""What a :class:`PaneStream` yields."""


class PaneStream(Subscriber):
    """A pane's output and lifecycle events (``client.events(pane)``).

    It yields a :class:`StreamStarted` first, then the pane's events:
    ``EventOutput`` (``offset``, ``data`` as bytes), ``EventResync``,
    ``EventResized``, ``EventExited``, the turn events, and last
    ``EventEnded``, after which iteration stops. ``EventOther`` is an event
    a newer host sends that this package does not know.

    **Resuming.** It remembers the pane's generation and the end offset of
    the output it received. When the connection is lost it connects again
    (the client's reconnect policy) and sends ``reconnect`` from exactly
    there; output the host sends again is dropped or trimmed, so no byte is
    yielded twice, and a turn event at the resume offset that it already
    had is dropped too. When its consumer falls more than ``max_buffered``
    events behind, it lets go of the subscription and takes it up again
    from the same offset once half of them are taken.

    Use it as ``async with client.events(pane) as stream: async for item
    in stream: ...`` so that leaving the loop early unsubscribes."""

    EXPECT = "subscribed"

    def __init__(
        self,
        client: "Client",
        pane: str,
        *,
        from_offset: Optional[int],
        generation: Optional[int],
        max_buffered: int,
        subscribe_timeout: Any,
    ) -> None:
        if generation is not None and from_offset is None:
            raise ValueError("a stream that resumes a generation needs the offset to resume from (from_offset)")
        super().__init__(client, max_buffered=max_buffered, subscribe_timeout=subscribe_timeout)
        #: The pane.
        self.pane = pane
        self._from = from_offset
        self._generation = generation
        self._offset: Optional[int] = from_offset if generation is not None else None
        # Turn events received at exactly the current offset, and those the
        # host may send again after a resume there.
        self._turns_here: List[t.Event] = []
        self._repeatable: List[t.Event] = []
        self._resume_from: Optional[int] = None
        self._pending_end: Optional[t.EventEnded] = None

    @property
    def generation(self) -> Optional[int]:
        """The pane's generation, from the last start."""
        return self._generation

    @property
    def offset(self) -> Optional[int]:
        """The end offset of the output received (or of the last snapshot):
        where the stream resumes."""
        return self._offset

    def _request(self) -> t.Request:
        if self._generation is None:
            return t.RequestEvents(pane=self.pane, from_=self._from)
        assert self._offset is not None
        self._resume_from = self._offset
        return t.RequestReconnect(pane=self.pane, generation=self._generation, offset=self._offset)

    def _on_subscribed(self, answer: t.Response, first: bool) -> int:
        assert isinstance(answer, t.ResponseSubscribed)
        resumed_at = self._resume_from
        behind = self._state == BEHIND
        start = answer.start
        new_offset = _start_offset(start)
        exact = isinstance(start, t.StreamStartReplay) and resumed_at is not None and new_offset == resumed_at
        self._repeatable = list(self._turns_here) if exact else []
        if not exact:
            self._turns_here = []
        self._generation = answer.generation
        self._offset = new_offset
        if not (behind and exact):
            cause = "subscribed" if first else ("fell_behind" if behind else "reconnected")
            self._push(StreamStarted(pane=self.pane, generation=answer.generation, start=start, cause=cause))
        return answer.subscription

    def _accept(self, event: t.Event) -> Optional[t.Event]:
        """The event as the consumer gets it, or ``None`` to drop it; keeps
        the offset."""
        if isinstance(event, t.EventOutput):
            offset = self._offset
            end = event.offset + len(event.data)
            if offset is not None and end <= offset:
                return None  # Sent again after a resume: had it.
            if offset is not None and event.offset < offset:
                event = t.EventOutput(offset=offset, data=event.data[offset - event.offset :])
            if offset is None or end > offset:
                self._turns_here = []
                self._repeatable = []
            self._offset = end
            return event
        if isinstance(event, TURN_EVENTS):
            if event in self._repeatable and event.offset == self._offset:
                self._repeatable.remove(event)
                return None
            if event.offset == self._offset:
                self._turns_here.append(event)
            return event
        if isinstance(event, t.EventResync):
            self._offset = event.snapshot.offset
            self._turns_here = []
            self._repeatable = []
            return event
        return event

    def _on_event(self, event: t.Event) -> None:
        accepted = self._accept(event)
        if accepted is None:
            return
        self._push(accepted)
        if isinstance(accepted, t.EventEnded):
            self._end()

    def _on_behind_event(self, event: t.Event) -> None:
        # A turn event before the end of what was kept is not sent again by
        # the next subscription (which starts at that end): keep it.
        if isinstance(event, TURN_EVENTS) and self._offset is not None and event.offset < self._offset:
            self._buffer.append(event)
        elif isinstance(event, t.EventEnded) and event.reason != "unsubscribed":
            self._pending_end = event

    def _on_resubscribe_failed(self, error: PanehostError) -> bool:
        # The pane ended (closed) while the consumer was behind: end as it did.
        if self._pending_end is not None and isinstance(error, HostError) and error.code == "UNKNOWN_PANE":
            self._buffer.append(self._pending_end)
            self._end()
            return True
        return False
