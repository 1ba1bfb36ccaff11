"""The message types: generated from the schema, and what they make of the
schema's shapes, the open vocabularies among them."""

from __future__ import annotations

import importlib.util
import json
import re
import sys
from pathlib import Path

import pytest

import panehost
from panehost import _types as t

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tools"))
import generate_types  # noqa: E402

REPO = HERE.parents[2]
SCHEMA = REPO / "docs" / "protocol.schema.json"
GENERATED = HERE.parent / "panehost" / "_types.py"


def test_the_generated_types_are_what_the_schema_makes() -> None:
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    made = generate_types.generate(schema)
    assert GENERATED.read_text(encoding="utf-8") == made, (
        "panehost/_types.py differs from what docs/protocol.schema.json makes: "
        "run python3 client/python/tools/generate_types.py"
    )


def test_the_installed_types_are_the_generated_ones() -> None:
    # Run from the installed package: the wheel carries the same file.
    assert Path(t.__file__).read_text(encoding="utf-8") == GENERATED.read_text(encoding="utf-8")


def test_the_revision_is_the_hosts() -> None:
    source = (REPO / "ipc" / "src" / "handshake.rs").read_text(encoding="utf-8")
    match = re.search(r"pub const PROTOCOL_REVISION: u32 = (\d+);", source)
    assert match, "ipc/src/handshake.rs names no PROTOCOL_REVISION"
    assert panehost.PROTOCOL_REVISION == int(match.group(1))
    version = re.search(r"pub const PROTOCOL_VERSION: u32 = (\d+);", source)
    assert version and panehost.PROTOCOL_VERSION == int(version.group(1))
    assert t.SCHEMA_REVISION == panehost.PROTOCOL_REVISION


def test_every_json_example_of_the_protocol_document_reads_and_writes_back() -> None:
    document = (REPO / "docs" / "PROTOCOL.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```json (server|request|hello|handshake)\n(.*?)```", document, re.S)
    assert len(blocks) > 50
    kinds = {"server": t.ServerMessage, "request": t.RequestFrame, "hello": t.Hello, "handshake": t.HandshakeReply}

    def without_nulls(value):  # type: ignore[no-untyped-def]
        if isinstance(value, dict):
            return {key: without_nulls(item) for key, item in value.items() if item is not None}
        if isinstance(value, list):
            return [without_nulls(item) for item in value]
        return value

    def holds(expected, got, where):  # type: ignore[no-untyped-def]
        # What the example says is in what the types write (which may add defaults).
        if isinstance(expected, dict):
            assert isinstance(got, dict), where
            for key, item in expected.items():
                holds(item, got.get(key), f"{where}.{key}")
        elif isinstance(expected, list):
            assert isinstance(got, list) and len(got) == len(expected), where
            for index, (a, b) in enumerate(zip(expected, got)):
                holds(a, b, f"{where}[{index}]")
        else:
            assert expected == got, where

    for kind, text in blocks:
        value = json.loads(text)
        message = kinds[kind].from_json(value)
        holds(without_nulls(value), without_nulls(message.to_json()), kind)


def test_unknown_variants_and_fields_are_kept_not_dropped() -> None:
    message = t.ServerMessage.from_json(
        {"event": {"subscription": 2, "event": {"teleported": {"to": "mars"}}}}
    )
    assert isinstance(message, t.ServerMessageEvent)
    assert message.event == t.EventOther(tag="teleported", body={"to": "mars"})
    output = t.Event.from_json({"output": {"offset": 5, "data": "aGk=", "colour": "red"}})
    assert output == t.EventOutput(offset=5, data=b"hi")
    assert output.extra_fields == {"colour": "red"}


def test_wrong_shapes_are_refused_with_the_path() -> None:
    with pytest.raises(panehost.DecodeError) as caught:
        t.ServerMessage.from_json({"event": {"subscription": 2, "event": {"output": {"offset": -1, "data": ""}}}})
    assert caught.value.path == "ServerMessage.event.event.output.offset"
    with pytest.raises(panehost.DecodeError, match="invalid base64"):
        t.Event.from_json({"output": {"offset": 0, "data": "!!"}})
    with pytest.raises(panehost.DecodeError, match="missing field `offset`"):
        t.Event.from_json({"output": {"data": ""}})
    with pytest.raises(panehost.DecodeError, match="expected an integer"):
        t.Size.from_json({"cols": True, "rows": 2})


# The shape docs/protocol.schema.json gives an open vocabulary: a named
# definition marked x-open-vocabulary, an anyOf of a string enum and a string.
VOCABULARY_SCHEMA = {
    "title": "panehost protocol 1, revision 9: the JSON encoding",
    "$defs": {
        "ErrorCode": {
            "description": "A stable error code.",
            "x-open-vocabulary": True,
            "anyOf": [{"type": "string", "enum": ["UNKNOWN_PANE", "BUSY"]}, {"type": "string"}],
        },
        "LimitationCode": {
            "description": "Why a runtime cannot do something.",
            "x-open-vocabulary": True,
            "anyOf": [{"type": "string", "enum": ["COMPLETION_UNOBSERVED"]}, {"type": "string"}],
        },
        "Activity": {
            "x-open-vocabulary": True,
            "anyOf": [
                {"type": "string", "const": "idle", "description": "Between turns."},
                {"type": "string", "const": "busy"},
                {"type": "string"},
            ],
        },
        "Request": {
            "oneOf": [
                {
                    "type": "object",
                    "properties": {"ping": {"type": "object", "properties": {"n": {"type": "integer"}}}},
                    "required": ["ping"],
                    "x-answer": "pong",
                }
            ]
        },
        "Event": {
            "oneOf": [
                {
                    "type": "object",
                    "description": "A pane's event.",
                    "properties": {"output": {"type": "object", "properties": {"n": {"type": "integer"}}}},
                    "required": ["output"],
                    "x-streams": ["pane"],
                }
            ]
        },
        "ErrorBody": {
            "type": "object",
            "properties": {
                "code": {"$ref": "#/$defs/ErrorCode", "description": "The code."},
                "limitation": {"anyOf": [{"$ref": "#/$defs/LimitationCode"}, {"type": "null"}], "default": None},
                "limitations": {"type": "array", "items": {"$ref": "#/$defs/LimitationCode"}, "default": []},
                "activity": {"$ref": "#/$defs/Activity", "default": "idle"},
            },
            "required": ["code"],
        },
    },
}


def load(source: str, tmp_path: Path, name: str):  # type: ignore[no-untyped-def]
    """Imports generated source as a module of the ``panehost`` package."""
    path = tmp_path / f"{name}.py"
    path.write_text(source, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(f"panehost.{name}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def test_an_open_vocabulary_becomes_an_enum_with_an_open_fallback(tmp_path: Path) -> None:
    source = generate_types.generate(VOCABULARY_SCHEMA)
    module = load(source, tmp_path, "_vocabulary_fixture")
    assert module.SCHEMA_REVISION == 9
    assert [member.value for member in module.ErrorCode] == ["UNKNOWN_PANE", "BUSY"]
    assert [member.value for member in module.Activity] == ["idle", "busy"]
    assert "IDLE = 'idle'\n    \"\"\"Between turns.\"\"\"" in source

    known = module.ErrorBody.from_json(
        {"code": "BUSY", "limitation": "COMPLETION_UNOBSERVED", "limitations": ["COMPLETION_UNOBSERVED", "NEW_ONE"]}
    )
    assert known.code is module.ErrorCode.BUSY
    assert known.code == "BUSY" and f"{known.code}" == "BUSY" and str(known.code) == "BUSY"
    assert known.limitation is module.LimitationCode.COMPLETION_UNOBSERVED
    assert known.limitations == [module.LimitationCode.COMPLETION_UNOBSERVED, "NEW_ONE"]
    assert type(known.limitations[1]) is str
    assert known.activity is module.Activity.IDLE

    newer = module.ErrorBody.from_json({"code": "SOMETHING_NEWER", "limitation": None, "activity": "dreaming"})
    assert newer.code == "SOMETHING_NEWER" and type(newer.code) is str
    assert newer.limitation is None and newer.activity == "dreaming"
    assert json.dumps(known.to_json(), sort_keys=True) == json.dumps(
        {
            "activity": "idle",
            "code": "BUSY",
            "limitation": "COMPLETION_UNOBSERVED",
            "limitations": ["COMPLETION_UNOBSERVED", "NEW_ONE"],
        },
        sort_keys=True,
    )
    with pytest.raises(panehost.DecodeError):
        module.ErrorBody.from_json({"code": 7})
    # Which answer a request gets, and which subscriptions an event travels on.
    assert module.RequestPing.ANSWER == "pong" and module.Request.ANSWER is None
    assert module.EventOutput.STREAMS == ("pane",) and module.Event.STREAMS == ()
    assert module.EventOutput.__doc__.startswith("A pane's event.")
    assert module.RequestPing(n=3).to_json() == {"ping": {"n": 3}}


def test_todays_schema_and_a_named_vocabulary_read_the_same_wire(tmp_path: Path) -> None:
    # Today's schema types `code` a plain string; the named vocabulary reads
    # the same JSON to a value equal to it: code written against either works.
    wire = {"code": "UNKNOWN_PANE", "message": "no pane p9", "limitation": None}
    today = t.ErrorBody.from_json(wire)
    schema = json.loads(SCHEMA.read_text(encoding="utf-8"))
    if "ErrorCode" not in schema["$defs"]:
        schema["$defs"]["ErrorCode"] = VOCABULARY_SCHEMA["$defs"]["ErrorCode"]
        schema["$defs"]["ErrorBody"]["properties"]["code"] = {"$ref": "#/$defs/ErrorCode"}
    module = load(generate_types.generate(schema), tmp_path, "_named_fixture")
    named = module.ErrorBody.from_json(wire)
    assert named.code == today.code == "UNKNOWN_PANE"
    assert isinstance(named.code, module.ErrorCode)
    assert named.to_json() == today.to_json()
