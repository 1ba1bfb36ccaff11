"""The exceptions of the client. Every one is a :class:`PanehostError`."""

from __future__ import annotations

from typing import Optional, Union

from . import _types


class PanehostError(Exception):
    """Any failure of the panehost client."""


def _error_code(code: str) -> Union[str, "_types.WireEnum"]:
    """The code as the schema's ``ErrorCode`` member when the generated types
    have that vocabulary and know the value, else the plain string."""
    vocabulary = getattr(_types, "ErrorCode", None)
    if vocabulary is not None:
        try:
            return vocabulary(code)
        except ValueError:
            pass
    return code


def _limitation_code(code: Optional[str]) -> Optional[Union[str, "_types.WireEnum"]]:
    vocabulary = getattr(_types, "LimitationCode", None)
    if code is not None and vocabulary is not None:
        try:
            return vocabulary(code)
        except ValueError:
            pass
    return code


class HostError(PanehostError):
    """The host answered a request with an error (PROTOCOL.md, section 10).

    ``code`` is the stable code to match on (``"UNKNOWN_PANE"``); a code
    this package does not know is kept as the plain string. ``limitation``
    names the reason of an ``OPERATION_UNSUPPORTED``, else ``None``.
    ``message`` is for people."""

    def __init__(self, code: str, message: str, limitation: Optional[str] = None, request_id: Optional[int] = None):
        text = f"{code}: {message}"
        if limitation:
            text += f" (limitation {limitation})"
        super().__init__(text)
        #: The error code, such as ``UNKNOWN_PANE``.
        self.code = _error_code(code)
        #: The host's sentence for people; not for matching.
        self.message = message
        #: For ``OPERATION_UNSUPPORTED``, the limitation code that explains it.
        self.limitation = _limitation_code(limitation)
        #: The id of the request it answers; ``None`` for an error about the connection.
        self.request_id = request_id


class RefusedError(HostError):
    """The host refused the handshake (``PROTOCOL_MISMATCH``,
    ``PEER_REFUSED``, ...); ``protocol`` is the version the host speaks."""

    def __init__(self, code: str, message: str, protocol: int):
        super().__init__(code, message)
        #: The protocol version the host speaks.
        self.protocol = protocol


class CallTimeout(PanehostError, TimeoutError):
    """The client's own deadline for a call (``call_timeout``) passed before
    the answer came. The request may still be carried out by the host; its
    answer, when it comes, is dropped. Not to be confused with the host's
    ``TURN_TIMEOUT`` and ``WAIT_TIMEOUT``, which are :class:`HostError`\\ s."""

    def __init__(self, what: str, after: float):
        super().__init__(f"no answer to {what} within {after:g} s (the client's deadline)")
        #: What was waited for.
        self.what = what
        #: How long, in seconds.
        self.after = after


class ConnectionLost(PanehostError, ConnectionError):
    """The connection to the host closed, or could not be made.

    ``request_sent`` says whether the request had been written: if so, the
    host may or may not have carried it out."""

    def __init__(self, message: str, request_sent: bool = False):
        super().__init__(message)
        #: Whether the request was written before the connection was lost.
        self.request_sent = request_sent


class UntrustedHost(PanehostError):
    """The socket is not one this user's host could have made: its directory
    is not private to the user, or the process listening on it runs as
    another user (docs/SECURITY.md). Nothing was sent to it."""

    def __init__(self, path: str, reason: str):
        super().__init__(f"refusing to talk to the host at {path}: {reason}")
        #: The socket path.
        self.path = path
        #: Which check failed.
        self.reason = reason


class ProtocolViolation(PanehostError):
    """The host sent something that is not the protocol (a frame that is
    not JSON, a message of the wrong shape, an oversized length prefix).
    The connection is closed."""


class HostRevisionError(PanehostError):
    """The operation needs a newer protocol revision than the host speaks;
    nothing was sent."""

    def __init__(self, what: str, needed: int, host: int):
        super().__init__(f"{what} needs protocol revision {needed}; the host speaks revision {host}")
        #: The revision the operation needs.
        self.needed = needed
        #: The host's revision.
        self.host = host


class AutostartError(PanehostError):
    """The host this client started could not be spawned, or exited before it
    answered."""
