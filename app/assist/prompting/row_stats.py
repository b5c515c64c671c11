"""A Model's forward that combines each element with statistics of its own line along one dim
(softmax, log_softmax, `x - x.mean(dim=1, keepdim=True)`, `x / torch.norm(x, p=2, dim=1,
keepdim=True)`), as the loops one thread of out runs, for the prompt's glossary
(per_element.hints).

Out has the input's shape, so the kernel must find the element's line itself: the line says
where it lies, one loop per statistic over it, then the element:
  int n = i % dim2, o = i / (dim2 * dim1); float m1 = -INFINITY; for (int k = 0; k < dim1; ++k)
  m1 = fmaxf(m1, x[(o * dim1 + k) * dim2 + n]); float s1 = 0.0f; for (...) s1 += expf(... - m1);
  out[i] = expf(x[i] - m1) / s1;
Handled: sum, mean, amax, amin and the 2-norm (torch.norm, p 2 or 'fro') with
keepdim=True, softmax and log_softmax, all along the same dim, of element-wise math of inputs
of out's shape, inside element-wise math of those inputs at element i. Anything else gives no
line.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass

from app.assist.prompting.along_dim import dim_of, loop_names, product, replaced
from app.assist.prompting.glossary import bracketed

# An element-wise writer for the inputs given as texts (name -> C text of its element).
WriterFor = Callable[[dict[str, str]], Callable[[ast.AST], str | None]]

# Statistic -> (start, step); {v} its variable, {x} the element at k.
_STATS = {
    "sum": ("0.0f", "{v} += {x};"),
    "mean": ("0.0f", "{v} += {x};"),
    "amax": ("-INFINITY", "{v} = fmaxf({v}, {x});"),
    "amin": ("INFINITY", "{v} = fminf({v}, {x});"),
    "norm": ("0.0f", "{v} += {x} * {x};"),
}
_SOFTMAX = ("softmax", "log_softmax")


@dataclass(frozen=True)
class _Use:
    """One statistic call in the forward: its kind, what it reads and along which dim."""

    node: ast.Call
    kind: str
    source: ast.expr
    dim: int


def _use(node: ast.AST, constants: dict[str, str],
         is_module: Callable[[str], bool]) -> _Use | None:
    """The statistic that `node` computes, or None (not one, or one this cannot spell)."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    kind = node.func.attr
    if kind not in _STATS and kind not in _SOFTMAX:
        return None
    method = not is_module(ast.unparse(node.func.value))
    source = node.func.value if method else (node.args[0] if node.args else None)
    keywords = {k.arg: ast.unparse(k.value) for k in node.keywords}
    if kind in _STATS:
        if keywords.get("keepdim") != "True" or \
                any(k not in ("dim", "keepdim", "p") for k in keywords):
            return None
        # A norm's p and dim by keyword only: torch.norm(x, 1, ...) would be another norm.
        if keywords.get("p", "2") not in ("2", "2.0", "'fro'") or \
                ("p" in keywords and kind != "norm") or \
                (kind == "norm" and len(node.args) != (0 if method else 1)):
            return None
    elif any(k != "dim" for k in keywords):
        return None
    dim = dim_of(node, method, constants) if kind != "norm" or "dim" in keywords else None
    return None if source is None or dim is None else _Use(node, kind, source, dim)


def row_statistics(expression: ast.expr, shape: list[str], out: str, constants: dict[str, str],
                   is_module: Callable[[str], bool], taken: set[str],
                   reads: Callable[[str], dict[str, str]], writer: WriterFor,
                   finish: Callable[[str], str]) -> str | None:
    """The line, or None. `shape`: out's sizes (every input's too); `reads(index)`: each input
    as the C text of its element at that index; `writer(texts)`: an element-wise writer over
    those texts; `finish`: how out[i] is stored."""
    uses = [u for node in ast.walk(expression)
            if (u := _use(node, constants, is_module)) is not None]
    names = loop_names(taken)
    if not uses or names is None or len({u.dim for u in uses}) != 1 or \
            not -len(shape) <= uses[0].dim < len(shape):
        return None
    dim = uses[0].dim % len(shape)
    reduced, inner = shape[dim], product(shape[dim + 1:])
    o, n, k = names["o"], names["n"], names["k"]
    if inner == "1":
        where, index = f"int {o} = i / {reduced};", f"{o} * {reduced} + {k}"
    else:
        where = f"int {n} = i % {inner}, {o} = i / ({inner} * {reduced});"
        index = f"({o} * {reduced} + {k}) * {inner} + {n}"
    at_k, at_i = writer(reads(index)), writer(reads("i"))
    loops: list[tuple[str, str]] = []
    values: dict[str, str] = {}
    for number, use in enumerate(uses, 1):
        element, own = at_k(use.source), at_i(use.source)
        if element is None or own is None:
            return None
        more, values[f"STAT{number}_"] = _loops(use, element, own, number, reduced, taken)
        loops += more
    placeholders: dict[str, str] = {}
    for number, use in enumerate(uses, 1):  # a statistic written twice is read as the first
        placeholders.setdefault(ast.unparse(use.node), f"STAT{number}_")
    outside = replaced(expression, placeholders)
    value = None if outside is None else writer({**reads("i"), **values})(outside)
    if value is None:
        return None
    if bracketed(value):
        value = value[1:-1]
    body = " ".join(f"{start} for (int {k} = 0; {k} < {reduced}; ++{k}) {step}"
                    for start, step in loops)
    return (f"- per element (each reads its own line of {reduced}): {where} {body} "
            f"{out}[i] = {finish(value)};")


def _loops(use: _Use, element: str, own: str, number: int, reduced: str,
           taken: set[str]) -> tuple[list[tuple[str, str]], str]:
    """The statistic's loops ((declaration, step) each) and the C text of its value."""
    if use.kind in _STATS:
        variable = _fresh(f"s{number}", taken)
        start, step = _STATS[use.kind]
        value = {"mean": f"({variable} / {reduced})", "norm": f"sqrtf({variable})"}.get(
            use.kind, variable)
        return [(f"float {variable} = {start};", step.format(v=variable, x=element))], value
    top, total = _fresh(f"m{number}", taken), _fresh(f"s{number}", taken)
    loops = [(f"float {top} = -INFINITY;", f"{top} = fmaxf({top}, {element});"),
             (f"float {total} = 0.0f;", f"{total} += expf({element} - {top});")]
    value = f"(expf({own} - {top}) / {total})" if use.kind == "softmax" else \
        f"({own} - {top} - logf({total}))"
    return loops, value


def _fresh(name: str, taken: set[str]) -> str:
    """The name, with underscores added until no tensor or size of the description has it."""
    while name in taken:
        name += "_"
    return name
