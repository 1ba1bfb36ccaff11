"""``watch`` and the synchronous wrapper against a real host."""

from __future__ import annotations

import asyncio

import panehost
from panehost import sync
from support import within


async def next_item(watch: panehost.Watch) -> object:
    return await within(watch.__anext__())


async def until(watch: panehost.Watch, kind: type, pane: str) -> object:
    """The next event of ``kind`` about ``pane``, skipping others."""
    while True:
        item = await next_item(watch)
        if isinstance(item, kind) and _pane_of(item) == pane:
            return item


def _pane_of(item: object) -> str:
    pane = getattr(item, "pane", None)
    return pane.id if isinstance(pane, panehost.PaneSummary) else pane  # type: ignore[return-value]


def test_watch_sees_panes_come_change_and_go(host) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with await panehost.connect(host.socket) as client:
            before = await client.start("shell", command=["sleep", "30"])
            async with client.watch() as watch:
                first = await next_item(watch)
                assert isinstance(first, panehost.WatchStarted) and first.cause == "watching"
                assert [pane.id for pane in first.panes] == [before.id]
                pane = await client.start("shell")
                started = await until(watch, panehost.EventPaneStarted, pane.id)
                assert started.pane.runtime == "shell"  # type: ignore[attr-defined]
                await client.ask(pane.id, "true")
                await until(watch, panehost.EventPaneActivity, pane.id)
                await client.close_pane(pane.id)
                ended = await until(watch, panehost.EventPaneEnded, pane.id)
                assert ended.reason == "closed"  # type: ignore[attr-defined]
                # A lost connection: the watch is made anew, with the list.
                assert client.connection is not None
                client.connection.abort()
                again = await next_item(watch)
                assert isinstance(again, panehost.WatchStarted) and again.cause == "reconnected"
                assert [p.id for p in again.panes] == [before.id]
                later = await client.start("shell", command=["true"])
                arrived = await until(watch, panehost.EventPaneStarted, later.id)
                # A pane that exits before it joins the list arrives exited.
                if not isinstance(arrived.pane.state, panehost.PaneStateExited):  # type: ignore[attr-defined]
                    await until(watch, panehost.EventPaneExited, later.id)

    asyncio.run(main())


def test_watch_sees_a_panes_size_and_title_change(host) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with await panehost.connect(host.socket) as client:
            async with client.watch() as watch:
                first = await next_item(watch)
                assert isinstance(first, panehost.WatchStarted) and first.panes == []
                pane = await client.start("shell")
                started = await until(watch, panehost.EventPaneStarted, pane.id)
                assert started.pane.size != panehost.Size(cols=120, rows=40)  # type: ignore[attr-defined]
                assert await client.resize(pane.id, 120, 40) == panehost.Size(cols=120, rows=40)
                # The next change of the pane with that size (a title the
                # shell set as it started may come first).
                while True:
                    resized = await until(watch, panehost.EventPaneChanged, pane.id)
                    if resized.size == panehost.Size(cols=120, rows=40):  # type: ignore[attr-defined]
                        break
                # The shell receives a backslash and 033: printf turns them
                # into the escape that sets the window title.
                await client.send(pane.id, "printf '\\033]2;%s\\007' py-title", enter=True)
                while True:
                    titled = await until(watch, panehost.EventPaneChanged, pane.id)
                    if titled.title == "py-title":  # type: ignore[attr-defined]
                        break
                # Both are stated at once: the size is still the latest.
                assert titled.size == panehost.Size(cols=120, rows=40)  # type: ignore[attr-defined]
                assert (await client.inspect(pane.id)).pane.title == "py-title"
                await client.close_pane(pane.id)
                await until(watch, panehost.EventPaneEnded, pane.id)

    asyncio.run(main())


def test_the_synchronous_wrapper(host) -> None:  # type: ignore[no-untyped-def]
    with sync.connect(host.socket) as client:
        assert client.welcome.revision == panehost.PROTOCOL_REVISION
        pane = client.start("shell")
        report = client.ask(pane.id, "echo sync-$((40 + 2))")
        assert "sync-42" in report.added_text.splitlines()
        try:
            client.inspect("p-none")
        except panehost.HostError as error:
            assert error.code == "UNKNOWN_PANE"
        else:
            raise AssertionError("no error")
        try:
            client.ask(pane.id, "sleep 2", call_timeout=0.2)
        except panehost.CallTimeout:
            pass
        else:
            raise AssertionError("no timeout")
        client.interrupt(pane.id)
        seen = bytearray()
        with client.events(pane.id, from_offset=0) as stream:
            for item in stream:
                if isinstance(item, panehost.EventOutput):
                    seen += item.data
                    if b"sync-42" in seen:
                        break
        closed = client.close_pane(pane.id)
        assert closed.pane == pane.id
        assert client.list() == []
