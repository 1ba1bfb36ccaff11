"""What the client makes of a host that breaks the protocol: a server of the
test's own on a private socket answers the handshake, then misbehaves."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import struct
import tempfile
from typing import Awaitable, Callable

import pytest

import panehost

WELCOME = {"welcome": {"protocol": 1, "revision": 6, "host": "fake 0", "encoding": "json"}}

Behaviour = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def frame(value: object) -> bytes:
    payload = json.dumps(value).encode() if not isinstance(value, bytes) else value
    return struct.pack(">I", len(payload)) + payload


async def read_frame(reader: asyncio.StreamReader) -> dict:
    (length,) = struct.unpack(">I", await reader.readexactly(4))
    return json.loads(await reader.readexactly(length))


async def serve(behaviour: Behaviour, test: Callable[[str], Awaitable[None]]) -> None:
    directory = tempfile.mkdtemp(prefix="phpy-fake-", dir="/tmp")
    os.chmod(directory, 0o700)
    path = os.path.join(directory, "host.sock")

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        hello = await read_frame(reader)
        assert hello["revision"] == panehost.PROTOCOL_REVISION and hello["encoding"] == "json"
        writer.write(frame(WELCOME))
        try:
            await behaviour(reader, writer)
        finally:
            writer.close()

    server = await asyncio.start_unix_server(handle, path=path)
    try:
        await asyncio.wait_for(test(path), 20)
    finally:
        server.close()
        await server.wait_closed()
        shutil.rmtree(directory, ignore_errors=True)


def test_a_frame_over_the_limit_closes_the_connection() -> None:
    async def behaviour(reader, writer) -> None:  # type: ignore[no-untyped-def]
        await read_frame(reader)
        writer.write(struct.pack(">I", panehost.MAX_HOST_FRAME + 1))
        await writer.drain()
        await asyncio.sleep(5)

    async def test(path: str) -> None:
        client = await panehost.connect(path, reconnect=None)
        with pytest.raises(panehost.ProtocolViolation, match="over the limit"):
            await client.list()
        await client.aclose()

    asyncio.run(serve(behaviour, test))


def test_an_answer_of_another_kind_and_a_frame_that_is_not_json() -> None:
    async def behaviour(reader, writer) -> None:  # type: ignore[no-untyped-def]
        first = await read_frame(reader)
        writer.write(frame({"response": {"id": first["id"], "body": {"notified": {}}}}))
        second = await read_frame(reader)
        # A frame split across writes, and an event of no subscription: ignored.
        whole = frame({"event": {"subscription": 99, "event": {"ended": {"reason": "closed"}}}})
        writer.write(whole[:3])
        await writer.drain()
        writer.write(whole[3:])
        writer.write(frame({"error": {"id": second["id"], "error": {"code": "NEWER_CODE", "message": "m", "limitation": "NEWER_LIMIT"}}}))
        await read_frame(reader)
        writer.write(frame(b"{x"))
        await writer.drain()
        await asyncio.sleep(5)

    async def test(path: str) -> None:
        client = await panehost.connect(path, reconnect=None)
        with pytest.raises(panehost.ProtocolViolation, match="expected `panes`, got `notified`"):
            await client.list()
        with pytest.raises(panehost.HostError) as caught:
            await client.inspect("p1")
        assert caught.value.code == "NEWER_CODE" and caught.value.limitation == "NEWER_LIMIT"
        with pytest.raises(panehost.ProtocolViolation, match="not the protocol"):
            await client.list()
        await client.aclose()

    asyncio.run(serve(behaviour, test))


def test_a_host_that_never_answers_meets_the_clients_deadline() -> None:
    async def behaviour(reader, writer) -> None:  # type: ignore[no-untyped-def]
        await read_frame(reader)
        await asyncio.sleep(5)

    async def test(path: str) -> None:
        client = await panehost.connect(path, request_timeout=0.2)
        with pytest.raises(panehost.CallTimeout):
            await client.list()
        assert client.connection is not None and client.connection.in_flight == 0
        await client.aclose()

    asyncio.run(serve(behaviour, test))
