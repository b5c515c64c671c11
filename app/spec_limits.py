"""Limits that keep a crafted spec file from costing the parser its stack or the user a
screenful of noise: how deeply tables may nest, which numbers are sensible, how much of a
bad value a message repeats."""

from __future__ import annotations

from typing import Any

from app import expr

# A spec's tables and arrays nest four deep at most ([verify].cases[i].n); anything much deeper
# is not a spec, and deep enough nesting would exhaust the TOML parser's stack.
MAX_NESTING = 16
TOO_DEEP = (f"tables or arrays nested more than {MAX_NESTING} levels deep; a spec needs at "
            "most 4 (see DESIGN.md for its layout)")


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
