"""Checks and conversions that the generated message types (``_types.py``)
call to read JSON values from the host and write JSON values to it.

Every reader takes the value and a ``path`` naming where it sits in the
message (``ServerMessage.event.output.offset``), and raises
:class:`DecodeError` with that path when the value has the wrong shape.
"""

from __future__ import annotations

import base64
import binascii
import enum
from typing import Any, Dict, List, Optional, Tuple, Type, TypeVar, Union

E = TypeVar("E", bound="WireEnum")


class DecodeError(ValueError):
    """A JSON value from the host does not have the shape the protocol gives it."""

    def __init__(self, path: str, problem: str) -> None:
        super().__init__(f"{path}: {problem}")
        #: Where in the message the value sits, such as ``Event.output.offset``.
        self.path = path
        #: What is wrong with it.
        self.problem = problem


class WireEnum(str, enum.Enum):
    """A vocabulary of strings. Members are ``str``: ``member == "value"``
    holds, and ``str()`` and ``format()`` give the value."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


def describe(value: Any) -> str:
    """A short account of a value's JSON type, for error messages."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def read_object(value: Any, path: str) -> Dict[str, Any]:
    """``value`` as a JSON object."""
    if not isinstance(value, dict):
        raise DecodeError(path, f"expected an object, got {describe(value)}")
    return value


def read_required(obj: Dict[str, Any], key: str, path: str) -> Any:
    """The value of a field that must be present."""
    if key not in obj:
        raise DecodeError(path, f"missing field `{key}`")
    return obj[key]


def read_int(value: Any, path: str, minimum: Optional[int] = None, maximum: Optional[int] = None) -> int:
    """An integer (never a boolean, never a fraction), within the bounds given."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise DecodeError(path, f"expected an integer, got {describe(value)}")
    if minimum is not None and value < minimum:
        raise DecodeError(path, f"{value} is below {minimum}")
    if maximum is not None and value > maximum:
        raise DecodeError(path, f"{value} is above {maximum}")
    return value


def read_float(value: Any, path: str) -> float:
    """A number."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise DecodeError(path, f"expected a number, got {describe(value)}")
    return float(value)


def read_bool(value: Any, path: str) -> bool:
    """A boolean."""
    if not isinstance(value, bool):
        raise DecodeError(path, f"expected a boolean, got {describe(value)}")
    return value


def read_str(value: Any, path: str) -> str:
    """A string."""
    if not isinstance(value, str):
        raise DecodeError(path, f"expected a string, got {describe(value)}")
    return value


def read_bytes(value: Any, path: str) -> bytes:
    """Bytes written as standard base64 with padding."""
    text = read_str(value, path)
    try:
        return base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError) as error:
        raise DecodeError(path, f"invalid base64: {error}") from None


def write_bytes(value: Union[bytes, bytearray, memoryview]) -> str:
    """Bytes as standard base64 with padding."""
    return base64.b64encode(bytes(value)).decode("ascii")


def read_list(value: Any, path: str) -> List[Any]:
    """A JSON array."""
    if not isinstance(value, list):
        raise DecodeError(path, f"expected an array, got {describe(value)}")
    return value


def read_closed(cls: Type[E], value: Any, path: str) -> E:
    """A value of a closed vocabulary: one of ``cls``'s members."""
    text = read_str(value, path)
    try:
        return cls(text)
    except ValueError:
        known = ", ".join(member.value for member in cls)
        raise DecodeError(path, f"`{text}` is not one of {known}") from None


def read_open(cls: Type[E], value: Any, path: str) -> Union[E, str]:
    """A value of an open vocabulary: one of ``cls``'s members when it is
    known, else the string itself (a newer host may add values)."""
    text = read_str(value, path)
    try:
        return cls(text)
    except ValueError:
        return text


def write_str(value: Union[str, enum.Enum]) -> str:
    """A vocabulary value, known or not, as the plain string."""
    if isinstance(value, enum.Enum):
        return str(value.value)
    return value


def read_tagged(value: Any, path: str) -> Tuple[str, Any]:
    """An externally tagged enum value: ``"unit"`` gives ``("unit", None)``,
    ``{"tag": body}`` gives ``("tag", body)``."""
    if isinstance(value, str):
        return value, None
    obj = read_object(value, path)
    if len(obj) != 1:
        keys = ", ".join(sorted(obj)) or "none"
        raise DecodeError(path, f"expected an object with exactly one key, got keys {keys}")
    ((tag, body),) = obj.items()
    return tag, body


def extra_fields(obj: Dict[str, Any], known: "frozenset[str]") -> Dict[str, Any]:
    """The fields of ``obj`` that the generated type does not name (a newer
    host's), kept rather than dropped."""
    return {key: item for key, item in obj.items() if key not in known}
