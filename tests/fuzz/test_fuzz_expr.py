"""Spec expressions on hostile text: each parses and evaluates, or raises ExprError, quickly;
deep nesting never reaches Python's recursion limit."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.spec import expr
from tests.fuzz.bounds import bounded, grows_linearly

ATOMS = ["n", "m", "1", "0", "2.5", "1e308", "+", "-", "*", "/", "//", "%", "**", "(", ")",
         "min(", "max(", "cdiv(", ",", " ", "[", "]", "lambda", ":", "'a'", "if", "else",
         "__import__", ".", "~", "not ", "9" * 40]
EXPRESSIONS = st.one_of(st.lists(st.sampled_from(ATOMS), max_size=60).map("".join),
                        st.text(max_size=120))


def _evaluate(text: str) -> object:
    """Parse, list the names, and evaluate with every name defined."""
    expr.names(text)
    return expr.evaluate(text, {"n": 1000, "m": 3})


@given(EXPRESSIONS)
def test_any_expression_evaluates_or_is_refused(text: str) -> None:
    """Any text gives a number or an ExprError (never another exception, never a hang)."""
    bounded(_evaluate, text, (expr.ExprError,))


@pytest.mark.parametrize("text", ["(" * 400 + "1" + ")" * 400, "-" * 499 + "1", "1+" * 249 + "1",
                                  "min(" * 160 + "1" + ")" * 160, "2**" * 166 + "2",
                                  "n." * 249 + "n", "x" * 10**6, " " * 10**6 + "1"])
def test_deep_or_long_expressions_are_refused_quickly(text: str) -> None:
    """Nesting and length past the limits are an ExprError, not a RecursionError."""
    assert bounded(_evaluate, text, (expr.ExprError,), seconds=0.5).error in ("", "ExprError")


def test_the_work_grows_linearly() -> None:
    """Long texts are refused by their length, whatever they hold."""
    grows_linearly(_evaluate, lambda k: "1+" * k + "1", 20_000, (expr.ExprError,))
