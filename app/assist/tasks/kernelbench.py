"""Reading a KernelBench problem file as text (Python's ast), never running it: what the rest
of the import shares. A problem is a Python file with a torch `Model` (its `forward`),
`get_inputs()` and `get_init_inputs()`; its module-level numbers are its sizes
(kernelbench_sizes). Everything the file's text cannot say (shapes, dtypes, how the weights are
drawn) is learned by running it in the sandbox (kernelbench_meta, kernelbench_probe).
"""

from __future__ import annotations

import ast
import math
import operator
from collections.abc import Callable
from typing import Any

MAX_PROBLEM_BYTES = 1 << 20
# Size arithmetic stops here: sizes are int32 scalars, and a file must not make us compute
# numbers with millions of digits (2**64**64...) before we can say no.
MAX_VALUE = 1 << 63
ARITHMETIC: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv, ast.Pow: operator.pow}


class Refused(ValueError):
    """A problem that does not map to a task; the message says why."""


class BadSize(Refused):
    """A size constant whose value cannot be a size (too large, a division by zero): refused
    outright, not skipped as a constant that is not a number."""


def literal(node: ast.AST, constants: dict[str, Any]) -> Any:
    """The value of a literal or of arithmetic over numbers and known constants."""
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float | bool | str):
        return node.value
    if isinstance(node, ast.Name) and node.id in constants:
        if isinstance(constants[node.id], BadSize):
            raise constants[node.id]
        return constants[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        value = literal(node.operand, constants)
        if not isinstance(value, int | float):
            raise Refused(f"`{ast.unparse(node)}` negates what is not a number")
        return -value
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub | ast.Mult |
                                                  ast.FloorDiv | ast.Pow):
        left, right = literal(node.left, constants), literal(node.right, constants)
        return _arith(node.op, left, right)
    if isinstance(node, ast.Tuple | ast.List):
        return [literal(e, constants) for e in node.elts]
    raise Refused(f"`{ast.unparse(node)}` is not a number written in the file")


def _arith(op: ast.operator, left: Any, right: Any) -> Any:
    """One arithmetic step on numbers, every operand and result bounded by MAX_VALUE."""
    if not all(isinstance(v, int | float) for v in (left, right)):
        raise Refused("sizes must be numbers")
    left, right = _bounded(left), _bounded(right)
    if isinstance(op, ast.FloorDiv) and right == 0:
        raise BadSize("a size divides by zero")
    if isinstance(op, ast.Pow) and _power_too_large(left, right):
        raise BadSize("a size is too large (its power exceeds 2**63)")
    try:
        result = ARITHMETIC[type(op)](left, right)
    except (OverflowError, ZeroDivisionError) as error:
        raise BadSize(f"a size cannot be computed: {error}") from None
    return _bounded(result)


def _power_too_large(left: Any, right: Any) -> bool:
    """Whether left ** right would exceed MAX_VALUE, decided before computing it."""
    return bool(right > 0 and abs(left) > 1 and right * math.log2(abs(left)) > 63)


def _bounded(value: Any) -> Any:
    """The value, unless it is beyond any size."""
    if not isinstance(value, int | float):
        raise BadSize("a size is not a real number")  # a negative number's fractional power
    if abs(value) > MAX_VALUE:
        raise BadSize("a size is too large (beyond 2**63)")
    return value


def function_named(tree: ast.Module | ast.ClassDef, name: str) -> ast.FunctionDef:
    """A def of that name at this level."""
    for node in tree.body:
        if isinstance(node, ast.FunctionDef) and node.name == name:
            return node
    where = "Model" if isinstance(tree, ast.ClassDef) else "the file"
    raise Refused(f"{where} has no {name}(): not a KernelBench problem")


def model_class(tree: ast.Module) -> ast.ClassDef:
    """class Model."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == "Model":
            return node
    raise Refused("the file has no class Model: not a KernelBench problem")


def call_name(node: ast.expr) -> str:
    """'relu' for torch.relu, F.relu, torch.nn.functional.relu, nn.functional.relu."""
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return ""
