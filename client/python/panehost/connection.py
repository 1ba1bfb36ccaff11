"""One connection to the host: the checked socket, the handshake, requests
matched to their answers by id, and events handed to their subscription.

Reconnecting, timeouts and the typed operations are the business of
:class:`panehost.Client` above it."""

from __future__ import annotations

import asyncio
import itertools
import json
import socket
from typing import Any, Callable, Dict, Optional, Tuple

from . import _types as t
from ._wire import DecodeError
from .errors import ConnectionLost, HostError, PanehostError, ProtocolViolation, RefusedError
from .frame import encode_frame, read_frame
from .protocol import MAX_CLIENT_FRAME, MAX_HELLO_FRAME, MAX_HOST_FRAME, PROTOCOL_REVISION, PROTOCOL_VERSION
from .socket_path import check_peer, check_socket_dir

AnswerHook = Callable[[t.Response], Any]
"""Runs in the reader when the answer arrives, before any later frame is
handled; its return value is the request's result."""


class Sink:
    """Receives the events of one subscription. Both methods run in the
    connection's reader and must not block."""

    def event(self, subscription: int, event: t.Event) -> None:
        """An event of ``subscription``, in the order the host sent it."""

    def lost(self, error: PanehostError) -> None:
        """The connection closed before the subscription's ``ended`` event."""


class _Pending:
    __slots__ = ("expect", "future", "hook")

    def __init__(self, expect: str, future: "asyncio.Future[Any]", hook: Optional[AnswerHook]):
        self.expect = expect
        self.future = future
        self.hook = hook


async def open_socket(path: str, timeout: float) -> socket.socket:
    """A connected Unix socket at ``path`` whose directory and listener pass
    the checks of docs/SECURITY.md; nothing has been sent on it.

    Raises :class:`~panehost.UntrustedHost` when a check fails, and
    ``OSError`` (``FileNotFoundError``, ``ConnectionRefusedError``) when no
    host listens there."""
    check_socket_dir(path)
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.setblocking(False)
        loop = asyncio.get_running_loop()
        try:
            await asyncio.wait_for(loop.sock_connect(sock, path), timeout)
        except asyncio.TimeoutError:
            raise ConnectionLost(f"the host at {path} did not accept the connection within {timeout:g} s") from None
        check_peer(path, sock)
    except BaseException:
        sock.close()
        raise
    return sock


class Connection:
    """A connection after a ``welcome``. Requests may be sent without waiting
    for earlier answers; the socket is read all the time by one task, so
    that no slow consumer holds up another."""

    def __init__(self, path: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, welcome: t.Welcome):
        #: The socket path.
        self.path = path
        #: The host's welcome: its protocol, revision and name.
        self.welcome = welcome
        self._reader = reader
        self._writer = writer
        self._write_lock = asyncio.Lock()
        self._ids = itertools.count(1)
        self._pending: Dict[int, _Pending] = {}
        self._sinks: Dict[int, Sink] = {}
        self._closed: Optional[PanehostError] = None
        self._connection_error: Optional[HostError] = None
        self._closed_event = asyncio.Event()
        self._task = asyncio.ensure_future(self._read_loop())

    @classmethod
    async def open(cls, path: str, *, client_name: str, timeout: float) -> "Connection":
        """Connects to ``path``, checks it, and performs the handshake in the
        JSON encoding at :data:`~panehost.protocol.PROTOCOL_REVISION`.

        Raises :class:`~panehost.RefusedError` when the host refuses,
        :class:`~panehost.UntrustedHost` when a socket check fails,
        :class:`~panehost.ConnectionLost` when the connection fails or closes
        before the reply (``OSError`` is its ``__cause__``), and
        :class:`~panehost.CallTimeout`-like :class:`ConnectionLost` when no
        reply comes within ``timeout`` seconds."""
        try:
            sock = await open_socket(path, timeout)
        except OSError as error:
            raise ConnectionLost(f"cannot connect to the host at {path}: {error.strerror or error}") from error
        try:
            reader, writer = await asyncio.open_unix_connection(sock=sock, limit=2**16)
        except BaseException:
            sock.close()
            raise
        try:
            welcome = await asyncio.wait_for(_handshake(reader, writer, client_name), timeout)
        except asyncio.TimeoutError:
            writer.close()
            raise ConnectionLost(f"the host at {path} sent no handshake reply within {timeout:g} s") from None
        except BaseException:
            writer.close()
            raise
        return cls(path, reader, writer, welcome)

    @property
    def is_closed(self) -> bool:
        """True once the connection closed."""
        return self._closed is not None

    @property
    def in_flight(self) -> int:
        """Requests written and not answered (nor forgotten) yet."""
        return len(self._pending)

    async def wait_closed(self) -> None:
        """Returns once the connection has closed."""
        await self._closed_event.wait()

    def send(self, request: t.Request, expect: str, hook: Optional[AnswerHook] = None) -> Tuple[int, "asyncio.Future[Any]"]:
        """Writes ``request`` and returns its id and a future of its answer:
        the answer variant (or ``hook``'s result), :class:`HostError` for an
        error answer, :class:`ProtocolViolation` for an answer of another
        kind than ``expect``, :class:`ConnectionLost` (``request_sent``) when
        the connection closes first.

        Raises :class:`ValueError` when the request does not fit into a
        frame and :class:`ConnectionLost` when the connection is closed;
        nothing is written then."""
        if self._closed is not None:
            raise ConnectionLost(str(self._closed), request_sent=False)
        request_id = next(self._ids)
        frame = encode_frame(
            json.dumps(t.RequestFrame(id=request_id, request=request).to_json(), separators=(",", ":")).encode(),
            MAX_CLIENT_FRAME,
        )
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = _Pending(expect, future, hook)
        self._writer.write(frame)
        asyncio.ensure_future(self._drain())
        return request_id, future

    def forget(self, request_id: int) -> None:
        """Drops request ``request_id``: its answer, when it comes, is ignored."""
        pending = self._pending.pop(request_id, None)
        if pending is not None and not pending.future.done():
            pending.future.cancel()

    def add_sink(self, subscription: int, sink: Sink) -> None:
        """Hands the events of ``subscription`` to ``sink`` until its ``ended``."""
        self._sinks[subscription] = sink

    def remove_sink(self, subscription: int) -> None:
        """Drops the events of ``subscription`` from now on."""
        self._sinks.pop(subscription, None)

    def abort(self) -> None:
        """Closes the connection at once, as a lost connection: pending
        requests and sinks are told it was lost."""
        self._finish(ConnectionLost(f"the connection to the host at {self.path} was closed by the client"))
        self._writer.transport.abort()

    async def close(self) -> None:
        """Closes the connection and waits until it is closed."""
        if self._closed is None:
            self._finish(ConnectionLost(f"the connection to the host at {self.path} was closed by the client"))
        self._writer.close()
        try:
            await self._writer.wait_closed()
        except (OSError, ConnectionError):
            pass
        if not self._task.done():
            self._task.cancel()
        try:
            await self._task
        except (asyncio.CancelledError, Exception):
            pass

    async def _drain(self) -> None:
        async with self._write_lock:
            try:
                await self._writer.drain()
            except (OSError, ConnectionError):
                pass  # The reader sees the connection close and reports it.

    async def _read_loop(self) -> None:
        error: PanehostError
        try:
            while True:
                payload = await read_frame(self._reader, MAX_HOST_FRAME)
                self._dispatch(payload)
        except asyncio.IncompleteReadError:
            cause = self._connection_error
            detail = f": {cause}" if cause else ""
            error = ConnectionLost(f"the connection to the host at {self.path} closed{detail}", request_sent=True)
        except (OSError, ConnectionError) as failure:
            error = ConnectionLost(f"the connection to the host at {self.path} failed: {failure}", request_sent=True)
        except PanehostError as failure:
            error = failure
        except asyncio.CancelledError:
            error = ConnectionLost(f"the connection to the host at {self.path} was closed", request_sent=True)
        self._finish(error)
        self._writer.transport.abort()

    def _dispatch(self, payload: bytes) -> None:
        try:
            message = t.ServerMessage.from_json(json.loads(payload))
        except (ValueError, DecodeError) as error:
            raise ProtocolViolation(f"the host sent a message that is not the protocol: {error}") from None
        if isinstance(message, t.ServerMessageResponse):
            pending = self._pending.pop(message.id, None)
            if pending is None or pending.future.done():
                return  # Forgotten: timed out or cancelled.
            body = message.body
            if body.TAG != pending.expect:
                got = body.tag if isinstance(body, t.ResponseOther) else body.TAG
                pending.future.set_exception(
                    ProtocolViolation(f"unexpected answer from the host: expected `{pending.expect}`, got `{got}`")
                )
                return
            try:
                result = pending.hook(body) if pending.hook is not None else body
            except PanehostError as error:
                pending.future.set_exception(error)
                return
            pending.future.set_result(result)
        elif isinstance(message, t.ServerMessageError):
            body = message.error
            error = HostError(body.code, body.message, body.limitation, message.id)
            if message.id is None:
                self._connection_error = error
                return
            pending = self._pending.pop(message.id, None)
            if pending is not None and not pending.future.done():
                pending.future.set_exception(error)
        elif isinstance(message, t.ServerMessageEvent):
            sink = self._sinks.get(message.subscription)
            if sink is None:
                return
            if isinstance(message.event, t.EventEnded):
                del self._sinks[message.subscription]
            sink.event(message.subscription, message.event)
        # A server message of a newer host this package does not know: ignored.

    def _finish(self, error: PanehostError) -> None:
        if self._closed is not None:
            return
        self._closed = error
        pending = list(self._pending.values())
        self._pending.clear()
        for entry in pending:
            if not entry.future.done():
                entry.future.set_exception(error)
                # Nobody may be waiting any more; do not warn about it.
                entry.future.exception()
        sinks = list(self._sinks.values())
        self._sinks.clear()
        for sink in sinks:
            sink.lost(error)
        self._closed_event.set()


async def _handshake(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, client_name: str) -> t.Welcome:
    hello = t.Hello(protocol=PROTOCOL_VERSION, revision=PROTOCOL_REVISION, encoding=t.Encoding.JSON, client=client_name)
    writer.write(encode_frame(json.dumps(hello.to_json(), separators=(",", ":")).encode(), MAX_HELLO_FRAME))
    try:
        await writer.drain()
    except (OSError, ConnectionError):
        pass  # A refused peer may find the socket closed while it writes; the reply is still read.
    try:
        payload = await read_frame(reader, MAX_HOST_FRAME)
    except asyncio.IncompleteReadError:
        raise ConnectionLost("the host closed the connection before its handshake reply") from None
    except (OSError, ConnectionError) as error:
        raise ConnectionLost(f"the connection failed before the host's handshake reply: {error}") from error
    try:
        value = json.loads(payload)
    except ValueError:
        raise ProtocolViolation("the host's handshake reply is not JSON") from None
    try:
        reply = t.HandshakeReply.from_json(value)
    except DecodeError:
        # A host that could not read the hello may answer with an error frame.
        try:
            message = t.ServerMessage.from_json(value)
        except DecodeError:
            message = None
        if isinstance(message, t.ServerMessageError):
            raise HostError(message.error.code, message.error.message, message.error.limitation) from None
        raise ProtocolViolation("the host's handshake reply is neither welcome nor refused") from None
    if isinstance(reply, t.HandshakeReplyRefused):
        raise RefusedError(reply.code, reply.message, reply.protocol)
    if isinstance(reply, t.HandshakeReplyWelcome):
        if reply.encoding != t.Encoding.JSON:
            raise ProtocolViolation(f"the host welcomed the encoding {reply.encoding}, not json")
        return t.Welcome(
            protocol=reply.protocol, revision=reply.revision, host=reply.host, encoding=reply.encoding,
            extra_fields=reply.extra_fields,
        )
    raise ProtocolViolation("the host's handshake reply is neither welcome nor refused")
