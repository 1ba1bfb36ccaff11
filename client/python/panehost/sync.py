"""A thin synchronous wrapper of the asyncio client, for code without an
event loop::

    from panehost import sync

    with sync.connect() as client:
        pane = client.start("shell")
        print(client.ask(pane.id, "echo hello").added_text)
        with client.events(pane.id, from_offset=0) as stream:
            for item in stream:
                ...

The client runs an event loop of its own in a background thread; each
method runs the asyncio method of the same name there and waits for it.
Arguments, answers and exceptions are those of :class:`panehost.Client`.
"""

from __future__ import annotations

import asyncio
import functools
import threading
from typing import Any, Awaitable, Iterator, Optional, TypeVar

from .client import Client
from .stream import PaneStream
from .subscriber import Subscriber
from .watch import Watch

T = TypeVar("T")


class _Loop:
    """An event loop running in a daemon thread of its own."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self._thread = threading.Thread(target=self._run, name="panehost-sync", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def run(self, coroutine: Awaitable[T]) -> T:
        future = asyncio.run_coroutine_threadsafe(coroutine, self.loop)  # type: ignore[arg-type]
        try:
            return future.result()
        except BaseException:
            future.cancel()
            raise

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


class SyncSubscription:
    """A :class:`~panehost.PaneStream` or :class:`~panehost.Watch` as a plain
    iterator. ``close()`` (or leaving the ``with`` block) unsubscribes."""

    def __init__(self, loop: _Loop, subscriber: Subscriber) -> None:
        self._loop = loop
        #: The asyncio stream or watch it wraps (its properties are safe to read).
        self.inner = subscriber

    def __iter__(self) -> Iterator[Any]:
        return self

    def __next__(self) -> Any:
        try:
            return self._loop.run(self.inner.__anext__())
        except StopAsyncIteration:
            raise StopIteration from None

    def subscribe(self) -> None:
        """Subscribes now (iterating does it otherwise)."""
        self._loop.run(self.inner.subscribe())

    def close(self) -> None:
        """Ends the subscription."""
        self._loop.run(self.inner.aclose())

    def __enter__(self) -> "SyncSubscription":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class SyncClient:
    """:class:`panehost.Client` with plain methods. Make one with
    :func:`connect`; close it with :meth:`close` or ``with``. Methods may
    be called from several threads at once."""

    def __init__(self, loop: _Loop, client: Client) -> None:
        self._loop = loop
        #: The asyncio client it wraps.
        self.inner = client

    @property
    def welcome(self) -> Any:
        """The host's welcome."""
        return self.inner.welcome

    @property
    def socket_path(self) -> str:
        """The socket path."""
        return self.inner.socket_path

    def events(self, pane: str, **options: Any) -> SyncSubscription:
        """The pane's events as an iterator; see :meth:`panehost.Client.events`."""
        stream: PaneStream = self._loop.run(_make(lambda: self.inner.events(pane, **options)))
        return SyncSubscription(self._loop, stream)

    def watch(self, **options: Any) -> SyncSubscription:
        """Every pane as an iterator; see :meth:`panehost.Client.watch`."""
        watch: Watch = self._loop.run(_make(lambda: self.inner.watch(**options)))
        return SyncSubscription(self._loop, watch)

    def close(self) -> None:
        """Closes the client and stops its thread."""
        if self._loop.loop.is_closed():
            return
        try:
            self._loop.run(self.inner.aclose())
        finally:
            self._loop.stop()

    def __enter__(self) -> "SyncClient":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


async def _make(factory: Any) -> Any:
    """Runs ``factory`` inside the loop (the streams need a running loop)."""
    return factory()


_FORWARDED = (
    "start",
    "login",
    "send",
    "ask",
    "interrupt",
    "inspect",
    "history",
    "list",
    "resize",
    "close_pane",
    "runtimes",
    "probe_runtime",
    "notify",
    "wait_for",
    "call",
)


def _forward(name: str) -> Any:
    method = getattr(Client, name)

    @functools.wraps(method)
    def call(self: SyncClient, *args: Any, **kwargs: Any) -> Any:
        return self._loop.run(getattr(self.inner, name)(*args, **kwargs))

    return call


for _name in _FORWARDED:
    setattr(SyncClient, _name, _forward(_name))


def connect(socket_path: Optional[str] = None, **options: Any) -> SyncClient:
    """Connects as :func:`panehost.connect` does, with the same options."""
    from .client import connect as connect_async

    loop = _Loop()
    try:
        client = loop.run(connect_async(socket_path, **options))
    except BaseException:
        loop.stop()
        raise
    return SyncClient(loop, client)
