#!/usr/bin/env python3
"""Writes ``panehost/_types.py``, the message types of the protocol's JSON
encoding, from ``docs/protocol.schema.json`` (a JSON Schema that the ipc
crate generates from the wire types themselves).

    python3 client/python/tools/generate_types.py           # rewrite the file
    python3 client/python/tools/generate_types.py --check   # exit 1 if it differs

What each schema shape becomes:

- an object definition: a frozen dataclass with ``from_json``/``to_json``;
  fields a newer host sends that the schema does not name are kept in
  ``extra_fields``, never dropped;
- a ``oneOf`` of string constants: a closed vocabulary, a ``WireEnum``;
- a definition marked ``"x-open-vocabulary": true`` (an ``anyOf`` of a
  string ``enum``, or of string ``const``s, and a plain string): an open
  vocabulary, a ``WireEnum`` of the known values; a field that refers to it
  is typed ``Union[Name, str]`` and holds the plain string for a value the
  enum does not know;
- any other ``oneOf`` (serde's externally tagged enums): a base class with
  ``from_json`` that dispatches on the tag, one dataclass per variant
  (``Event`` and ``EventOutput``), and ``<Name>Other`` for a variant a newer
  host sends that the schema does not name. A variant that wraps an object
  definition is a subclass of it (``ResponseStarted`` is a ``PaneSummary``).
- bytes (``contentEncoding: base64``) become ``bytes``; integers ``int``
  (bounds checked); ``null``-able fields ``Optional``.

The output depends only on the schema, so a test can compare it with the
committed file.
"""

from __future__ import annotations

import argparse
import json
import keyword
import re
import sys
from pathlib import Path
from typing import Any, Dict, List, Optional, Tuple

HERE = Path(__file__).resolve().parent
PACKAGE_DIR = HERE.parent / "panehost"
OUTPUT = PACKAGE_DIR / "_types.py"
DEFAULT_SCHEMA = HERE.parent.parent.parent / "docs" / "protocol.schema.json"

REF_PREFIX = "#/$defs/"


class SchemaError(Exception):
    """The schema has a shape this generator does not know."""


def camel(name: str) -> str:
    """``turn_completed`` -> ``TurnCompleted``."""
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^A-Za-z0-9]+", name) if part)


def field_name(name: str) -> str:
    """A wire field name as a Python identifier: ``from`` -> ``from_``."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", name)
    if not ident or ident[0].isdigit():
        ident = "_" + ident
    if keyword.iskeyword(ident) or ident == "extra_fields":
        ident += "_"
    return ident


def member_name(value: str, taken: set) -> str:
    """An enum member name for a vocabulary value: ``awaiting_input`` ->
    ``AWAITING_INPUT``."""
    ident = re.sub(r"[^A-Za-z0-9_]", "_", value).upper() or "EMPTY"
    if ident[0].isdigit():
        ident = "_" + ident
    if keyword.iskeyword(ident):
        ident += "_"
    base, n = ident, 2
    while ident in taken:
        ident = f"{base}_{n}"
        n += 1
    taken.add(ident)
    return ident


def docstring(text: Optional[str], indent: str) -> List[str]:
    """A docstring's lines from a schema description."""
    text = (text or "").strip()
    if not text:
        return []
    text = text.replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
    lines = text.splitlines()
    if len(lines) == 1:
        return [f'{indent}"""{lines[0]}"""']
    out = [f'{indent}"""{lines[0]}']
    out += [f"{indent}{line}".rstrip() for line in lines[1:]]
    out.append(f'{indent}"""')
    return out


class Codec:
    """How one schema value is typed, read and written: ``read`` and
    ``write`` are expressions with ``{v}`` for the value (and ``{p}`` for
    the path expression in ``read``)."""

    def __init__(self, annotation: str, read: str, write: str, vocabulary: Optional[Tuple[str, List[str]]] = None) -> None:
        self.annotation = annotation
        self.read = read
        self.write = write
        #: For a vocabulary: its class and known values.
        self.vocabulary = vocabulary

    def read_expr(self, value: str, path: str) -> str:
        return self.read.replace("{p}", path).replace("{v}", value)

    def write_expr(self, value: str) -> str:
        return self.write.replace("{v}", value)


IDENTITY = "{v}"


class Generator:
    """Turns a schema's ``$defs`` into Python source."""

    def __init__(self, schema: Dict[str, Any]) -> None:
        self.schema = schema
        self.defs: Dict[str, Any] = schema.get("$defs", {})
        self.kinds: Dict[str, str] = {name: self.kind_of(definition) for name, definition in self.defs.items()}
        self.lines: List[str] = []
        self.exports: List[str] = []

    # What each definition is.

    @staticmethod
    def is_open_vocabulary(definition: Dict[str, Any]) -> bool:
        return definition.get("x-open-vocabulary") is True

    @staticmethod
    def is_const_string(branch: Dict[str, Any]) -> bool:
        return isinstance(branch.get("const"), str) and "properties" not in branch

    def kind_of(self, definition: Dict[str, Any]) -> str:
        if self.is_open_vocabulary(definition):
            return "open"
        if "oneOf" in definition:
            if all(self.is_const_string(branch) for branch in definition["oneOf"]):
                return "closed"
            return "union"
        if definition.get("type") == "object" and "additionalProperties" not in definition:
            return "struct"
        return "alias"

    def vocabulary_values(self, name: str, definition: Dict[str, Any]) -> List[Tuple[str, Optional[str]]]:
        """The known values of a vocabulary, with their descriptions."""
        values: List[Tuple[str, Optional[str]]] = []
        if self.kinds[name] == "closed":
            for branch in definition["oneOf"]:
                values.append((branch["const"], branch.get("description")))
            return values
        branches = definition.get("anyOf") or definition.get("oneOf") or []
        open_branch = False
        for branch in branches:
            if isinstance(branch.get("enum"), list):
                values += [(value, None) for value in branch["enum"] if isinstance(value, str)]
            elif "const" in branch:
                values.append((branch["const"], branch.get("description")))
            elif branch.get("type") == "string":
                open_branch = True
            else:
                raise SchemaError(f"{name}: an open vocabulary's branch must be a string enum, consts or a string")
        if isinstance(definition.get("enum"), list):
            values += [(value, None) for value in definition["enum"] if isinstance(value, str)]
        if not values or not (open_branch or "enum" in definition):
            raise SchemaError(f"{name}: an open vocabulary needs known values and a plain string branch")
        return values

    # Types of values.

    def ref_name(self, ref: str) -> str:
        if not ref.startswith(REF_PREFIX):
            raise SchemaError(f"unsupported $ref {ref}")
        name = ref[len(REF_PREFIX):]
        if name not in self.defs:
            raise SchemaError(f"$ref to a missing definition {name}")
        return name

    def codec(self, schema: Dict[str, Any], where: str) -> Codec:
        """The codec of a value described by ``schema``."""
        if "$ref" in schema:
            return self.ref_codec(self.ref_name(schema["$ref"]), where)
        if "anyOf" in schema and not self.is_open_vocabulary(schema):
            branches = schema["anyOf"]
            others = [branch for branch in branches if branch.get("type") != "null"]
            if len(others) == 1 and len(branches) == 2:
                return self.optional(self.codec(others[0], where))
            raise SchemaError(f"{where}: unsupported anyOf")
        kind = schema.get("type")
        if isinstance(kind, list):
            others = [k for k in kind if k != "null"]
            if len(others) == 1 and "null" in kind:
                inner = dict(schema)
                inner["type"] = others[0]
                return self.optional(self.codec(inner, where))
            raise SchemaError(f"{where}: unsupported type list {kind}")
        if kind == "integer":
            bounds = ""
            if "minimum" in schema:
                bounds += f", minimum={int(schema['minimum'])}"
            if "maximum" in schema:
                bounds += f", maximum={int(schema['maximum'])}"
            return Codec("int", "read_int({v}, {p}" + bounds + ")", IDENTITY)
        if kind == "number":
            return Codec("float", "read_float({v}, {p})", IDENTITY)
        if kind == "boolean":
            return Codec("bool", "read_bool({v}, {p})", IDENTITY)
        if kind == "string":
            if schema.get("contentEncoding") == "base64":
                return Codec("bytes", "read_bytes({v}, {p})", "write_bytes({v})")
            return Codec("str", "read_str({v}, {p})", IDENTITY)
        if kind == "array":
            return self.array_codec(self.codec(schema.get("items", {}), where + "[]"))
        if kind == "object" and isinstance(schema.get("additionalProperties"), dict) and "properties" not in schema:
            value = self.codec(schema["additionalProperties"], where + "{}")
            return Codec(
                f"Dict[str, {value.annotation}]",
                "{_key: " + value.read_expr("_item", "{p}") + " for _key, _item in read_object({v}, {p}).items()}",
                "dict({v})" if value.write == IDENTITY else "{_key: " + value.write_expr("_item") + " for _key, _item in {v}.items()}",
            )
        if not schema or kind is None:
            return Codec("Any", IDENTITY, IDENTITY)
        raise SchemaError(f"{where}: unsupported schema {json.dumps(schema)[:200]}")

    @staticmethod
    def array_codec(item: Codec) -> Codec:
        return Codec(
            f"List[{item.annotation}]",
            "[" + item.read_expr("_item", "{p}") + " for _item in read_list({v}, {p})]",
            "list({v})" if item.write == IDENTITY else "[" + item.write_expr("_item") + " for _item in {v}]",
        )

    @staticmethod
    def optional(inner: Codec) -> Codec:
        return Codec(
            f"Optional[{inner.annotation}]",
            "(None if {v} is None else " + inner.read.replace("{v}", "{v}") + ")",
            "(None if {v} is None else " + inner.write + ")",
        )

    def ref_codec(self, name: str, where: str) -> Codec:
        kind = self.kinds[name]
        cls = camel(name)
        if kind in ("struct", "union"):
            return Codec(cls, cls + ".from_json({v}, {p})", "{v}.to_json()")
        if kind in ("closed", "open"):
            known = [value for value, _ in self.vocabulary_values(name, self.defs[name])]
            if kind == "closed":
                return Codec(cls, f"read_closed({cls}, {{v}}, {{p}})", "write_str({v})", (cls, known))
            return Codec(f"Union[{cls}, str]", f"read_open({cls}, {{v}}, {{p}})", "write_str({v})", (cls, known))
        return self.codec(self.defs[name], where)

    # Output.

    def emit(self, line: str = "") -> None:
        self.lines.append(line)

    def generate(self) -> str:
        title = self.schema.get("title", "")
        match = re.search(r"revision (\d+)", title)
        revision = int(match.group(1)) if match else None
        self.emit('"""The messages of the panehost protocol in its JSON encoding.')
        self.emit("")
        self.emit("Generated by client/python/tools/generate_types.py from")
        self.emit("docs/protocol.schema.json; do not edit. A test fails while this file")
        self.emit('differs from what the schema makes."""')
        self.emit("")
        self.emit("from __future__ import annotations")
        self.emit("")
        self.emit("from dataclasses import dataclass, field")
        self.emit("from typing import Any, ClassVar, Dict, List, Optional, Tuple, Union")
        self.emit("")
        self.emit("from ._wire import (")
        for helper in (
            "WireEnum", "extra_fields", "read_bool", "read_bytes", "read_closed", "read_float", "read_int",
            "read_list", "read_object", "read_open", "read_required", "read_str", "read_tagged", "write_bytes",
            "write_str",
        ):
            self.emit(f"    {helper},")
        self.emit(")")
        self.emit("")
        self.emit(f"SCHEMA_TITLE = {title!r}")
        self.emit('"""The title of the schema these types were generated from."""')
        self.emit(f"SCHEMA_REVISION: Optional[int] = {revision!r}")
        self.emit('"""The protocol revision the schema describes."""')
        self.exports += ["SCHEMA_TITLE", "SCHEMA_REVISION"]
        names = sorted(self.defs)
        for kinds in (("open", "closed"), ("struct",), ("union",), ("alias",)):
            for name in names:
                if self.kinds[name] in kinds:
                    getattr(self, "emit_" + self.kinds[name])(name, self.defs[name])
        self.emit("")
        self.emit("")
        self.emit("__all__ = [")
        for export in self.exports:
            self.emit(f"    {export!r},")
        self.emit("]")
        return "\n".join(self.lines) + "\n"

    def emit_vocabulary(self, name: str, definition: Dict[str, Any], kind: str) -> None:
        cls = camel(name)
        self.exports.append(cls)
        self.emit("")
        self.emit("")
        self.emit(f"class {cls}(WireEnum):")
        doc = (definition.get("description") or "").strip()
        note = (
            "An open vocabulary: a newer host may send other values, which are kept as plain strings."
            if kind == "open"
            else "A closed vocabulary: these are all the values of this protocol version."
        )
        self.lines += docstring(f"{doc}\n\n{note}" if doc else note, "    ")
        taken: set = set()
        for value, description in self.vocabulary_values(name, definition):
            self.emit(f"    {member_name(value, taken)} = {value!r}")
            self.lines += docstring(description, "    ")

    def emit_open(self, name: str, definition: Dict[str, Any]) -> None:
        self.emit_vocabulary(name, definition, "open")

    def emit_closed(self, name: str, definition: Dict[str, Any]) -> None:
        self.emit_vocabulary(name, definition, "closed")

    def emit_alias(self, name: str, definition: Dict[str, Any]) -> None:
        cls = camel(name)
        codec = self.codec(definition, name)
        self.exports.append(cls)
        self.emit("")
        self.emit(f"{cls} = {codec.annotation}")
        self.lines += docstring(definition.get("description"), "")

    def struct_fields(self, owner: str, schema: Dict[str, Any]) -> List[Tuple[str, str, Codec, bool, Any, Optional[str]]]:
        """(wire name, Python name, codec, required, default, description) of each property."""
        required = set(schema.get("required", []))
        fields = []
        for wire, prop in schema.get("properties", {}).items():
            codec = self.codec(prop, f"{owner}.{wire}")
            fields.append((wire, field_name(wire), codec, wire in required, prop.get("default", None), prop.get("description")))
        # Dataclass fields without a default come first.
        return [f for f in fields if f[3]] + [f for f in fields if not f[3]]

    def default_source(self, codec: Codec, default: Any, where: str) -> str:
        if default is None:
            return "None"
        if isinstance(default, str) and codec.vocabulary is not None and default in codec.vocabulary[1]:
            return f"{codec.vocabulary[0]}({default!r})"
        if isinstance(default, (bool, int, float, str)) and not isinstance(default, dict):
            if codec.annotation == "bytes":
                return "b''"
            return repr(default)
        if default == {} and codec.annotation.startswith("Dict["):
            return "field(default_factory=dict)"
        if default == [] and codec.annotation.startswith("List["):
            return "field(default_factory=list)"
        literal = json.dumps(default, sort_keys=True)
        read = codec.read_expr(f"_json.loads({literal!r})", repr(where))
        return f"field(default_factory=lambda: {read})"

    def emit_body(self, owner: str, schema: Dict[str, Any]) -> None:
        """The fields, reader and writer of an object's body."""
        fields = self.struct_fields(owner, schema)
        doc_lines = []
        for wire, _name, _codec, _required, _default, description in fields:
            if description:
                first = " ".join(description.split())
                doc_lines.append(f"- ``{wire}``: {first}")
        for wire, name, codec, required, default, _description in fields:
            if required:
                self.emit(f"    {name}: {codec.annotation}")
            else:
                self.emit(f"    {name}: {codec.annotation} = {self.default_source(codec, default, owner + '.' + wire)}")
        self.emit("    extra_fields: Dict[str, Any] = field(default_factory=dict, repr=False, compare=False)")
        self.emit('    """Fields the host sent that this version of the types does not know."""')
        known = ", ".join(repr(wire) for wire, *_ in fields)
        self.emit(f"    _FIELDS: ClassVar[frozenset] = frozenset(({known}{',' if len(fields) == 1 else ''}))")
        self.emit("")
        self.emit("    @classmethod")
        self.emit(f"    def _from_body(cls, value: Any, path: str) -> {camel(owner)!r}:")
        self.emit("        obj = read_object(value, path)")
        self.emit("        return cls(")
        for wire, name, codec, required, _default, _description in fields:
            sub = f'path + ".{wire}"'
            if required:
                read = codec.read_expr(f"read_required(obj, {wire!r}, path)", sub)
                self.emit(f"            {name}={read},")
            else:
                read = codec.read_expr(f"obj[{wire!r}]", sub)
                self.emit(f"            **({{{name!r}: {read}}} if {wire!r} in obj else {{}}),")
        self.emit("            extra_fields=extra_fields(obj, cls._FIELDS),")
        self.emit("        )")
        self.emit("")
        self.emit("    def _body_json(self) -> Dict[str, Any]:")
        self.emit("        out: Dict[str, Any] = {}")
        for wire, name, codec, required, _default, _description in fields:
            write = codec.write_expr(f"self.{name}")
            if required or not codec.annotation.startswith("Optional["):
                self.emit(f"        out[{wire!r}] = {write}")
            else:
                self.emit(f"        if self.{name} is not None:")
                self.emit(f"            out[{wire!r}] = {write}")
        self.emit("        return out")
        return doc_lines

    def emit_struct(self, name: str, definition: Dict[str, Any]) -> None:
        cls = camel(name)
        self.exports.append(cls)
        self.emit("")
        self.emit("")
        self.emit("@dataclass(frozen=True)")
        self.emit(f"class {cls}:")
        start = len(self.lines)
        fields_doc = self.emit_body(name, definition)
        self.insert_doc(start, definition.get("description"), fields_doc)
        self.emit("")
        self.emit("    @classmethod")
        self.emit(f"    def from_json(cls, value: Any, path: str = {cls!r}) -> {cls!r}:")
        self.emit('        """Reads it from its JSON value."""')
        self.emit("        return cls._from_body(value, path)")
        self.emit("")
        self.emit("    def to_json(self) -> Dict[str, Any]:")
        self.emit('        """Its JSON value."""')
        self.emit("        return self._body_json()")

    def insert_doc(self, at: int, description: Optional[str], fields_doc: List[str]) -> None:
        text = (description or "").strip()
        if fields_doc:
            text = (text + "\n\n" if text else "") + "Fields on the wire:\n\n" + "\n".join(fields_doc)
        self.lines[at:at] = docstring(text, "    ") + ([""] if text else [])

    def emit_union(self, name: str, definition: Dict[str, Any]) -> None:
        base = camel(name)
        self.exports.append(base)
        variants: List[Tuple[str, str]] = []
        self.emit("")
        self.emit("")
        self.emit(f"class {base}:")
        self.lines += docstring(
            (definition.get("description") or "").strip()
            + f"\n\nOne class per variant, named ``{base}`` and the variant's name; "
            + f"``{base}Other`` holds a variant this version of the types does not know.",
            "    ",
        )
        self.emit("")
        self.emit("    TAG: ClassVar[str] = ''")
        self.emit('    """The variant\'s name on the wire."""')
        branches = definition["oneOf"]
        self.with_answer = any("x-answer" in branch for branch in branches)
        self.with_streams = any("x-streams" in branch for branch in branches)
        if self.with_answer:
            self.emit("    ANSWER: ClassVar[Optional[str]] = None")
            self.emit('    """The answer this request gets (the schema\'s ``x-answer``), such as ``started``."""')
        if self.with_streams:
            self.emit("    STREAMS: ClassVar[Tuple[str, ...]] = ()")
            self.emit('    """The subscriptions this event travels on (the schema\'s ``x-streams``): ``pane``, ``watch``."""')
        self.emit("")
        self.emit("    @staticmethod")
        self.emit(f"    def from_json(value: Any, path: str = {base!r}) -> {base!r}:")
        self.emit('        """Reads whichever variant ``value`` holds."""')
        self.emit("        tag, body = read_tagged(value, path)")
        self.emit(f"        variant = _{base.upper()}_VARIANTS.get(tag)")
        self.emit("        if variant is None:")
        self.emit(f"            return {base}Other(tag=tag, body=body)")
        self.emit('        return variant._from_body(body, path + "." + tag)')
        self.emit("")
        self.emit("    def to_json(self) -> Any:")
        self.emit('        """Its JSON value: ``{"tag": body}``, or ``"tag"`` for a variant without fields."""')
        self.emit("        raise NotImplementedError")
        for branch in definition["oneOf"]:
            self.branch = branch
            if self.is_const_string(branch):
                tag = branch["const"]
                cls = base + camel(tag)
                variants.append((tag, cls))
                self.emit_unit_variant(base, cls, tag, branch)
                continue
            self.branch = branch
            props = branch.get("properties", {})
            if branch.get("type") != "object" or len(props) != 1:
                raise SchemaError(f"{name}: a variant must be a string const or an object with one key")
            ((tag, inner),) = props.items()
            cls = base + camel(tag)
            variants.append((tag, cls))
            description = branch.get("description") or inner.get("description")
            if "$ref" in inner and self.kinds[self.ref_name(inner["$ref"])] == "struct":
                self.emit_struct_variant(base, cls, tag, camel(self.ref_name(inner["$ref"])), description)
            elif inner.get("type") == "object" and "additionalProperties" not in inner:
                self.emit_object_variant(base, cls, tag, inner, description)
            else:
                self.emit_value_variant(base, cls, tag, inner, description)
        self.emit_other_variant(base)
        self.emit("")
        self.emit("")
        self.emit(f"_{base.upper()}_VARIANTS: Dict[str, Any] = {{")
        for tag, cls in variants:
            self.emit(f"    {tag!r}: {cls},")
        self.emit("}")

    def variant_head(self, cls: str, bases: str, tag: str, description: Optional[str]) -> None:
        self.exports.append(cls)
        self.emit("")
        self.emit("")
        self.emit("@dataclass(frozen=True)")
        self.emit(f"class {cls}({bases}):")
        self.head_doc_at = len(self.lines)
        self.lines += docstring(description, "    ")
        self.emit("")
        self.emit(f"    TAG: ClassVar[str] = {tag!r}")
        branch = getattr(self, "branch", {})
        if isinstance(branch.get("x-answer"), str):
            self.emit(f"    ANSWER: ClassVar[Optional[str]] = {branch['x-answer']!r}")
        if isinstance(branch.get("x-streams"), list):
            streams = tuple(str(stream) for stream in branch["x-streams"])
            self.emit(f"    STREAMS: ClassVar[Tuple[str, ...]] = {streams!r}")

    def variant_tail(self, cls: str, base: str, unit: bool = False) -> None:
        self.emit("")
        self.emit("    @classmethod")
        self.emit(f"    def from_json(cls, value: Any, path: str = {cls!r}) -> {cls!r}:")
        self.emit(f'        """Reads it from its JSON value; another variant of ``{base}`` is refused."""')
        self.emit("        tag, body = read_tagged(value, path)")
        self.emit("        if tag != cls.TAG:")
        self.emit('            raise DecodeError(path, f"expected `{cls.TAG}`, got `{tag}`")')
        self.emit('        return cls._from_body(body, path + "." + tag)')
        self.emit("")
        self.emit("    def to_json(self) -> Any:")
        if unit:
            self.emit("        return self.TAG")
        else:
            self.emit("        return {self.TAG: self._body_json()}")

    def emit_unit_variant(self, base: str, cls: str, tag: str, branch: Dict[str, Any]) -> None:
        self.variant_head(cls, base, tag, branch.get("description"))
        self.emit("")
        self.emit("    @classmethod")
        self.emit(f"    def _from_body(cls, value: Any, path: str) -> {cls!r}:")
        self.emit("        return cls()")
        self.variant_tail(cls, base, unit=True)

    def emit_struct_variant(self, base: str, cls: str, tag: str, struct: str, description: Optional[str]) -> None:
        self.variant_head(cls, f"{struct}, {base}", tag, description)
        self.variant_tail(cls, base)

    def emit_object_variant(self, base: str, cls: str, tag: str, inner: Dict[str, Any], description: Optional[str]) -> None:
        self.variant_head(cls, base, tag, None)
        start = self.head_doc_at
        fields_doc = self.emit_body(base + "." + tag, inner)
        self.lines[start:start] = docstring(self.fields_text(description, fields_doc), "    ")
        self.variant_tail(cls, base)

    @staticmethod
    def fields_text(description: Optional[str], fields_doc: List[str]) -> str:
        text = (description or "").strip()
        if fields_doc:
            text = (text + "\n\n" if text else "") + "Fields on the wire:\n\n" + "\n".join(fields_doc)
        return text

    def emit_value_variant(self, base: str, cls: str, tag: str, inner: Dict[str, Any], description: Optional[str]) -> None:
        codec = self.codec(inner, f"{base}.{tag}")
        self.variant_head(cls, base, tag, description)
        self.emit(f"    value: {codec.annotation}")
        self.emit("")
        self.emit("    @classmethod")
        self.emit(f"    def _from_body(cls, value: Any, path: str) -> {cls!r}:")
        self.emit(f"        return cls(value={codec.read_expr('value', 'path')})")
        self.emit("")
        self.emit("    def _body_json(self) -> Any:")
        self.emit(f"        return {codec.write_expr('self.value')}")
        self.variant_tail(cls, base)

    def emit_other_variant(self, base: str) -> None:
        cls = base + "Other"
        self.exports.append(cls)
        self.emit("")
        self.emit("")
        self.emit("@dataclass(frozen=True)")
        self.emit(f"class {cls}({base}):")
        self.emit(f'    """A variant of ``{base}`` this version of the types does not know (a newer')
        self.emit('    host\'s): its name and its JSON body, as sent."""')
        self.emit("")
        self.emit("    tag: str")
        self.emit("    body: Any = None")
        self.emit("")
        self.emit("    def to_json(self) -> Any:")
        self.emit("        return self.tag if self.body is None else {self.tag: self.body}")


def generate(schema: Dict[str, Any]) -> str:
    """The source of ``_types.py`` for ``schema``."""
    source = Generator(schema).generate()
    # Names the generated code uses beyond the helpers it imports.
    needs = []
    if "DecodeError(" in source:
        needs.append("DecodeError")
    if "_json.loads(" in source:
        source = source.replace("from dataclasses import", "import json as _json\nfrom dataclasses import", 1)
    if needs:
        source = source.replace("from ._wire import (\n", "from ._wire import (\n    DecodeError,\n", 1)
    return source


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--schema", type=Path, default=DEFAULT_SCHEMA, help="the JSON Schema to read")
    parser.add_argument("--output", type=Path, default=OUTPUT, help="the module to write")
    parser.add_argument("--check", action="store_true", help="exit 1 when the module differs instead of writing it")
    args = parser.parse_args(argv)
    source = generate(json.loads(args.schema.read_text(encoding="utf-8")))
    if args.check:
        current = args.output.read_text(encoding="utf-8") if args.output.exists() else ""
        if current != source:
            print(f"{args.output} differs from what {args.schema} makes; run {Path(__file__).name}", file=sys.stderr)
            return 1
        return 0
    args.output.write_text(source, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
