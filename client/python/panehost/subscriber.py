"""What a pane stream and a watch share: subscribing on the client's
connection, a bounded buffer between the connection's reader and the
consumer, and subscribing again after a lost connection (with the client's
reconnect policy) or after the consumer fell behind."""

from __future__ import annotations

import asyncio
import collections
from typing import TYPE_CHECKING, Any, Deque, Optional

from . import _types as t
from .connection import Connection, Sink
from .errors import CallTimeout, ConnectionLost, PanehostError

if TYPE_CHECKING:
    from .client import Client

# Where a subscriber stands.
NEW = "new"  # never subscribed
SUBSCRIBED = "subscribed"
LOST = "lost"  # the connection was lost before the end
BEHIND = "behind"  # the consumer fell behind: unsubscribed, to subscribe again
ENDED = "ended"  # its `ended` event was buffered
CLOSED = "closed"  # closed by its owner


class Subscriber(Sink):
    """The machinery; :class:`~panehost.PaneStream` and
    :class:`~panehost.Watch` say what to subscribe with and what to make
    of each answer and event."""

    EXPECT = ""
    """The answer kind of the subscribing request."""

    def __init__(self, client: "Client", *, max_buffered: int, subscribe_timeout: Any) -> None:
        from .client import DEFAULT

        self._client = client
        self._max_buffered = max(2, max_buffered)
        timeout = subscribe_timeout
        if timeout is DEFAULT:
            timeout = client._request_timeout
        self._subscribe_timeout: Optional[float] = timeout
        self._buffer: Deque[Any] = collections.deque()
        self._state = NEW
        self._connection: Optional[Connection] = None
        self._subscription: Optional[int] = None
        self._wakeup: Optional[asyncio.Event] = None
        client._register(self)

    # For the consumer.

    @property
    def subscription(self) -> Optional[int]:
        """The host's id of the current subscription, or ``None``."""
        return self._subscription if self._state == SUBSCRIBED else None

    @property
    def buffered(self) -> int:
        """Items received and not yet taken."""
        return len(self._buffer)

    def __aiter__(self) -> "Subscriber":
        return self

    async def __anext__(self) -> Any:
        while True:
            if self._state in (NEW, BEHIND) and len(self._buffer) <= self._max_buffered // 2:
                await self._subscribe()
                continue
            if self._state == LOST and not self._buffer:
                await self._subscribe()
                continue
            if self._buffer:
                return self._buffer.popleft()
            if self._state in (ENDED, CLOSED):
                raise StopAsyncIteration
            if self._wakeup is None:
                self._wakeup = asyncio.Event()
            self._wakeup.clear()
            await self._wakeup.wait()

    async def subscribe(self) -> None:
        """Subscribes now, if it has not yet (iterating does it otherwise).

        Raises what the first ``__anext__`` would: :class:`HostError` such as
        ``UNKNOWN_PANE``, :class:`CallTimeout`, :class:`ConnectionLost`."""
        while self._state == NEW:
            await self._subscribe()

    async def aclose(self) -> None:
        """Ends the subscription (``unsubscribe``); iterating then stops.
        The client's connection stays open."""
        await self._shutdown()

    async def __aenter__(self) -> "Subscriber":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    # For the subclass.

    def _request(self) -> t.Request:
        raise NotImplementedError

    def _on_subscribed(self, answer: t.Response, first: bool) -> int:
        """Takes the subscribing answer (in the reader, before any event of
        it), buffers what it says, and returns the subscription id."""
        raise NotImplementedError

    def _on_event(self, event: t.Event) -> None:
        """An event of the current subscription, in order."""
        raise NotImplementedError

    def _on_behind_event(self, event: t.Event) -> None:
        """An event that arrived after the consumer fell behind, before the
        host ended the subscription: dropped unless the subclass keeps it."""

    def _on_resubscribe_failed(self, error: PanehostError) -> bool:
        """Subscribing again failed with ``error``; True when the subclass
        ended the stream instead of raising it."""
        return False

    def _push(self, item: Any) -> None:
        self._buffer.append(item)
        if self._wakeup is not None:
            self._wakeup.set()
        if self._state == SUBSCRIBED and len(self._buffer) > self._max_buffered:
            self._fall_behind()

    def _end(self) -> None:
        self._state = ENDED
        self._client._unregister(self)
        if self._wakeup is not None:
            self._wakeup.set()

    # The machinery.

    def event(self, subscription: int, event: t.Event) -> None:
        if subscription != self._subscription:
            return  # A subscription this one let go of and replaced.
        if self._state == SUBSCRIBED:
            self._on_event(event)
        elif self._state == BEHIND:
            self._on_behind_event(event)

    def lost(self, error: PanehostError) -> None:
        if self._state == SUBSCRIBED:
            self._state = LOST
            self._lost_error = error
            if self._wakeup is not None:
                self._wakeup.set()

    def _fall_behind(self) -> None:
        """Lets go of the subscription until the consumer has caught up."""
        self._state = BEHIND
        connection, subscription = self._connection, self._subscription
        if connection is None or subscription is None or connection.is_closed:
            return
        try:
            request_id, future = connection.send(t.RequestUnsubscribe(subscription=subscription), "unsubscribed")
        except (ConnectionLost, ValueError):
            return
        future.add_done_callback(lambda done: done.cancelled() or done.exception())

    async def _subscribe(self) -> None:
        first = self._state == NEW
        reconnecting = self._state == LOST
        try:
            connection = await self._client.current_connection()
        except ConnectionLost:
            raise
        request = self._request()

        def hook(answer: t.Response) -> None:
            subscription = self._on_subscribed(answer, first)
            self._connection = connection
            self._subscription = subscription
            if self._state not in (ENDED, CLOSED):
                self._state = SUBSCRIBED
            connection.add_sink(subscription, self)
            if len(self._buffer) > self._max_buffered:
                self._fall_behind()

        request_id, future = connection.send(request, self.EXPECT, hook)
        try:
            if self._subscribe_timeout is None:
                await future
            else:
                try:
                    await asyncio.wait_for(asyncio.shield(future), self._subscribe_timeout)
                except asyncio.TimeoutError:
                    raise CallTimeout(f"`{request.TAG}`", self._subscribe_timeout) from None
        except ConnectionLost:
            if self._client.reconnect_policy is None:
                self._end_with_error()
                raise
            self._state = LOST if (reconnecting or not first) else NEW
        except PanehostError as error:
            if not first and self._on_resubscribe_failed(error):
                return
            raise
        finally:
            connection.forget(request_id)

    def _end_with_error(self) -> None:
        self._state = CLOSED
        self._client._unregister(self)

    async def _shutdown(self) -> None:
        state = self._state
        self._state = CLOSED
        self._client._unregister(self)
        if self._wakeup is not None:
            self._wakeup.set()
        connection, subscription = self._connection, self._subscription
        if state != SUBSCRIBED or connection is None or subscription is None or connection.is_closed:
            return
        connection.remove_sink(subscription)
        try:
            request_id, future = connection.send(t.RequestUnsubscribe(subscription=subscription), "unsubscribed")
        except (ConnectionLost, ValueError):
            return
        try:
            await asyncio.wait_for(future, 5.0)
        except (asyncio.TimeoutError, PanehostError):
            pass
        finally:
            connection.forget(request_id)
