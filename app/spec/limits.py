"""Limits that keep a crafted spec file from costing the parser its stack or the user a
screenful of noise: how deeply tables may nest, which numbers are sensible, how much of a
bad value a message repeats."""

from __future__ import annotations

import re
import tomllib
from typing import Any

from app.spec import expr

# A spec's tables and arrays nest four deep at most ([verify].cases[i].n); anything much deeper
# is not a spec, and deep enough nesting would exhaust the TOML parser's stack.
MAX_NESTING = 16
TOO_DEEP = (f"tables or arrays nested more than {MAX_NESTING} levels deep; a spec needs at "
            "most 4 (see docs/spec.md for its layout)")


# More cases or parameters than anyone writes by hand: bounds that keep the checks of a crafted
# spec (every case against every size variable) small. A kernel's parameters fit in 32 KiB.
MAX_CASES = 1000
MAX_ARGS = 1024
# A spec lists every problem, but a crafted one could have millions; the rest are counted.
MAX_PROBLEMS = 100
# Python's TOML reader takes time quadratic in the parts of a dotted key (`a.b.c...`; 40,000
# parts took 24 s), so keys of more parts than any spec needs are refused before it reads them.
MAX_KEY_PARTS = 64
_KEY_PART = r"(?:[A-Za-z0-9_-]++|\"[^\"\n]*+\"|'[^'\n]*+')"
# A run of key parts joined by dots, starting at a word's start only and never giving back, so
# that the search itself stays linear. Strings are read as parts too: over-counting is harmless.
_DOTTED = re.compile(r"(?<![A-Za-z0-9_-])" + _KEY_PART + r"(?:[ \t]*+\.[ \t]*+" + _KEY_PART +
                     r")++")


def long_dotted_key(text: str) -> int | None:
    """The line of the first dotted key of more than MAX_KEY_PARTS parts in TOML `text`, or
    None (a string value holding as many dots counts too; no spec has one)."""
    for match in _DOTTED.finditer(text):
        if match.group().count(".") >= MAX_KEY_PARTS:
            return text.count("\n", 0, match.start()) + 1
    return None


def loads_bounded(text: str) -> dict[str, Any]:
    """tomllib.loads for TOML text from a file, refusing first what it would read in more than
    linear time (a dotted key of very many parts) or too deeply nested to read: a
    TOMLDecodeError either way, so every reader keeps its one except clause."""
    line = long_dotted_key(text)
    if line is not None:
        raise tomllib.TOMLDecodeError(f"line {line}: a dotted key of more than "
                                      f"{MAX_KEY_PARTS} parts: {TOO_DEEP}")
    try:
        return tomllib.loads(text)
    except RecursionError:
        raise tomllib.TOMLDecodeError(TOO_DEEP) from None


def nesting(data: Any) -> int:
    """How deeply tables and arrays nest in `data`, counted without recursion (the data may
    come from a crafted file), stopping once past MAX_NESTING."""
    deepest, pending = 0, [(data, 0)]
    while pending:
        value, depth = pending.pop()
        deepest = max(deepest, depth)
        if depth > MAX_NESTING:
            break
        if isinstance(value, dict):
            pending.extend((child, depth + 1) for child in value.values())
        elif isinstance(value, list):
            pending.extend((child, depth + 1) for child in value)
    return deepest


def sensible(number: int | float) -> bool:
    """A finite number that the expression evaluator accepts (whole numbers up to 2**80)."""
    try:
        expr.checked(number, "")
    except expr.ExprError:
        return False
    return True


def brief(value: Any) -> str:
    """A value for a message, cut short (a crafted spec may hold a huge or deep one)."""
    text = type(value).__name__ if isinstance(value, list | dict) else repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
