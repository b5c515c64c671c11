"""A safe evaluator for spec expressions: small arithmetic over a case's size variables.

Numbers, `+ - * / // % **`, parentheses, `min`, `max` and `cdiv(a, b)`. The text is parsed with
Python's `ast` module and only those node types are walked; nothing is ever passed to `eval`.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable, Mapping

Number = int | float

MAX_LENGTH = 500
MAX_DEPTH = 40
MAX_EXPONENT = 128
# Larger magnitudes only come from mistakes or attacks (a 2**10**9 would freeze the app).
MAX_MAGNITUDE = 2**80


class ExprError(ValueError):
    """An expression that cannot be parsed or evaluated; the message says why."""


def _cdiv(a: Number, b: Number) -> Number:
    """Ceiling division: the number of blocks of size b that cover a."""
    if b == 0:
        raise ExprError("cdiv by zero")
    return -(-a // b)


def _safe_pow(base: Number, exponent: Number) -> Number:
    """`**` with a bounded exponent, so that a spec cannot make the evaluator hang."""
    if abs(exponent) > MAX_EXPONENT:
        raise ExprError(f"exponent {exponent} is too large (at most {MAX_EXPONENT})")
    result: Number = operator.pow(base, exponent)
    return result


def _divide(a: Number, b: Number) -> Number:
    """True division, with a clear message for zero."""
    if b == 0:
        raise ExprError("division by zero")
    return a / b


def _floor_divide(a: Number, b: Number) -> Number:
    """Floor division, with a clear message for zero."""
    if b == 0:
        raise ExprError("division by zero")
    return a // b


def _modulo(a: Number, b: Number) -> Number:
    """Remainder, with a clear message for zero."""
    if b == 0:
        raise ExprError("modulo by zero")
    return a % b


_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: _divide,
    ast.FloorDiv: _floor_divide,
    ast.Mod: _modulo,
    ast.Pow: _safe_pow,
}
_FUNCTIONS: dict[str, Callable[..., Number]] = {"min": min, "max": max, "cdiv": _cdiv}
_ARITY = {"min": (1, 16), "max": (1, 16), "cdiv": (2, 2)}


def parse(text: str) -> ast.expr:
    """Parse expression text, refusing anything beyond the small arithmetic language."""
    if not isinstance(text, str):
        raise ExprError(f"expected an expression as text, got {type(text).__name__}")
    if not text.strip():
        raise ExprError("empty expression")
    if len(text) > MAX_LENGTH:
        raise ExprError(f"expression is {len(text)} characters long (at most {MAX_LENGTH})")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as error:
        raise ExprError(f"cannot parse {text!r}: {error.msg}") from None
    _check(tree.body, 0)
    return tree.body


def _check(node: ast.AST, depth: int) -> None:
    """Refuse node types outside the language, and nesting deep enough to exhaust the stack."""
    if depth > MAX_DEPTH:
        raise ExprError("expression is nested too deeply")
    if isinstance(node, ast.Constant):
        if isinstance(node.value, bool) or not isinstance(node.value, int | float):
            raise ExprError(f"only numbers are allowed, not {node.value!r}")
    elif isinstance(node, ast.Name):
        pass
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY:
            raise ExprError(f"operator {type(node.op).__name__} is not allowed")
        _check(node.left, depth + 1)
        _check(node.right, depth + 1)
    elif isinstance(node, ast.UnaryOp):
        if not isinstance(node.op, ast.UAdd | ast.USub):
            raise ExprError(f"operator {type(node.op).__name__} is not allowed")
        _check(node.operand, depth + 1)
    elif isinstance(node, ast.Call):
        _check_call(node, depth)
    else:
        raise ExprError(f"{type(node).__name__} is not allowed in an expression "
                        "(use numbers, size variables, + - * / // % **, min, max, cdiv)")


def _check_call(node: ast.Call, depth: int) -> None:
    """A call must be min, max or cdiv with positional arguments only."""
    if not isinstance(node.func, ast.Name) or node.func.id not in _FUNCTIONS:
        raise ExprError("only min, max and cdiv can be called")
    if node.keywords:
        raise ExprError(f"{node.func.id} takes no keyword arguments")
    low, high = _ARITY[node.func.id]
    if not low <= len(node.args) <= high:
        raise ExprError(f"{node.func.id} takes {low if low == high else f'{low} to {high}'} "
                        f"arguments, got {len(node.args)}")
    for argument in node.args:
        if isinstance(argument, ast.Starred):
            raise ExprError("*arguments are not allowed")
        _check(argument, depth + 1)


def names(text: str) -> set[str]:
    """The variable names an expression uses."""
    return {n.id for n in ast.walk(parse(text)) if isinstance(n, ast.Name)} - set(_FUNCTIONS)


def evaluate(text: str, variables: Mapping[str, Number]) -> Number:
    """The value of an expression for the given variables."""
    return _evaluate(parse(text), variables)


def _bounded(value: Number) -> Number:
    """Refuse absurd magnitudes early, before they cost memory or time."""
    if abs(value) > MAX_MAGNITUDE:
        raise ExprError(f"a value of {len(str(int(value)))} digits is out of range")
    return value


def _evaluate(node: ast.expr, variables: Mapping[str, Number]) -> Number:
    """Walk a checked tree."""
    if isinstance(node, ast.Constant):
        value: Number = node.value  # type: ignore[assignment]  # _check allowed numbers only
        return value
    if isinstance(node, ast.Name):
        if node.id not in variables:
            known = ", ".join(sorted(variables)) or "none"
            raise ExprError(f"unknown name {node.id!r} (defined here: {known})")
        return variables[node.id]
    if isinstance(node, ast.BinOp):
        left = _evaluate(node.left, variables)
        right = _evaluate(node.right, variables)
        return _bounded(_BINARY[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp):
        value = _evaluate(node.operand, variables)
        return -value if isinstance(node.op, ast.USub) else value
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    values = [_evaluate(a, variables) for a in node.args]
    return _bounded(_FUNCTIONS[node.func.id](*values))


def evaluate_int(text: str, variables: Mapping[str, Number], what: str) -> int:
    """Evaluate an expression that must give a whole number (sizes, grid, block)."""
    value = evaluate(text, variables)
    if isinstance(value, float):
        if not value.is_integer():
            raise ExprError(f"{what} must be a whole number, but {text!r} gives {value}")
        value = int(value)
    return value
