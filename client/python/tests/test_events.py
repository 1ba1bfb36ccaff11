"""Pane streams against a real host: following output, and resuming after
a dropped connection or a restarted host with no byte repeated or skipped."""

from __future__ import annotations

import asyncio

import panehost
from support import Transcript, follow_until, within

COUNT = 400
SCRIPT = f"for i in $(seq 1 {COUNT}); do echo line-$i; sleep 0.01; done; echo all-done"


def lines_of(text: str) -> list:
    return [line for line in text.replace("\r", "").split("\n") if line.startswith("line-")]


async def whole_output(client: panehost.Client, pane: str) -> bytes:
    """Every byte the pane printed, read afresh from offset 0 to its end."""
    transcript = Transcript()
    async with client.events(pane, from_offset=0) as stream:
        await follow_until(stream, transcript, lambda t: t.items and isinstance(t.items[-1], panehost.EventEnded))
    return bytes(transcript.data)


def test_events_follow_a_command_to_its_end(host) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with await panehost.connect(host.socket) as client:
            pane = await client.start("shell", command=["sh", "-c", "echo compiling; sleep 0.3; echo done; exit 3"])
            transcript = Transcript()
            async with client.events(pane.id, from_offset=0) as stream:
                await follow_until(
                    stream, transcript, lambda t: bool(t.items) and isinstance(t.items[-1], panehost.EventEnded)
                )
                kinds = [type(item).__name__ for item in transcript.items]
                assert kinds[0] == "StreamStarted"
                assert transcript.items[0].cause == "subscribed"
                assert isinstance(transcript.items[0].start, panehost.StreamStartReplay)
                exited = [item for item in transcript.items if isinstance(item, panehost.EventExited)]
                assert len(exited) == 1 and exited[0].status.code == 3 and exited[0].offset == transcript.end
                assert transcript.items[-1].reason == "exited"
                assert transcript.text.replace("\r", "") == "compiling\ndone\n"
                assert stream.offset == transcript.end
                # The loop ends after `ended`.
                assert [item async for item in stream] == []

    asyncio.run(main())


def check_exact(transcript: Transcript, whole: bytes) -> None:
    assert bytes(transcript.data) == whole[transcript.start :], "a byte was repeated or skipped"
    assert lines_of(transcript.text) == [f"line-{n}" for n in range(1, COUNT + 1)]


def test_a_stream_resumes_after_a_dropped_connection_exactly(host) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with await panehost.connect(host.socket) as client:
            pane = await client.start("shell", command=["sh", "-c", SCRIPT])
            transcript = Transcript()
            async with client.events(pane.id, from_offset=0) as stream:
                drops = 0
                for target in (50, 150, 300):
                    await follow_until(stream, transcript, lambda t, n=target: f"line-{n}\r" in t.text)
                    first = client.connection
                    assert first is not None
                    first.abort()  # as a connection the network dropped
                    drops += 1
                await follow_until(stream, transcript, lambda t: "all-done" in t.text)
                starts = [item for item in transcript.items if isinstance(item, panehost.StreamStarted)]
                assert [s.cause for s in starts] == ["subscribed"] + ["reconnected"] * drops
                assert all(isinstance(s.start, panehost.StreamStartReplay) for s in starts)
                assert client.connection is not first
            check_exact(transcript, await whole_output(client, pane.id))

    asyncio.run(main())


def test_a_stream_resumes_across_a_restart_of_the_host(host) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with await panehost.connect(host.socket) as client:
            pane = await client.start("shell", command=["sh", "-c", SCRIPT])
            transcript = Transcript()
            async with client.events(pane.id, from_offset=0) as stream:
                await follow_until(stream, transcript, lambda t: "line-100\r" in t.text)
                # The host goes away (its panes wait in their keepers) and
                # comes back on the same socket; the stream finds it.
                await asyncio.get_running_loop().run_in_executor(None, host.restart)
                await follow_until(stream, transcript, lambda t: "all-done" in t.text, seconds=40)
                starts = [item for item in transcript.items if isinstance(item, panehost.StreamStarted)]
                assert starts[-1].cause == "reconnected"
                assert starts[-1].generation == pane.generation
                assert isinstance(starts[-1].start, panehost.StreamStartReplay), starts[-1]
            check_exact(transcript, await whole_output(client, pane.id))

    asyncio.run(main())


def test_a_stream_without_reconnecting_ends_with_the_lost_connection(host) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        client = await panehost.connect(host.socket, reconnect=None)
        pane = await client.start("shell", command=["sh", "-c", SCRIPT])
        transcript = Transcript()
        stream = client.events(pane.id)
        await follow_until(stream, transcript, lambda t: "line-20\r" in t.text)
        assert client.connection is not None
        client.connection.abort()
        try:
            while True:
                transcript.record(await within(stream.__anext__()))
        except panehost.ConnectionLost:
            pass
        await client.aclose()

    asyncio.run(main())


def test_a_consumer_that_falls_behind_loses_nothing(host) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with await panehost.connect(host.socket, max_buffered_events=4) as client:
            pane = await client.start("shell", command=["sh", "-c", SCRIPT])
            transcript = Transcript()
            async with client.events(pane.id, from_offset=0) as stream:
                await follow_until(stream, transcript, lambda t: "line-10\r" in t.text)
                # Stop reading while the pane prints: the stream lets go of
                # its subscription rather than buffer without bound.
                await client.wait_for(pane.id, "line-200", target="output", from_offset=0)
                assert stream.buffered <= 2 * 4 + 1
                await follow_until(stream, transcript, lambda t: "all-done" in t.text)
                # It did let go, and took the subscription up again.
                assert 'request{op="reconnect"}' in host.log()
            check_exact(transcript, await whole_output(client, pane.id))

    asyncio.run(main())


def test_unknown_pane_is_raised_by_the_first_step(host) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with await panehost.connect(host.socket) as client:
            stream = client.events("p-none")
            try:
                await stream.__anext__()
            except panehost.HostError as error:
                assert error.code == "UNKNOWN_PANE"
            else:
                raise AssertionError("no error")

    asyncio.run(main())


def test_a_stream_resumed_by_a_new_client_from_a_generation_and_offset(host) -> None:  # type: ignore[no-untyped-def]
    async def main() -> None:
        async with await panehost.connect(host.socket) as client:
            pane = await client.start("shell", command=["sh", "-c", "echo first; read line; echo second-$line"])
            transcript = Transcript()
            async with client.events(pane.id, from_offset=0) as stream:
                await follow_until(stream, transcript, lambda t: "first" in t.text)
                generation, offset = stream.generation, stream.offset
        # Another process (an API server after its restart) picks up there.
        async with await panehost.connect(host.socket) as client:
            resumed = Transcript()
            async with client.events(pane.id, from_offset=offset, generation=generation) as stream:
                await stream.subscribe()
                await client.send(pane.id, "x", enter=True)
                await follow_until(stream, resumed, lambda t: "second-x" in t.text)
            start = resumed.items[0]
            assert isinstance(start, panehost.StreamStarted)
            assert isinstance(start.start, panehost.StreamStartReplay) and start.offset == offset
            assert "first" not in resumed.text
            whole = await whole_output(client, pane.id)
            assert whole.startswith(bytes(transcript.data) + bytes(resumed.data))
            try:
                client.events(pane.id, generation=1)
            except ValueError:
                pass
            else:
                raise AssertionError("a generation without an offset was taken")

    asyncio.run(main())
