"""The asyncio client: :func:`connect` and :class:`Client`, one method per
operation of the protocol, on one shared connection that is made again
when it is lost."""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import Any, Dict, List, Mapping, Optional, Sequence, Type, TypeVar, Union

from . import _types as t
from .autostart import Autostart, start_host
from .connection import AnswerHook, Connection
from .errors import CallTimeout, ConnectionLost, HostRevisionError
from .protocol import DEFAULT_ASK_TIMEOUT_MS, DEFAULT_WAIT_TIMEOUT_MS, INPUT_CHUNK_BYTES, PROBE_RUN_LIMIT_MS
from .socket_path import default_socket_path

__version__ = "0.1.0"

R = TypeVar("R")


class _Default:
    def __repr__(self) -> str:
        return "DEFAULT"


DEFAULT: Any = _Default()
"""The marker of a ``call_timeout`` left to the client's default."""

LABELS_REVISION = 3
"""The revision that added labels, ``env``, ``watch`` and ``wait_for``."""


@dataclass(frozen=True)
class ReconnectPolicy:
    """How the client connects again after it lost its connection: the first
    attempt after ``initial_delay`` seconds, each next one after twice the
    delay before (at most ``max_delay``), and none more than ``give_up_after``
    seconds after the loss."""

    initial_delay: float = 0.05
    max_delay: float = 1.0
    give_up_after: float = 10.0


class Client:
    """A client of the host, with one coroutine per operation.

    **One connection.** Requests, pane streams and watches share one
    connection; the host runs its requests concurrently, so an ``ask``
    waiting for its turn holds up nothing else, and answers are matched by
    id. Methods may be called concurrently from many tasks.

    **Answers** are the generated message types (``PaneSummary``,
    ``TurnReport``, ...). An error answer raises :class:`HostError` with
    its ``code``, ``message`` and ``limitation``.

    **Two waits, two names.** ``call_timeout`` (seconds) is the client's
    own deadline for an answer: when it passes, :class:`CallTimeout` is
    raised and the answer dropped. ``turn_timeout_ms`` (``ask``) and
    ``wait_timeout_ms`` (``wait_for``) are the host's waits, sent in the
    request: when they pass, the host answers ``TURN_TIMEOUT`` or
    ``WAIT_TIMEOUT``. By default a call's deadline is the client's
    ``request_timeout`` plus the host's wait, so the host's answer comes
    first. Cancelling the task that awaits a call stops waiting for it in
    the same way.

    **A lost connection** is made again with the reconnect policy's
    backoff, by the next call or stream that needs it. A request in flight
    when it was lost raises :class:`ConnectionLost` with ``request_sent``
    true (the host may have carried it out), except ``inspect``, ``list``,
    ``runtimes`` and ``history``, which change nothing and are sent again.

    Make one with :func:`connect`; close it with :meth:`aclose` or
    ``async with``.
    """

    def __init__(
        self,
        socket_path: str,
        connection: Connection,
        *,
        client_name: str,
        request_timeout: Optional[float],
        handshake_timeout: float,
        reconnect: Optional[ReconnectPolicy],
        max_buffered_events: int,
    ) -> None:
        #: The socket path this client connects to.
        self.socket_path = socket_path
        self._connection: Optional[Connection] = connection
        self._client_name = client_name
        self._request_timeout = request_timeout
        self._handshake_timeout = handshake_timeout
        self._reconnect = reconnect
        self._max_buffered = max_buffered_events
        self._reconnecting: Optional["asyncio.Future[Connection]"] = None
        self._closed = False
        self._subscribers: "set[Any]" = set()

    # The connection.

    @property
    def welcome(self) -> t.Welcome:
        """The welcome of the newest connection: the host's protocol, revision and name."""
        assert self._connection is not None
        return self._connection.welcome

    @property
    def connection(self) -> Optional[Connection]:
        """The current connection, or ``None`` while there is none."""
        return self._connection

    @property
    def reconnect_policy(self) -> Optional[ReconnectPolicy]:
        """How a lost connection is made again; ``None``: it is not."""
        return self._reconnect

    @property
    def max_buffered_events(self) -> int:
        """Events each stream and watch buffers before it lets go of its subscription."""
        return self._max_buffered

    async def current_connection(self) -> Connection:
        """The open connection, made again (with the reconnect policy's
        backoff) when it was lost.

        Raises :class:`ConnectionLost` when the client is closed, when it has
        no reconnect policy, or when the policy gave up."""
        if self._closed:
            raise ConnectionLost("the client is closed")
        connection = self._connection
        if connection is not None and not connection.is_closed:
            return connection
        if self._reconnect is None:
            raise ConnectionLost(f"the connection to the host at {self.socket_path} was lost (reconnecting is off)")
        if self._reconnecting is None:
            self._reconnecting = asyncio.ensure_future(self._connect_again(self._reconnect))
        reconnecting = self._reconnecting
        try:
            return await asyncio.shield(reconnecting)
        finally:
            if reconnecting.done() and self._reconnecting is reconnecting:
                self._reconnecting = None

    async def _connect_again(self, policy: ReconnectPolicy) -> Connection:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + policy.give_up_after
        delay = policy.initial_delay
        last: Optional[BaseException] = None
        while True:
            await asyncio.sleep(min(delay, max(0.0, deadline - loop.time())))
            try:
                connection = await Connection.open(
                    self.socket_path, client_name=self._client_name, timeout=self._handshake_timeout
                )
            except ConnectionLost as error:
                last = error
            else:
                if self._closed:
                    await connection.close()
                    raise ConnectionLost("the client is closed")
                self._connection = connection
                return connection
            if loop.time() >= deadline:
                raise ConnectionLost(
                    f"the connection to the host at {self.socket_path} was lost and could not be made again "
                    f"within {policy.give_up_after:g} s: {last}"
                )
            delay = min(delay * 2, policy.max_delay)

    async def aclose(self) -> None:
        """Ends every stream and watch and closes the connection."""
        if self._closed:
            return
        for subscriber in list(self._subscribers):
            await subscriber._shutdown()
        self._closed = True
        if self._reconnecting is not None:
            self._reconnecting.cancel()
        if self._connection is not None:
            await self._connection.close()

    async def __aenter__(self) -> "Client":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def require_revision(self, what: str, revision: int) -> None:
        """Raises :class:`HostRevisionError` when the host speaks a revision older than ``revision``."""
        host = self.welcome.revision
        if host < revision:
            raise HostRevisionError(what, revision, host)

    # Requests.

    async def call(
        self,
        request: t.Request,
        expect: Optional[str] = None,
        *,
        call_timeout: Optional[float] = DEFAULT,
        host_wait_ms: int = 0,
        resend: bool = False,
        hook: Optional[AnswerHook] = None,
    ) -> Any:
        """Sends ``request`` and returns its answer of kind ``expect`` (by
        default the one the schema names for the request, ``x-answer``).

        ``call_timeout`` is the client's deadline in seconds (``None``
        waits forever; by default the client's ``request_timeout`` plus
        ``host_wait_ms``). ``resend`` sends the request again on a new
        connection when the connection was lost before its answer.
        ``hook`` runs when the answer arrives, before any later frame."""
        expect = expect or getattr(request, "ANSWER", None)
        if not expect:
            raise ValueError(f"name the answer `{request.TAG}` expects (the schema gives none)")
        if call_timeout is DEFAULT:
            call_timeout = None if self._request_timeout is None else self._request_timeout + host_wait_ms / 1000
        what = f"`{request.TAG}`"

        async def attempt() -> Any:
            while True:
                connection = await self.current_connection()
                request_id, future = connection.send(request, expect, hook)
                try:
                    return await future
                except ConnectionLost as error:
                    if not resend or not error.request_sent:
                        raise
                finally:
                    connection.forget(request_id)

        if call_timeout is None:
            return await attempt()
        try:
            return await asyncio.wait_for(attempt(), call_timeout)
        except asyncio.TimeoutError:
            raise CallTimeout(what, call_timeout) from None

    async def start(
        self,
        runtime: str,
        *,
        cwd: Optional[str] = None,
        size: Optional[t.Size] = None,
        command: Sequence[str] = (),
        model: Optional[str] = None,
        resume: Optional[t.ResumeRequest] = None,
        max_wall_ms: Optional[int] = None,
        permission_profile: Optional[str] = None,
        accept_weaker_boundary: bool = False,
        require_ready: bool = False,
        rerun_after_host_loss: bool = False,
        labels: Optional[Mapping[str, str]] = None,
        env: Optional[Mapping[str, str]] = None,
        call_timeout: Optional[float] = DEFAULT,
    ) -> t.PaneSummary:
        """Starts a new pane running ``runtime`` (``"shell"``, ``"claude"``,
        ...) and returns its summary. ``command`` runs a program instead of
        the interactive shell (``shell`` only). See PROTOCOL.md, ``start``."""
        if labels or env:
            self.require_revision("start with labels or env", LABELS_REVISION)
        params = t.RequestStart(
            runtime=runtime,
            cwd=cwd,
            size=size,
            command=list(command),
            model=model,
            resume=resume,
            max_wall_ms=max_wall_ms,
            permission_profile=permission_profile,
            accept_weaker_boundary=accept_weaker_boundary,
            require_ready=require_ready,
            rerun_after_host_loss=rerun_after_host_loss,
            labels=dict(labels or {}),
            env=dict(env or {}),
        )
        return _plain(t.PaneSummary, await self.call(params, "started", call_timeout=call_timeout))

    async def login(
        self,
        runtime: str,
        *,
        cwd: Optional[str] = None,
        size: Optional[t.Size] = None,
        call_timeout: Optional[float] = DEFAULT,
    ) -> t.PaneSummary:
        """Opens a pane running the runtime's own interactive sign-in."""
        request = t.RequestLogin(runtime=runtime, cwd=cwd, size=size)
        return _plain(t.PaneSummary, await self.call(request, "started", call_timeout=call_timeout))

    async def send(
        self,
        pane: str,
        text: str = "",
        *,
        data: bytes = b"",
        enter: bool = False,
        call_timeout: Optional[float] = DEFAULT,
    ) -> t.ResponseSent:
        """Types ``text`` then the raw bytes ``data`` into the pane; with
        ``enter``, submits them (a turn starts). Raw bytes larger than one
        frame are sent as several requests, only the last with ``enter``;
        the answer then counts every byte written."""
        chunks = [data[i : i + INPUT_CHUNK_BYTES] for i in range(0, len(data), INPUT_CHUNK_BYTES)] or [b""]
        written = 0
        answer: Optional[t.ResponseSent] = None
        for index, chunk in enumerate(chunks):
            last = index == len(chunks) - 1
            request = t.RequestSend(pane=pane, text=text if last else "", bytes=chunk, enter=enter and last)
            answer = await self.call(request, "sent", call_timeout=call_timeout)
            written += answer.bytes
        assert answer is not None
        return t.ResponseSent(pane=answer.pane, bytes=written)

    async def ask(
        self,
        pane: str,
        text: str,
        *,
        turn_timeout_ms: Optional[int] = None,
        call_timeout: Optional[float] = DEFAULT,
    ) -> t.TurnReport:
        """Submits ``text`` as a turn and waits until the turn ends; returns
        what it added. ``turn_timeout_ms`` is the host's wait for the turn's
        end (default 10 minutes; then ``TURN_TIMEOUT``, and the turn is left
        running); ``call_timeout`` is the client's own deadline."""
        request = t.RequestAsk(pane=pane, text=text, timeout_ms=turn_timeout_ms)
        wait = DEFAULT_ASK_TIMEOUT_MS if turn_timeout_ms is None else turn_timeout_ms
        answer = await self.call(request, "answered", call_timeout=call_timeout, host_wait_ms=wait)
        return _plain(t.TurnReport, answer)

    async def interrupt(
        self, pane: str, *, terminate: bool = False, call_timeout: Optional[float] = DEFAULT
    ) -> t.InterruptReport:
        """Interrupts what the pane's process is doing and reports what was
        confirmed; with ``terminate``, ends the program in the foreground."""
        answer = await self.call(
            t.RequestInterrupt(pane=pane, terminate=terminate), "interrupted", call_timeout=call_timeout, host_wait_ms=20_000
        )
        return _plain(t.InterruptReport, answer)

    async def inspect(self, pane: str, *, call_timeout: Optional[float] = DEFAULT) -> t.PaneDetail:
        """The pane with its current screen."""
        answer = await self.call(t.RequestInspect(pane=pane), "inspected", call_timeout=call_timeout, resend=True)
        return _plain(t.PaneDetail, answer)

    async def history(
        self, pane: str, *, lines: Optional[int] = None, call_timeout: Optional[float] = DEFAULT
    ) -> t.PaneHistory:
        """The pane's last lines of output as text, then its screen."""
        answer = await self.call(t.RequestHistory(pane=pane, lines=lines), "history", call_timeout=call_timeout, resend=True)
        return _plain(t.PaneHistory, answer)

    async def list(
        self, *, labels: Optional[Mapping[str, str]] = None, call_timeout: Optional[float] = DEFAULT
    ) -> List[t.PaneSummary]:
        """Every pane, oldest first, or those carrying every one of ``labels``."""
        if labels:
            self.require_revision("list with labels", LABELS_REVISION)
        answer = await self.call(t.RequestList(labels=dict(labels or {})), "panes", call_timeout=call_timeout, resend=True)
        return answer.panes

    async def resize(self, pane: str, cols: int, rows: int, *, call_timeout: Optional[float] = DEFAULT) -> t.Size:
        """Changes the pane's terminal size; returns the new size."""
        answer = await self.call(
            t.RequestResize(pane=pane, size=t.Size(cols=cols, rows=rows)), "resized", call_timeout=call_timeout
        )
        return answer.size

    async def close_pane(self, pane: str, *, call_timeout: Optional[float] = DEFAULT) -> t.ResponseClosed:
        """Ends the pane's processes, reaps them and forgets the pane; returns
        the exit status and what the sweep ended."""
        return await self.call(t.RequestClose(pane=pane), "closed", call_timeout=call_timeout, host_wait_ms=20_000)

    async def runtimes(self, *, call_timeout: Optional[float] = DEFAULT) -> List[t.RuntimeInfo]:
        """The runtimes the host can start, with their readiness."""
        answer = await self.call(t.RequestRuntimes(), "runtimes", call_timeout=call_timeout, resend=True)
        return answer.runtimes

    async def probe_runtime(
        self,
        runtime: str,
        *,
        model: Optional[str] = None,
        accept_weaker_boundary: bool = False,
        call_timeout: Optional[float] = DEFAULT,
    ) -> t.Receipt:
        """Takes a completion receipt of the runtime."""
        request = t.RequestProbeRuntime(runtime=runtime, model=model, accept_weaker_boundary=accept_weaker_boundary)
        answer = await self.call(request, "receipt", call_timeout=call_timeout, host_wait_ms=PROBE_RUN_LIMIT_MS)
        return _plain(t.Receipt, answer)

    async def notify(
        self, pane: str, token: str, event: str, payload: str = "", *, call_timeout: Optional[float] = DEFAULT
    ) -> None:
        """Reports a turn signal from inside a pane (for a CLI's hook)."""
        await self.call(
            t.RequestNotify(pane=pane, token=token, event=event, payload=payload), "notified", call_timeout=call_timeout
        )

    async def wait_for(
        self,
        pane: str,
        pattern: str,
        *,
        target: Union[t.WaitTarget, str] = t.WaitTarget.SCREEN,
        from_offset: Optional[int] = None,
        wait_timeout_ms: Optional[int] = None,
        call_timeout: Optional[float] = DEFAULT,
    ) -> t.WaitMatch:
        """Waits until the pane's screen (or, with ``target="output"``, its
        output from ``from_offset``) matches ``pattern``.
        ``wait_timeout_ms`` is the host's wait (default 30 s; then
        ``WAIT_TIMEOUT``); ``call_timeout`` is the client's own deadline."""
        self.require_revision("wait_for", LABELS_REVISION)
        request = t.RequestWaitFor(
            pane=pane, pattern=pattern, target=t.WaitTarget(target), from_=from_offset, timeout_ms=wait_timeout_ms
        )
        wait = DEFAULT_WAIT_TIMEOUT_MS if wait_timeout_ms is None else wait_timeout_ms
        answer = await self.call(request, "waited", call_timeout=call_timeout, host_wait_ms=wait)
        return _plain(t.WaitMatch, answer)

    def events(
        self,
        pane: str,
        *,
        from_offset: Optional[int] = None,
        generation: Optional[int] = None,
        max_buffered: Optional[int] = None,
        subscribe_timeout: Optional[float] = DEFAULT,
    ) -> "PaneStream":
        """A stream of the pane's output and lifecycle events: an async
        iterator that subscribes on first use and resumes exactly where it
        was after a lost connection (docs/PYTHON.md, "Following a pane").

        Without ``from_offset`` it starts at the current screen; with it,
        at that offset; with ``generation`` too, as a ``reconnect``."""
        from .stream import PaneStream

        return PaneStream(
            self,
            pane,
            from_offset=from_offset,
            generation=generation,
            max_buffered=max_buffered or self._max_buffered,
            subscribe_timeout=subscribe_timeout,
        )

    def watch(self, *, max_buffered: Optional[int] = None, subscribe_timeout: Optional[float] = DEFAULT) -> "Watch":
        """Every pane of the host: the list now, then an event as each
        starts, changes activity, size or title, exits or leaves (an async
        iterator)."""
        from .watch import Watch

        return Watch(self, max_buffered=max_buffered or self._max_buffered, subscribe_timeout=subscribe_timeout)

    def _register(self, subscriber: Any) -> None:
        self._subscribers.add(subscriber)

    def _unregister(self, subscriber: Any) -> None:
        self._subscribers.discard(subscriber)


def _plain(cls: Type[R], variant: Any) -> R:
    """An answer that wraps a struct, as that struct (``ResponseStarted`` ->
    ``PaneSummary``), so that answers compare equal to what ``list`` gives."""
    if type(variant) is cls:
        return variant
    values: Dict[str, Any] = {item.name: getattr(variant, item.name) for item in dataclasses.fields(cls)}  # type: ignore[arg-type]
    return cls(**values)


async def connect(
    socket_path: Optional[str] = None,
    *,
    client_name: str = f"panehost-python/{__version__}",
    request_timeout: Optional[float] = 60.0,
    handshake_timeout: float = 10.0,
    reconnect: Optional[ReconnectPolicy] = ReconnectPolicy(),
    max_buffered_events: int = 256,
    autostart: Optional[Autostart] = None,
) -> Client:
    """Connects to the host and performs the handshake.

    ``socket_path`` defaults to :func:`default_socket_path`. Before it sends
    anything, the client checks that the socket's directory is private to
    the user and that the process listening runs as the user
    (:class:`UntrustedHost` otherwise). ``request_timeout`` (seconds,
    ``None`` for never) is the default deadline of every call.
    ``reconnect=None`` turns reconnecting off. With ``autostart``, a host is
    started when none answers (see :class:`Autostart`).

    Raises :class:`RefusedError` when the host refuses (``PROTOCOL_MISMATCH``,
    ``PEER_REFUSED``), :class:`ConnectionLost` when nothing answers."""
    path = socket_path or default_socket_path()

    async def open_once() -> Connection:
        return await Connection.open(path, client_name=client_name, timeout=handshake_timeout)

    if autostart is None:
        connection = await open_once()
    else:
        connection = await start_host(path, autostart, open_once)
    return Client(
        path,
        connection,
        client_name=client_name,
        request_timeout=request_timeout,
        handshake_timeout=handshake_timeout,
        reconnect=reconnect,
        max_buffered_events=max_buffered_events,
    )


# For type annotations above; the classes live in their own modules.
from .stream import PaneStream  # noqa: E402
from .watch import Watch  # noqa: E402

__all__ = ["Client", "ReconnectPolicy", "connect", "DEFAULT", "LABELS_REVISION", "PaneStream", "Watch"]
