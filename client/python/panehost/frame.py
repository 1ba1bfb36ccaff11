"""Frames: a 4-byte big-endian payload length, then the payload
(PROTOCOL.md, section 2)::

    +------------------------------+------------------------------+
    | length: u32, big-endian      | payload: exactly `length`    |
    +------------------------------+------------------------------+
"""

from __future__ import annotations

import asyncio
import struct

from .errors import ProtocolViolation

_PREFIX = struct.Struct(">I")


def encode_frame(payload: bytes, limit: int) -> bytes:
    """The frame carrying ``payload``.

    Raises :class:`ValueError` when the payload is over ``limit`` (nothing
    should be sent then)."""
    if len(payload) > limit:
        raise ValueError(f"a frame of {len(payload)} bytes is over the limit of {limit}")
    return _PREFIX.pack(len(payload)) + payload


async def read_frame(reader: asyncio.StreamReader, limit: int) -> bytes:
    """The next frame's payload.

    The length prefix is compared with ``limit`` before anything is read
    for the payload. Raises :class:`asyncio.IncompleteReadError` at the end
    of the stream, and :class:`ProtocolViolation` for a prefix over the
    limit."""
    prefix = await reader.readexactly(_PREFIX.size)
    (length,) = _PREFIX.unpack(prefix)
    if length > limit:
        raise ProtocolViolation(f"the host sent a frame of {length} bytes, over the limit of {limit}")
    return await reader.readexactly(length)
