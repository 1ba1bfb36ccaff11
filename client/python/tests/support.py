"""Helpers of the tests against a real host."""

from __future__ import annotations

import asyncio
from typing import Awaitable, Callable, List, Optional, TypeVar

import panehost

WAIT = 20.0
"""How long any single wait may take, in seconds."""

T = TypeVar("T")


async def within(awaitable: Awaitable[T], seconds: float = WAIT) -> T:
    """``awaitable``'s result, failing the test when it takes longer."""
    return await asyncio.wait_for(awaitable, seconds)


class Transcript:
    """The output of a pane stream, checked as it comes: every ``output``
    starts where the one before it ended (or where a start said)."""

    def __init__(self) -> None:
        self.data = bytearray()
        self.start: Optional[int] = None
        self.end: Optional[int] = None
        self.items: List[object] = []

    def record(self, item: object) -> None:
        self.items.append(item)
        if isinstance(item, panehost.StreamStarted):
            offset = item.offset
            if self.end is not None and isinstance(item.start, panehost.StreamStartReplay):
                assert offset == self.end, f"a replay from {offset} after output up to {self.end}"
            if self.start is None:
                self.start = offset
            self.end = offset
        elif isinstance(item, panehost.EventOutput):
            assert item.offset == self.end, f"output at {item.offset}, expected {self.end}: a byte skipped or repeated"
            self.data += item.data
            self.end = item.offset + len(item.data)

    @property
    def text(self) -> str:
        return self.data.decode("utf-8", "replace")


async def follow_until(
    stream: panehost.PaneStream, transcript: Transcript, done: Callable[[Transcript], bool], seconds: float = WAIT
) -> None:
    """Records the stream's items until ``done`` holds."""

    async def run() -> None:
        while not done(transcript):
            try:
                item = await stream.__anext__()
            except StopAsyncIteration:
                raise AssertionError(f"the stream ended before the condition held; it has {transcript.text!r}")
            transcript.record(item)

    await within(run(), seconds)


async def until_idle(client: panehost.Client, pane: str) -> None:
    """Returns once the pane's turn has ended (its activity ``idle``)."""

    async def run() -> None:
        while (await client.inspect(pane)).pane.activity != "idle":
            await asyncio.sleep(0.02)

    await within(run())


async def until_busy(client: panehost.Client, pane: str) -> None:
    """Returns once a turn has started in the pane (its activity ``busy``):
    for a shell, once the command has begun, not only been echoed."""

    async def run() -> None:
        while (await client.inspect(pane)).pane.activity != "busy":
            await asyncio.sleep(0.02)

    await within(run())
