"""The one typed codec (app/base/codec.py): records to JSON data and back by field type, with
errors that name the record, the field's path and the offending value."""

from __future__ import annotations

import dataclasses
import json
from enum import StrEnum

import msgspec
import pytest

from app.base import codec


class Colour(StrEnum):
    """A small vocabulary."""

    RED = "red"
    BLUE = "blue"


class Base:
    """A keyed union's base."""

    __slots__ = ()


class Named(msgspec.Struct, Base, frozen=True):
    """A member told apart by its "name" key."""

    name: str


class Counted(msgspec.Struct, Base, frozen=True, forbid_unknown_fields=True):
    """A member told apart by its "count" key, refusing keys it does not have."""

    count: int


codec.keyed_union(Base, {"name": Named, "count": Counted})


class Finding(msgspec.Struct, frozen=True, omit_defaults=True):
    """A nested record with an enum and optional fields."""

    colour: Colour
    max_error: float | None = None
    written: bool = codec.always(True)


class Reply(msgspec.Struct, frozen=True):
    """The outer record."""

    findings: list[Finding]
    items: tuple[Base, ...] = ()


def test_records_round_trip_with_enums_as_their_values() -> None:
    data = {"findings": [{"colour": "red", "written": True},
                         {"colour": "blue", "max_error": 0.5, "written": False}],
            "items": [{"name": "a"}, {"count": 3}]}
    reply = codec.from_data(Reply, data, "reply")
    assert reply.findings[0].colour is Colour.RED
    assert reply.items == (Named("a"), Counted(3))
    assert codec.loads(Reply, codec.dumps(reply), "reply") == reply
    back = codec.to_data(reply)
    assert back["findings"] == data["findings"]  # the default still written, None left out
    assert [dict(i) for i in back["items"]] == data["items"]


@pytest.mark.parametrize(("data", "words"), [
    ({"findings": [{"colour": "red"}] * 3 + [{"colour": "red", "max_error": "x"}]},
     "reply: findings[3].max_error: expected a number or null, got 'x'"),
    ({"findings": [{"colour": "green"}]}, "reply: findings[0].colour: invalid enum value"),
    ({"findings": [{}]}, "reply: findings[0].colour: missing"),
    ({"findings": [], "items": [{"count": "3"}]}, "reply: items[0].count: expected a whole "
                                                   "number, got '3'"),
    ({"findings": [], "items": [{"count": 3, "extra": 1}]}, "reply: items[0].extra: not a "
                                                            "field"),
    ({"findings": [], "items": [{"size": 3}]}, "reply: items[0]: holds none of the keys"),
    ([], "reply: the whole record: expected a table, got []"),
])
def test_a_malformed_record_names_the_field(data: object, words: str) -> None:
    with pytest.raises(codec.CodecError) as caught:
        codec.from_data(Reply, data, "reply")
    assert str(caught.value).startswith(words), str(caught.value)
    assert isinstance(caught.value, ValueError)


def test_text_that_is_not_json_is_a_codec_error() -> None:
    with pytest.raises(codec.CodecError, match="reply: not JSON"):
        codec.loads(Reply, b"{oops", "reply")


def test_replace_keeps_the_record_type() -> None:
    finding = Finding(Colour.RED)
    assert codec.replace(finding, max_error=1.0) == Finding(Colour.RED, 1.0)


@dataclasses.dataclass
class Timed:
    """A dataclass whose JSON renames a field, rounds one and adds a computed key."""

    name: str
    seconds: float
    note: str = ""
    scratch: int = 0


codec.shape(Timed, lambda t: {"title": t.name.upper(), "seconds": round(t.seconds, 1)},
            ("title", "name", "seconds", "note"))


def test_a_shaped_dataclass_writes_its_computed_keys_in_order_and_reads_back() -> None:
    data = codec.to_data([Timed("a", 1.26, scratch=5)])
    assert json.dumps(data) == '[{"title": "A", "name": "a", "seconds": 1.3, "note": ""}]'
    assert codec.from_data(list[Timed], data, "timed") == [Timed("a", 1.3)]


def test_a_plain_dataclass_writes_every_field_as_asdict_does() -> None:
    finding = Timed("b", 2.0)
    assert codec.to_object(Outer(finding, [finding])) == {
        "one": {"title": "B", "name": "b", "seconds": 2.0, "note": ""},
        "many": [{"title": "B", "name": "b", "seconds": 2.0, "note": ""}], "count": 0}


@dataclasses.dataclass
class Outer:
    """A dataclass holding shaped ones, with a default field that is still written."""

    one: Timed
    many: list[Timed]
    count: int = 0
