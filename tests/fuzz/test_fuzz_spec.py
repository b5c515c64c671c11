"""Spec files (TOML and every value in them) on hostile text: each loads or raises SpecError
quickly, whatever a field holds; the GUI's Spec pane parses in the window's process."""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.spec.limits import loads_bounded
from app.spec.model import SpecError, parse_spec_text
from tests.fuzz.bounds import bounded, grows_linearly

TEMPLATE = """[kernel]
source = "k.cu"
entry = {entry}

[[arg]]
name = "a"
kind = {kind}
dtype = {dtype}
shape = [{shape}]
init = {init}

[[arg]]
name = "c"
kind = "out"
dtype = "float32"
shape = ["n"]

[launch]
grid = [{grid}]
block = ["256"]

[reference]
python = "r.py"

[verify]
cases = [{cases}]
"""
FIELDS = {"entry": '"k"', "kind": '"in"', "dtype": '"float32"', "shape": '"n"',
          "init": '"normal"', "grid": '"cdiv(n, 256)"', "cases": "{ n = 1 }"}
# Texts that a field may be given: anything, and pieces of the spec's own little languages.
PIECES = ["n", "1", "(", ")", ",", " ", "uniform", "randint", "cdiv(", "min(", "+", "*", "**",
          "1e999", "-", ".", "=", "{", "}", "[", "]", '"', "\\", "\n"]
TEXTS = st.one_of(st.text(max_size=200),
                  st.lists(st.sampled_from(PIECES), max_size=60).map("".join))
VALUES = st.recursive(st.none() | st.booleans() | st.integers() | st.floats() | TEXTS,
                      lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
                          st.from_regex(r"[a-z_]{1,6}", fullmatch=True), inner, max_size=4),
                      max_leaves=12)


def _toml(value: object) -> str:
    """A Python value written as TOML (JSON's strings, numbers and arrays are TOML's)."""
    if value is None:
        return '""'
    if isinstance(value, dict):
        return "{ " + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + " }"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    if isinstance(value, float) and value != value:
        return "nan"
    if isinstance(value, float) and value in (float("inf"), float("-inf")):
        return "inf" if value > 0 else "-inf"
    return json.dumps(value)


def _load(text: str) -> object:
    """The spec, as the CLI and the Spec pane load it (files need not exist)."""
    return parse_spec_text(text, Path("/nonexistent-spec-folder"), None, check_files=False)


@given(st.sampled_from(sorted(FIELDS)), VALUES)
def test_any_value_in_any_field_loads_or_is_refused(field: str, value: object) -> None:
    """Whatever one field holds (text, numbers, tables, lists), the spec loads or every
    problem is a SpecError."""
    text = TEMPLATE.format(**{**FIELDS, field: _toml(value)})
    bounded(_load, text, (SpecError,))


@given(st.sampled_from(["shape", "init", "grid"]), TEXTS)
def test_any_text_in_an_expression_or_init_loads_or_is_refused(field: str, text: str) -> None:
    """Text for the fields that are parsed further (expressions, inits)."""
    bounded(_load, TEMPLATE.format(**{**FIELDS, field: json.dumps(text)}), (SpecError,))


@given(st.text(max_size=400))
def test_any_file_loads_or_is_refused(text: str) -> None:
    """Any file at all."""
    bounded(_load, text, (SpecError,))


def test_an_init_with_many_spaces_is_a_spec_problem_at_once() -> None:
    """The issue's probe, through the spec: `uniform(1` and 120k spaces."""
    text = TEMPLATE.format(**{**FIELDS, "init": '"uniform(1' + " " * 120_000 + ')"'})
    result = bounded(_load, text, (SpecError,), seconds=1.0)
    assert result.error == "SpecError" and "characters long" in result.message


def test_a_long_dotted_key_is_refused_before_the_toml_reader() -> None:
    """Python's TOML reader is quadratic in a dotted key's parts (40,000 took 24 s)."""
    for text in ("a" + ".a" * 200_000 + " = 1\n", "[" + ".".join(["t"] * 100_000) + "]\n",
                 'x = { ' + ".".join(['"q"'] * 100_000) + " = 1 }\n"):
        result = bounded(_load, text, (SpecError,), seconds=1.0)
        assert "a dotted key of more than" in result.message
        assert "nested more than 16 levels" in result.message


def test_every_other_reader_of_spec_files_refuses_a_long_dotted_key_too() -> None:
    """The Spec pane's form, the task suite and teach's source scan read specs with
    spec_limits.loads_bounded, not tomllib itself (its dotted keys took 24 s in the window)."""
    text = "a" + ".a" * 200_000 + " = 1\n"
    result = bounded(loads_bounded, text, (tomllib.TOMLDecodeError,), seconds=1.0)
    assert result.error == "TOMLDecodeError" and "a dotted key of more than" in result.message
    assert loads_bounded("a.b.c = 1\n") == {"a": {"b": {"c": 1}}}


def test_short_dotted_keys_and_dotted_values_still_load() -> None:
    """The dotted-key guard leaves ordinary files alone: a few parts, numbers, versions."""
    text = TEMPLATE.format(**FIELDS) + '[task]\ndescription = "v1.2.3, see 1.5.6.7"\n' \
                                       "level = 1\n"
    _load(text)
    spec = _load('bench.bytes = "12 * n"\n' + TEMPLATE.format(**FIELDS))
    assert spec.bench_bytes == "12 * n"  # type: ignore[attr-defined]


def _many_variables(args: int, cases: int) -> str:
    """A spec with `args` more inputs of 16 size variables each, and `cases` empty cases (each
    of which misses every variable: a problem per pair)."""
    extra = "".join(f'[[arg]]\nname = "b{i}"\nkind = "in"\ndtype = "float32"\nshape = ["max('
                    + ",".join(f"w{i}_{j}" for j in range(16)) + ')"]\n' for i in range(args))
    return TEMPLATE.format(**{**FIELDS, "cases": "{}, " * cases}) + extra


@pytest.mark.parametrize("make", [
    lambda k: TEMPLATE.format(**{**FIELDS, "cases": "{}, " * k}),
    lambda k: _many_variables(k // 16, k),
    lambda k: "a" + ".a" * k + " = 1\n",
    lambda k: TEMPLATE.format(**{**FIELDS, "kind": json.dumps("x" * k)}),
], ids=["many-cases", "many-variables", "dotted-key", "long-value"])
def test_the_work_grows_linearly(make: object) -> None:
    """A spec 4 times larger costs about 4 times more (at most the listed problems are kept)."""
    grows_linearly(_load, make, 2000, (SpecError,))  # type: ignore[arg-type]
