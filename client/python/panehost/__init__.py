"""A client of the panehost host: start agent CLIs and shells in panes,
send them input, ask and wait for the answer, follow their output exactly
across lost connections, and watch every pane.

    import asyncio, panehost

    async def main():
        async with await panehost.connect() as client:
            pane = await client.start("shell")
            report = await client.ask(pane.id, "echo hello")
            print(report.added_text)

    asyncio.run(main())

The asyncio API is :func:`connect` and :class:`Client`; :mod:`panehost.sync`
wraps it for code without an event loop. The message types are generated
from the protocol's JSON Schema (:mod:`panehost._types`, re-exported here).
See docs/PYTHON.md.
"""

from ._types import *  # noqa: F401,F403
from ._types import __all__ as _types_all
from ._wire import DecodeError, WireEnum
from .autostart import Autostart
from .client import DEFAULT, Client, ReconnectPolicy, __version__, connect
from .connection import Connection
from .errors import (
    AutostartError,
    CallTimeout,
    ConnectionLost,
    HostError,
    HostRevisionError,
    PanehostError,
    ProtocolViolation,
    RefusedError,
    UntrustedHost,
)
from .protocol import (
    DEFAULT_ASK_TIMEOUT_MS,
    DEFAULT_WAIT_TIMEOUT_MS,
    MAX_CLIENT_FRAME,
    MAX_HELLO_FRAME,
    MAX_HOST_FRAME,
    PROTOCOL_REVISION,
    PROTOCOL_VERSION,
)
from .socket_path import default_socket_path
from .stream import PaneStream, StreamStarted
from .watch import Watch, WatchStarted

__all__ = [
    "Autostart",
    "AutostartError",
    "CallTimeout",
    "Client",
    "Connection",
    "ConnectionLost",
    "DEFAULT",
    "DEFAULT_ASK_TIMEOUT_MS",
    "DEFAULT_WAIT_TIMEOUT_MS",
    "DecodeError",
    "HostError",
    "HostRevisionError",
    "MAX_CLIENT_FRAME",
    "MAX_HELLO_FRAME",
    "MAX_HOST_FRAME",
    "PROTOCOL_REVISION",
    "PROTOCOL_VERSION",
    "PaneStream",
    "PanehostError",
    "ProtocolViolation",
    "ReconnectPolicy",
    "RefusedError",
    "StreamStarted",
    "UntrustedHost",
    "Watch",
    "WatchStarted",
    "WireEnum",
    "__version__",
    "connect",
    "default_socket_path",
    *_types_all,
]
