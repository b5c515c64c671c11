"""The one typed codec: every record that crosses a process boundary or is stored (the worker
protocol, the GUI's job pipe, the evaluation store, review reports, bundles' claims) is a typed
record (a msgspec Struct or a dataclass, with StrEnum fields), turned into JSON data and back
here, by field type, with one error type whose message names the field.

The records say their own wire rules through msgspec's Struct options: `omit_defaults` leaves
out fields at their default, `rename`/`field(name=...)` give a field its JSON key, `tag_field`
and `tag` tell the members of a union apart, `forbid_unknown_fields` refuses keys the record
does not have (readers that ignored them keep ignoring them). A union whose members carry no
tag but differ by a key they hold (a buffer argument has "buffer", a scalar one "scalar") is
declared once with `keyed_union`.

The bytes are the json module's (`json.dumps` of `to_data`'s result), so that files and lines
keep today's exact spelling: separators, key order, NaN; msgspec (chosen by
benchmarks/codec_choice.py) does the typed half, which is what hand-written code got wrong.
"""

from __future__ import annotations

import dataclasses
import json
import re
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

import msgspec

T = TypeVar("T")

# A union without a tag: its base class, and which member each key picks.
_KEYED: dict[type, dict[str, type]] = {}
_AT = re.compile(r" - at `\$([^`]*)`")
_FIELD = re.compile(r"Object (missing required|contains unknown) field `([^`]+)`")
_EXPECTED = re.compile(r"Expected `([^`]+)`, got `([^`]+)`")
_STEP = re.compile(r"\.([^.\[]+)|\[(\d+)\]")
# msgspec's names of JSON types, in the words our messages use.
_WORDS = {"int": "a whole number", "float": "a number", "int | float": "a number",
          "str": "text", "bool": "true or false", "array": "a list", "object": "a table",
          "null": "null"}


class CodecError(ValueError):
    """Data that is not the record it should be; the message names the record, the field (a
    path such as `runs[3].findings[0].max_abs_error`) and what was wrong."""


def keyed_union(base: type, members: Mapping[str, type]) -> None:
    """Declare `base` (a class with empty __slots__ that each member also derives from) as a
    union whose members are told apart by a key only one of them holds."""
    _KEYED[base] = dict(members)


@dataclasses.dataclass(frozen=True)
class _Shape:
    """How a dataclass's JSON differs from its fields (see `shape`)."""

    computed: Callable[[Any], dict[str, Any]]
    order: tuple[str, ...]
    omit_empty: tuple[str, ...] = ()


_SHAPES: dict[type, _Shape] = {}


def _nothing(_: Any) -> dict[str, Any]:
    """No computed keys."""
    return {}


def shape(cls: type, computed: Callable[[Any], dict[str, Any]] = _nothing,
          order: tuple[str, ...] = (), omit_empty: tuple[str, ...] = ()) -> None:
    """Declare how the dataclass `cls` is written where its JSON is not just its fields:
    `computed` gives keys worked out from the record (an exit code, a summary, a field under
    another name; a key that is also a field's replaces that field's value, a rounded time
    say), `order` the JSON's keys in order where that is not the fields' order followed by the
    computed keys (a field it leaves out is not written), `omit_empty` the keys left out while
    they are empty (a field added later: files written without it write back the same).
    Readers ignore the computed keys as they ignore any key a dataclass does not have."""
    _SHAPES[cls] = _Shape(computed, tuple(order), tuple(omit_empty))


def to_data(value: Any) -> Any:
    """A record as JSON data (dicts, lists, strings, numbers, booleans, None): StrEnums as their
    values, a Struct's fields renamed and left out as its options say, a dataclass's fields all
    written in order (as dataclasses.asdict does) with the keys `shape` declared for it."""
    return msgspec.to_builtins(_shaped(value))


def _shaped(value: Any) -> Any:
    """`value` with every dataclass in it (outside Structs, which msgspec writes by their own
    options) turned into its JSON object; the rest is left for msgspec."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        data = {f.name: getattr(value, f.name) for f in dataclasses.fields(value)}
        found = _SHAPES.get(type(value))
        if found is not None:
            data.update(found.computed(value))
            data = {key: data[key] for key in found.order} if found.order else data
            data = {k: v for k, v in data.items() if k not in found.omit_empty or v}
        return {key: _shaped(item) for key, item in data.items()}
    if isinstance(value, list | tuple):
        return [_shaped(item) for item in value]
    if isinstance(value, dict):
        return {key: _shaped(item) for key, item in value.items()}
    return value


def to_object(value: Any) -> dict[str, Any]:
    """A record as a JSON object (CodecError when it does not encode to one)."""
    data = to_data(value)
    if not isinstance(data, dict):
        raise CodecError(f"{type(value).__name__} does not encode to a JSON object")
    return data


def dumps(value: Any, **options: Any) -> str:
    """A record as JSON text; `options` are json.dumps's (indent, sort_keys, separators)."""
    return json.dumps(to_data(value), **options)


def from_data(kind: type[T], data: Any, what: str) -> T:
    """The record of type `kind` held in JSON data; CodecError naming `what` (the record, in
    words: "run reply"), the field and the problem when the data is not one."""
    try:
        return msgspec.convert(data, kind, dec_hook=_keyed_member)
    except msgspec.ValidationError as error:
        raise CodecError(f"{what}: {explain(str(error), data)}") from None


def loads(kind: type[T], text: str | bytes, what: str) -> T:
    """The record of type `kind` in JSON text (CodecError when it is not JSON or not one)."""
    try:
        data = json.loads(text)
    except (ValueError, RecursionError) as error:
        raise CodecError(f"{what}: not JSON ({error})") from None
    return from_data(kind, data, what)


def _keyed_member(kind: type, data: Any) -> Any:
    """msgspec's hook for a type it does not know: a keyed union's member, chosen by key."""
    members = _KEYED.get(kind)
    if members is None:
        raise NotImplementedError(f"no codec for {kind.__name__}")
    if not isinstance(data, dict):
        raise TypeError(f"Expected `object`, got `{_json_type(data)}`")
    chosen = next((member for key, member in members.items() if key in data), None)
    if chosen is None:
        raise ValueError(f"holds none of the keys {', '.join(members)}")
    try:
        return msgspec.convert(data, chosen, dec_hook=_keyed_member)
    except msgspec.ValidationError as error:
        # msgspec adds the outer path after this text; the inner one stays in it.
        raise ValueError(str(error)) from None


def _json_type(value: Any) -> str:
    """msgspec's name of a value's JSON type."""
    names = {bool: "bool", int: "int", float: "float", str: "str", list: "array",
             dict: "object", type(None): "null"}
    return names.get(type(value), type(value).__name__)


def explain(text: str, data: Any) -> str:
    """msgspec's error text as `path: what was wrong`, with the offending value shown."""
    paths = _AT.findall(text)
    reason = _AT.sub("", text)
    path = "".join(reversed(paths)).lstrip(".")
    named = _FIELD.fullmatch(reason)
    if named:
        path = f"{path}.{named.group(2)}".lstrip(".")
        reason = "missing" if named.group(1) == "missing required" else \
            "not a field of this record (unknown key)"
    expected = _EXPECTED.fullmatch(reason)
    if expected:
        reason = f"expected {_words(expected.group(1))}, got " \
                 f"{_shown(data, path, expected.group(2))}"
    return f"{path or 'the whole record'}: {reason[:1].lower()}{reason[1:]}"


def _words(names: str) -> str:
    """msgspec's `float | null` as "a number or null"."""
    if names in _WORDS:
        return _WORDS[names]
    return " or ".join(_WORDS.get(name, name) for name in names.split(" | "))


def _shown(data: Any, path: str, fallback: str) -> str:
    """The value at `path` in `data`, shortened, or msgspec's type name where it is not found."""
    value = data
    for name, index in _STEP.findall("." + path):
        try:
            value = value[int(index)] if index else value[name]
        except (KeyError, IndexError, TypeError, ValueError):
            return _WORDS.get(fallback, fallback)
    shown = repr(value)
    return shown if len(shown) <= 60 else shown[:57] + "..."


def always(default: Any) -> Any:
    """A field default that is still written when a record leaves out its defaults
    (`omit_defaults`): a reader that meets an old line without it gets `default`."""
    return msgspec.field(default_factory=lambda: default)


def replace(record: T, **changes: Any) -> T:
    """A copy of a record (a Struct) with some fields changed."""
    return msgspec.structs.replace(record, **changes)  # type: ignore[type-var]
