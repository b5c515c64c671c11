"""The shape of what a KernelBench forward returns, read from its one expression without running
it: elementwise and activation functions keep their input's shape, softmax and scans along a dim
too, reductions drop (or keep as 1) their dims, matrix products combine their operands' shapes.
Anything else is refused: guessing a shape would make a spec that judges kernels wrongly."""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Any

from app.assist.tasks.kernelbench import (
    ALONG_DIM,
    INDEX_RESULTS,
    MATMUL,
    REDUCE,
    UNARY,
    Refused,
    Tensor,
    call_name,
    literal,
)

MODULES = frozenset({"torch", "F", "functional", "nn"})
# Where torch puts dim and keepdim positionally (torch.norm(x, p, dim, keepdim),
# torch.std(x, dim, unbiased, keepdim)); the rest take (x, dim, keepdim).
POSITIONS = {"norm": (2, 3), "std": (1, 3), "var": (1, 3)}
# On integer tensors these keep an integer dtype; every other operator gives floats or fails.
INTEGER_KEEPING = frozenset({"relu", "abs", "neg", "negative", "sign", "square", "amax", "amin",
                             "max", "min", "argmax", "argmin", "t"})
INTEGER_WIDENING = frozenset({"sum", "prod", "cumsum", "cumprod"})  # int32 sums give int64


@dataclass(frozen=True)
class Shape:
    """A tensor's dims (spec expressions), dtype, and whether its values sum many terms (then
    the tolerance allows for the order of the additions)."""

    dims: tuple[str, ...]
    dtype: str = "float32"
    summed: bool = False


class ShapeReader:
    """Reads shapes of expressions over forward's inputs."""

    def __init__(self, inputs: list[Tensor], attributes: dict[str, Any],
                 constants: dict[str, Any]) -> None:
        """Know the inputs, the Model's attributes (self.x) and the module's constants."""
        self.inputs = {t.name: Shape(t.shape, t.dtype) for t in inputs}
        self.values = {**constants, **{f"self.{k}": v for k, v in attributes.items()}}

    def shape(self, node: ast.expr) -> Shape | None:
        """The shape of a tensor expression; None for a plain number."""
        if isinstance(node, ast.Name) and node.id in self.inputs:
            return self.inputs[node.id]
        if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
            return None
        if isinstance(self.values.get(ast.unparse(node)), int | float):
            return None  # a number the Model or the module holds (self.scale, alpha)
        if isinstance(node, ast.UnaryOp):
            return self.shape(node.operand)
        if isinstance(node, ast.BinOp):
            return self._binary(node)
        if isinstance(node, ast.Call):
            return self._call(node)
        if isinstance(node, ast.Attribute) and node.attr == "T":
            inner = self._tensor(node.value)
            return Shape(tuple(reversed(inner.dims)), inner.dtype, inner.summed)
        if isinstance(node, ast.Subscript | ast.Attribute):
            return self._selected(node)
        raise Refused(f"cannot tell the shape of `{ast.unparse(node)}` without running it")

    def _tensor(self, node: ast.expr) -> Shape:
        """The shape of an expression that must be a tensor."""
        found = self.shape(node)
        if found is None:
            raise Refused(f"`{ast.unparse(node)}` should be a tensor")
        return found

    def _binary(self, node: ast.BinOp) -> Shape:
        """Arithmetic: same-shape tensors, or a tensor and a number; @ is a matrix product."""
        if isinstance(node.op, ast.MatMult):
            return matmul(self._tensor(node.left), self._tensor(node.right))
        left, right = self.shape(node.left), self.shape(node.right)
        if left and right and left.dims != right.dims:
            raise Refused(f"`{ast.unparse(node)}` broadcasts tensors of different shapes")
        found = left or right
        if found is None:
            raise Refused(f"`{ast.unparse(node)}` computes no tensor")
        if left and right and left.dtype != right.dtype:
            raise Refused(f"`{ast.unparse(node)}` mixes {left.dtype} and {right.dtype} tensors")
        if found.dtype.startswith("int") and (isinstance(node.op, ast.Div) or any(
                isinstance(self.values.get(ast.unparse(n), n.value if isinstance(
                    n, ast.Constant) else None), float) for n in (node.left, node.right))):
            raise Refused(f"`{ast.unparse(node)}` turns integer tensors into floats: the "
                          "output's dtype would be a guess")
        return found

    def _arguments(self, node: ast.Call) -> list[ast.expr]:
        """The call's arguments, the receiver first for a method (x.sum(1))."""
        func = node.func
        if isinstance(func, ast.Attribute) and call_name(func.value) not in MODULES:
            return [func.value, *node.args]
        return list(node.args)

    def _call(self, node: ast.Call) -> Shape:
        """A torch function or tensor method."""
        name, args = call_name(node.func), self._arguments(node)
        if not args:
            raise Refused(f"`{ast.unparse(node)}` takes no tensor")
        found = self._call_shape(name, node, args)
        first = self.shape(args[0])
        if first and first.dtype.startswith("int") and name not in INTEGER_KEEPING:
            if name not in INTEGER_WIDENING:
                raise Refused(f"`{name}` of an integer tensor gives floats (or fails) in torch: "
                              "only integer-keeping operators map for integer inputs")
            return Shape(found.dims, "int64", found.summed)
        return found

    def _call_shape(self, name: str, node: ast.Call, args: list[ast.expr]) -> Shape:
        """The shape a known operator gives."""
        if name in UNARY or name in ALONG_DIM:
            return self._tensor(args[0])
        if name in MATMUL:
            return matmul(self._tensor(args[0]), self._tensor(args[1]))
        if name == "t":
            inner = self._tensor(args[0])
            return Shape(tuple(reversed(inner.dims)), inner.dtype, inner.summed)
        if name in REDUCE:
            return self._reduce(name, node, args)
        raise Refused(f"`{name}` is not an operator Kernel Studio can give a shape to without "
                      "running the problem")

    def _keyword(self, node: ast.Call, key: str, position: int, args: list[ast.expr]) -> Any:
        """A keyword or positional argument's value (None when absent)."""
        for keyword in node.keywords:
            if keyword.arg == key:
                return self._value(keyword.value)
        return self._value(args[position]) if len(args) > position else None

    def _value(self, node: ast.expr) -> Any:
        """A number, a list of numbers, or self.attr's value."""
        text = ast.unparse(node)
        if text in self.values:
            return self.values[text]
        return literal(node, self.values)

    def _reduce(self, name: str, node: ast.Call, args: list[ast.expr]) -> Shape:
        """A reduction over dims (all of them without dim)."""
        inner = self._tensor(args[0])
        dim_at, keep_at = POSITIONS.get(name, (1, 2))
        dims = self._keyword(node, "dim", dim_at, args)
        keep = bool(self._keyword(node, "keepdim", keep_at, args) or False)
        if any(k.arg == "dtype" for k in node.keywords):
            raise Refused(f"`{ast.unparse(node)}` sets its own dtype: not mapped")
        if name in ("max", "min") and dims is not None:
            raise Refused(f"torch.{name} with a dim returns values and indices: write "
                          f"torch.{name}(...)[0] or torch.a{name}(...)")
        dtype = "int64" if name in INDEX_RESULTS else inner.dtype
        if dims is None:
            return Shape(("1",), dtype, True)
        chosen = {_dim(d, len(inner.dims), node) for d in (
            dims if isinstance(dims, list) else [dims])}
        kept = tuple("1" if i in chosen else d for i, d in enumerate(inner.dims)
                     if keep or i not in chosen)
        return Shape(kept or ("1",), dtype, True)

    def _selected(self, node: ast.Subscript | ast.Attribute) -> Shape:
        """torch.max(x, dim)[0] / .values (the values) or [1] / .indices (int64)."""
        call = node.value
        if not (isinstance(call, ast.Call) and call_name(call.func) in ("max", "min")):
            raise Refused(f"cannot tell the shape of `{ast.unparse(node)}` without running it")
        which = node.attr if isinstance(node, ast.Attribute) else literal(node.slice, {})
        args = self._arguments(call)
        plain = self._reduce("sum", call, args)
        if which in (1, "indices"):
            return Shape(plain.dims, "int64", True)
        if which in (0, "values"):
            return plain
        raise Refused(f"`{ast.unparse(node)}` selects neither values nor indices")


def _dim(dim: Any, count: int, node: ast.Call) -> int:
    """A dim argument, which torch requires to be an int in [-count, count)."""
    if isinstance(dim, bool) or not isinstance(dim, int) or not -count <= dim < count:
        raise Refused(f"`{ast.unparse(node)}`: dim {dim!r} is not a dim of a {count}-d tensor")
    return dim % count


def matmul(left: Shape, right: Shape) -> Shape:
    """torch.matmul's shape rule for operands of one or more dims; the inner dims must be the
    same size expression (sizes that agree only by value would differ in scaled cases)."""
    if len(left.dims) < 1 or len(right.dims) < 1:
        raise Refused("a matrix product needs tensors")
    inner = right.dims[0] if len(right.dims) == 1 else right.dims[-2]
    if left.dims[-1] != inner:
        raise Refused(f"a matrix product's inner dims differ ({left.dims[-1]} and {inner}): "
                      "torch refuses unequal sizes; equal ones must use one size name")
    if left.dtype != right.dtype:
        raise Refused(f"a matrix product mixes {left.dtype} and {right.dtype}")
    if len(right.dims) == 1:
        dims = left.dims[:-1]
    elif len(left.dims) == 1:
        dims = right.dims[:-2] + right.dims[-1:]
    else:
        batch = left.dims[:-2] if len(left.dims) >= len(right.dims) else right.dims[:-2]
        dims = batch + left.dims[-2:-1] + right.dims[-1:]
    return Shape(dims or ("1",), left.dtype, True)
