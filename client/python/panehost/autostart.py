"""Starting the host when none answers, as the ``panehost`` commands do:
``PROGRAM --socket PATH [ARGS...] host``, detached in a session of its own,
then connecting until it answers."""

from __future__ import annotations

import asyncio
import os
import subprocess
from dataclasses import dataclass, field
from typing import Awaitable, Callable, Mapping, Optional, Sequence, TypeVar

from .errors import AutostartError, CallTimeout, ConnectionLost

T = TypeVar("T")

POLL_INTERVAL = 0.025
"""How often to try connecting while a started host comes up, in seconds."""

GRACE_AFTER_EXIT = 1.0
"""How long to keep trying after the started host exited: another client
may have started a host at the same moment, and that one may win."""


@dataclass(frozen=True)
class Autostart:
    """How to start a host: ``program`` (the ``panehost`` binary) is run as
    ``program --socket PATH *args host``, with ``env`` over this process's
    environment, its standard error appended to ``log_file`` (discarded
    when ``None``), in a new session (no controlling terminal). It has
    ``ready_timeout`` seconds to answer."""

    program: str = "panehost"
    args: Sequence[str] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    log_file: Optional[str] = None
    ready_timeout: float = 5.0


def _unreachable(error: ConnectionLost) -> bool:
    cause = error.__cause__
    return isinstance(cause, (FileNotFoundError, ConnectionRefusedError))


async def start_host(path: str, autostart: Autostart, connect: Callable[[], Awaitable[T]]) -> T:
    """``connect()``, or, when no host listens at ``path``, start one and
    try again until it answers.

    Raises :class:`AutostartError` when the program cannot be run or exits
    before it answers, :class:`CallTimeout` when it does not answer within
    ``ready_timeout``, and whatever ``connect`` raises for any other reason."""
    try:
        return await connect()
    except ConnectionLost as error:
        if not _unreachable(error):
            raise
    child = _spawn(path, autostart)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + autostart.ready_timeout
    exited: Optional[int] = None
    while True:
        await asyncio.sleep(POLL_INTERVAL)
        try:
            return await connect()
        except ConnectionLost as error:
            if not _unreachable(error):
                raise
        if exited is None and child.poll() is not None:
            exited = child.returncode
            deadline = min(deadline, loop.time() + GRACE_AFTER_EXIT)
        if loop.time() >= deadline:
            if exited is not None:
                hint = f"; see {autostart.log_file}" if autostart.log_file else ""
                raise AutostartError(f"{autostart.program} exited (status {exited}) before it answered{hint}")
            raise CallTimeout("the started host", autostart.ready_timeout)


def _spawn(path: str, autostart: Autostart) -> "subprocess.Popen[bytes]":
    stderr = subprocess.DEVNULL
    log = None
    if autostart.log_file:
        directory = os.path.dirname(autostart.log_file)
        if directory:
            os.makedirs(directory, mode=0o700, exist_ok=True)
        log = open(autostart.log_file, "ab")
    try:
        return subprocess.Popen(
            [autostart.program, "--socket", path, *autostart.args, "host"],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log if log is not None else stderr,
            env={**os.environ, **autostart.env},
            start_new_session=True,
            close_fds=True,
        )
    except OSError as error:
        raise AutostartError(f"cannot run {autostart.program}: {error}") from error
    finally:
        if log is not None:
            log.close()
