"""Every pane of the host as an async iterator (``watch``, revision 3)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, List, Union

from . import _types as t
from .subscriber import BEHIND, Subscriber

if TYPE_CHECKING:
    from .client import Client

WATCH_REVISION = 3
"""The revision that added ``watch``."""


@dataclass(frozen=True)
class WatchStarted:
    """Every pane now, oldest first: yielded first, and whenever the watch
    was made anew, in place of the events that were not delivered.
    ``cause`` is ``"watching"`` (the first), ``"reconnected"`` (after a lost
    connection) or ``"fell_behind"`` (after the consumer fell behind)."""

    panes: List[t.PaneSummary]
    cause: str


WatchItem = Union[WatchStarted, t.Event]
"""What a :class:`Watch` yields."""


class Watch(Subscriber):
    """The host's panes (``client.watch()``): a :class:`WatchStarted`, then
    ``EventPaneStarted``, ``EventPaneActivity``, ``EventPaneChanged`` (a
    pane's size or window title changed; it states both as they are now;
    from a host of revision 8 or later), ``EventPaneExited``,
    ``EventPaneEnded`` and ``EventPaneList`` (the host dropped ``missed``
    events for this watcher: start over from its ``panes``), and last
    ``EventEnded``.

    A lost connection makes the watch anew on the next one; a consumer that
    falls more than ``max_buffered`` events behind lets go of it and
    watches anew once it caught up. Either way a new :class:`WatchStarted`
    stands for what was missed."""

    EXPECT = "watching"

    def __init__(self, client: "Client", *, max_buffered: int, subscribe_timeout: Any) -> None:
        super().__init__(client, max_buffered=max_buffered, subscribe_timeout=subscribe_timeout)

    def _request(self) -> t.Request:
        self._client.require_revision("watch", WATCH_REVISION)
        return t.RequestWatch()

    def _on_subscribed(self, answer: t.Response, first: bool) -> int:
        assert isinstance(answer, t.ResponseWatching)
        cause = "watching" if first else ("fell_behind" if self._state == BEHIND else "reconnected")
        self._push(WatchStarted(panes=list(answer.panes), cause=cause))
        return answer.subscription

    def _on_event(self, event: t.Event) -> None:
        self._push(event)
        if isinstance(event, t.EventEnded):
            self._end()
