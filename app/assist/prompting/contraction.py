"""A Model's forward that multiplies two float32 matrices (or batches of them) as the loop one
thread of out runs, for the prompt's glossary (per_element.hints).

KernelBench's matrix products failed for the shipped adapter where an operand is transposed or
batched: the kernel indexes A as (M, K) when the problem passes A as (K, M) and multiplies A.T
(the problem's docstring may even say (M, K)). The line gives where element k of the product's
row and column lie in each input, with the description's own sizes:
  int row = i / N, col = i % N; float s = 0.0f; for (int k = 0; k < K; ++k)
  s += A[k * M + row] * B[k * N + col]; out[i] = s;
Handled: torch.matmul, torch.mm, torch.bmm and @ of two inputs, each optionally transposed
(.T, .t(), .transpose of the last two dims) when 2-D; a 3-D batch times a 3-D batch, or a
batch (any leading dims) times a matrix; torch.triu / torch.tril of a 2-D product; float32 or
half precision (read through float, summed in float). Anything else gives no line.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from app.assist.prompting.along_dim import FLOATS, LOAD, plain_sizes, product, same

_PRODUCTS = ("matmul", "mm", "bmm")


@dataclass(frozen=True)
class _Operand:
    """An input of the product: its name, its sizes as the description gives them, and whether
    the forward transposes its last two dims."""

    name: str
    sizes: list[str]
    transposed: bool
    dtype: str

    def logical(self) -> list[str]:
        """Its sizes as the product sees them."""
        if not self.transposed:
            return self.sizes
        return [*self.sizes[:-2], self.sizes[-1], self.sizes[-2]]


def _transposed(node: ast.expr) -> tuple[ast.expr, bool]:
    """The node under a transpose of the last two dims, and whether there was one."""
    if isinstance(node, ast.Attribute) and node.attr in ("T", "mT"):
        return node.value, True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and not node.keywords:
        name, args = node.func.attr, [ast.unparse(a) for a in node.args]
        if name == "t" and not args:
            return node.func.value, True
        if name == "transpose" and args in (["0", "1"], ["1", "0"], ["-2", "-1"], ["-1", "-2"]):
            return node.func.value, True
    return node, False


def _operand(node: ast.expr, known: dict[str, tuple[str, str]]) -> _Operand | None:
    """An input, optionally transposed, that the description gives as a float type with plain
    sizes; a transpose only of a matrix (a batch's dims would be ambiguous)."""
    inner, transposed = _transposed(node)
    if not isinstance(inner, ast.Name) or inner.id not in known:
        return None
    dtype, shape = known[inner.id]
    sizes = plain_sizes(shape)
    if dtype not in FLOATS or sizes is None or len(sizes) < 2 or \
            (transposed and len(sizes) != 2):
        return None
    return _Operand(inner.id, sizes, transposed, dtype)


def _factors(node: ast.expr) -> tuple[ast.expr, ast.expr, str | None] | None:
    """The product's two factors and the triangle kept of it (triu, tril or None)."""
    keep = None
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in ("triu", "tril") and len(node.args) == 1 and not node.keywords:
        keep, node = node.func.attr, node.args[0]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.MatMult):
        return node.left, node.right, keep
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
            node.func.attr in _PRODUCTS and ast.unparse(node.func.value) == "torch" and \
            len(node.args) == 2 and not node.keywords:
        return node.args[0], node.args[1], keep
    return None


def _left_index(left: _Operand, batch: str, row: str, k: str) -> str:
    """Where element (row, k) of the left factor lies (batch: the flat batch index or '')."""
    rows, inner = left.logical()[-2:]
    if left.transposed:
        return f"{k} * {rows} + {row}"
    start = f"({batch} * {rows} + {row})" if batch else row
    return f"{start} * {inner} + {k}"


def _right_index(right: _Operand, batch: str, k: str, col: str) -> str:
    """Where element (k, col) of the right factor lies."""
    inner, cols = right.logical()[-2:]
    if right.transposed:
        return f"{col} * {inner} + {k}"
    start = f"({batch} * {inner} + {k})" if batch else k
    return f"{start} * {cols} + {col}"


def contraction(expression: ast.expr, known: dict[str, tuple[str, str]], out: str,
                finish: Callable[[str], str] = same) -> str | None:
    """The line for a matrix product of two inputs of out's dtype, or None; `finish` turns the
    product into what out[i] gets (a store, math applied after)."""
    found = _factors(expression)
    if found is None:
        return None
    left, right = _operand(found[0], known), _operand(found[1], known)
    if left is None or right is None or not left.dtype == right.dtype == known[out][0]:
        return None
    a, b = left.logical(), right.logical()
    if a[-1] != b[-2]:
        return None
    out_sizes = known[out][1].split(" x ")
    # The loop's names must not be an input's or a size's (KernelBench's bmm has a size k).
    taken = {left.name, right.name, out, *left.sizes, *right.sizes, *out_sizes}
    k = next(n for n in ("k", "p", "q", "kk") if n not in taken)
    if len(a) == 3 and len(b) == 3 and a[0] == b[0] and found[2] is None:
        rows, cols = a[1], b[2]
        head = f"int b = i / ({rows} * {cols}), row = (i / {cols}) % {rows}, col = i % {cols}; "
        batch, shape = "b", [a[0], a[1], b[2]]
    elif len(b) == 2 and (len(a) == 2 or found[2] is None):
        # Leading dims of a batch times a matrix are rows of one product.
        rows, cols = product(a[:-1]), b[1]
        head, batch, shape = f"int row = i / {cols}, col = i % {cols}; ", "", [*a[:-1], b[1]]
    else:
        return None
    used = {"i", "s", "row", "col"} | ({"b"} if batch else set())
    if used & taken or out_sizes != shape:
        return None
    load = LOAD.get(left.dtype, "{}")
    term = load.format(f"{left.name}[{_left_index(left, batch, 'row', k)}]") + " * " + \
        load.format(f"{right.name}[{_right_index(right, batch, k, 'col')}]")
    body = f"float s = 0.0f; for (int {k} = 0; {k} < {a[-1]}; ++{k}) s += {term}; "
    kept = {"triu": "row <= col ? s : 0.0f", "tril": "row >= col ? s : 0.0f"}.get(
        found[2] or "", "s")
    return f"- per element (each sums one row times one column over {a[-1]}): {head}{body}" \
           f"{out}[i] = {finish(kept)};"
