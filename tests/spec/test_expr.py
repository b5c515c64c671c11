"""The spec expression evaluator: the language it accepts and everything it refuses."""

from __future__ import annotations

import pytest

from app.spec import expr


@pytest.mark.parametrize(("text", "variables", "expected"), [
    ("n", {"n": 7}, 7),
    ("12 * n", {"n": 3}, 36),
    ("cdiv(n, 256)", {"n": 1}, 1),
    ("cdiv(n, 256)", {"n": 257}, 2),
    ("cdiv(n, 256)", {"n": 0}, 0),
    ("min(n, 4) + max(m, 2, 9)", {"n": 10, "m": 3}, 13),
    ("(n + 1) // 2 % 3", {"n": 9}, 2),
    ("2 ** 10", {}, 1024),
    ("-n + 1_000", {"n": 1}, 999),
    ("n / 4", {"n": 2}, 0.5),
    ("1.5 * n", {"n": 2}, 3.0),
])
def test_evaluates_the_small_arithmetic_language(text: str, variables: dict[str, int],
                                                 expected: float) -> None:
    assert expr.evaluate(text, variables) == expected


@pytest.mark.parametrize(("text", "message"), [
    ("__import__('os').system('true')", "only min, max and cdiv can be called"),
    ("n.__class__", "Attribute is not allowed"),
    ("[1, 2]", "List is not allowed"),
    ("'abc'", "only numbers are allowed"),
    ("True", "only numbers are allowed"),
    ("n if n else 1", "IfExp is not allowed"),
    ("n << 2", "operator LShift is not allowed"),
    ("lambda: 1", "Lambda is not allowed"),
    ("cdiv(1)", "cdiv takes 2 arguments, got 1"),
    ("max(n, key=abs)", "takes no keyword arguments"),
    ("2 ** 10 ** 9", "exponent 1000000000 is too large"),
    ("", "empty expression"),
    ("n +", "cannot parse"),
    ("-" * 60 + "1", "nested too deeply"),
    ("1" * 600, "characters long"),
])
def test_refuses_everything_else_with_a_clear_message(text: str, message: str) -> None:
    with pytest.raises(expr.ExprError, match=message.replace("(", r"\(").replace("*", r"\*")):
        expr.evaluate(text, {"n": 2})


def test_unknown_names_list_the_known_ones() -> None:
    with pytest.raises(expr.ExprError, match="unknown name 'm' \\(defined here: n\\)"):
        expr.evaluate("m * 2", {"n": 1})


@pytest.mark.parametrize("text", ["n // 0", "n % 0", "n / 0", "cdiv(n, 0)"])
def test_division_by_zero_is_an_expression_error(text: str) -> None:
    with pytest.raises(expr.ExprError, match="by zero"):
        expr.evaluate(text, {"n": 3})


def test_huge_values_are_refused_before_they_cost_memory() -> None:
    with pytest.raises(expr.ExprError, match="out of range"):
        expr.evaluate("n ** 100 * n ** 100", {"n": 10**6})


def test_integer_expressions_refuse_fractions() -> None:
    assert expr.evaluate_int("n / 2", {"n": 4}, "shape") == 2
    with pytest.raises(expr.ExprError, match="shape must be a whole number"):
        expr.evaluate_int("n / 2", {"n": 5}, "shape")


def test_names_lists_variables_not_functions() -> None:
    assert expr.names("cdiv(n, bs) + max(m, 1)") == {"n", "bs", "m"}
