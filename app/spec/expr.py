"""A safe evaluator for spec expressions: small arithmetic over a case's size variables.

Numbers, `+ - * / // % **`, parentheses, `min`, `max` and `cdiv(a, b)`. The text is parsed with
Python's `ast` module and only those node types are walked; nothing is ever passed to `eval`.
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable, Mapping

Number = int | float

MAX_LENGTH = 500
MAX_DEPTH = 40
MAX_EXPONENT = 128
# Larger whole numbers only come from mistakes or attacks (a 2**10**9 would freeze the app);
# decimals need only be finite, since their size costs nothing.
MAX_MAGNITUDE = 2**80


class ExprError(ValueError):
    """An expression that cannot be parsed or evaluated; the message says why."""


def _cdiv(a: Number, b: Number) -> Number:
    """Ceiling division: the number of blocks of size b that cover a."""
    if b == 0:
        raise ZeroDivisionError
    return -(-a // b)


def _safe_pow(base: Number, exponent: Number) -> Number:
    """`**` with a bounded exponent, so that a spec cannot make the evaluator hang."""
    if abs(exponent) > MAX_EXPONENT:
        raise ExprError(f"exponent {exponent} is too large (at most {MAX_EXPONENT})")
    result: Number = operator.pow(base, exponent)
    return result


_BINARY: dict[type[ast.operator], Callable[[Number, Number], Number]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
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
        checked(node.value, f"the number {ast.unparse(node)}")
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


def checked(value: object, what: str) -> Number:
    """`value` if it is a real, finite number (and, for a whole number, of sensible magnitude);
    else ExprError naming `what`. Every intermediate result passes here, so no NaN, infinity,
    complex number or huge integer (which would cost memory and time) leaves the evaluator."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ExprError(f"{what} is not a real number ({value!r})")
    if isinstance(value, float) and not math.isfinite(value):
        raise ExprError(f"{what} is not a finite number ({value})")
    if isinstance(value, int) and abs(value) > MAX_MAGNITUDE:
        raise ExprError(f"{what} is out of range (a whole number of {len(str(abs(value)))} "
                        "digits; at most 2**80)")
    return value


def _apply(node: ast.expr, function: Callable[..., Number], values: list[Number]) -> Number:
    """One operation or call, its arithmetic errors turned into ExprError naming the part."""
    what = f"`{ast.unparse(node)}` with {_show(values)}"
    try:
        result = function(*values)
    except ZeroDivisionError:
        power = isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow)
        reason = "raises zero to a negative power" if power else "divides by zero"
        raise ExprError(f"{what} {reason}") from None
    except OverflowError:
        raise ExprError(f"{what} overflows") from None
    except (ValueError, TypeError) as error:
        raise ExprError(f"{what} cannot be evaluated: {error}") from None
    return checked(result, what)


def _show(values: list[Number]) -> str:
    """The operands, briefly, for a message."""
    return ("operand " if len(values) == 1 else "operands ") + ", ".join(
        f"{v:.6g}" for v in values)


def _evaluate(node: ast.expr, variables: Mapping[str, Number]) -> Number:
    """Walk a checked tree."""
    if isinstance(node, ast.Constant):
        return checked(node.value, f"the number {ast.unparse(node)}")
    if isinstance(node, ast.Name):
        if node.id not in variables:
            known = ", ".join(sorted(variables)) or "none"
            raise ExprError(f"unknown name {node.id!r} (defined here: {known})")
        return checked(variables[node.id], f"variable {node.id!r}")
    if isinstance(node, ast.BinOp):
        left = _evaluate(node.left, variables)
        right = _evaluate(node.right, variables)
        return _apply(node, _BINARY[type(node.op)], [left, right])
    if isinstance(node, ast.UnaryOp):
        value = _evaluate(node.operand, variables)
        return -value if isinstance(node.op, ast.USub) else value
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    values = [_evaluate(a, variables) for a in node.args]
    return _apply(node, _FUNCTIONS[node.func.id], values)


def evaluate_int(text: str, variables: Mapping[str, Number], what: str) -> int:
    """Evaluate an expression that must give a whole number (sizes, grid, block)."""
    value = evaluate(text, variables)
    if isinstance(value, float):
        if not value.is_integer():
            raise ExprError(f"{what} must be a whole number, but {text!r} gives {value}")
        value = int(value)
    return value
