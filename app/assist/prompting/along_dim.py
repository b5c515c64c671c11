"""A Model's forward that reduces or scans one float tensor along one dim, as the loop one
thread of out runs, for the prompt's glossary (per_element.hints).

KernelBench's reductions over a dim failed for the shipped adapter in one way above all: the
kernel indexes out as if it kept the reduced dim and writes past it. The glossary's "the sum
of x along dim 1" names the operation but not where element k of output element i lies, so
this line spells it out with the description's own sizes:
  o = i / dim2, n = i % dim2; float s = 0.0f; for (int k = 0; k < dim1; ++k)
  s += x[(o * dim1 + k) * dim2 + n]; out[i] = s;
Handled: sum, mean, prod, max/amax, min/amin (torch.max(x, dim)[0] too), argmax, argmin,
cumsum and cumprod, of a forward parameter or an element-wise product of parameters (a mask),
in float32 or half precision (read and written through float); anything else gives no line.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

Writer = Callable[[ast.AST], str | None]
# How a half-precision element is read and written by the lines: math in float32.
LOAD = {"float16": "__half2float({})", "bfloat16": "__bfloat162float({})"}
STORE = {"float16": "__float2half({})", "bfloat16": "__float2bfloat16({})"}
FLOATS = ("float32", "float16", "bfloat16")


def replaced(expression: ast.expr, names: dict[str, str]) -> ast.expr | None:
    """The expression with each subexpression (given by its text) read as a name, or None
    where that does not parse (the text also stood inside a string)."""
    whole = ast.unparse(expression)
    for text, name in names.items():
        whole = whole.replace(text, name)
    try:
        return ast.parse(whole, mode="eval").body
    except SyntaxError:
        return None


def same(text: str) -> str:
    """A result written as it is (a line's `finish` where nothing is applied to it)."""
    return text

# The loop's own names ({s}, {m}, {b}, {k}) are filled in by loop_names: a size or tensor may be
# called s, m, n or o itself.
_REDUCE = {
    "sum": ("float {s} = 0.0f;", "{s} += {x};", "{s}"),
    "mean": ("float {s} = 0.0f;", "{s} += {x};", "{s} / {r}"),
    "prod": ("float {s} = 1.0f;", "{s} *= {x};", "{s}"),
    "max": ("float {m} = -INFINITY;", "{m} = fmaxf({m}, {x});", "{m}"),
    "amax": ("float {m} = -INFINITY;", "{m} = fmaxf({m}, {x});", "{m}"),
    "min": ("float {m} = INFINITY;", "{m} = fminf({m}, {x});", "{m}"),
    "amin": ("float {m} = INFINITY;", "{m} = fminf({m}, {x});", "{m}"),
    "argmax": ("long long {b} = 0; float {m} = -INFINITY;",
               "if ({x} > {m}) {{ {m} = {x}; {b} = {k}; }}", "{b}"),
    "argmin": ("long long {b} = 0; float {m} = INFINITY;",
               "if ({x} < {m}) {{ {m} = {x}; {b} = {k}; }}", "{b}"),
}
_SCAN = {"cumsum": ("float {s} = 0.0f;", "{s} += {x};"),
         "cumprod": ("float {s} = 1.0f;", "{s} *= {x};")}
# Each role's name, and the ones taken instead when the description uses it.
_CHOICES = {"o": ("o", "outer", "o_"), "n": ("n", "inner", "n_"), "p": ("p", "pos", "p_"),
            "k": ("k", "j", "kk"), "s": ("s", "acc", "s_"), "m": ("m", "best", "m_"),
            "b": ("b", "at", "b_")}


def loop_names(taken: set[str]) -> dict[str, str] | None:
    """A name for each of the loop's roles that no tensor or size of the description has, or
    None when i (every line's element index) is taken or a role finds none."""
    if "i" in taken:
        return None
    names = {role: next((c for c in choices if c not in taken), "") for role, choices
             in _CHOICES.items()}
    return names if all(names.values()) else None


def _call_of(node: ast.expr) -> ast.Call | None:
    """The reduction's call: the node itself, or `torch.max(x, dim)[0]`'s."""
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and \
            node.slice.value == 0:
        node = node.value
    return node if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) else None


def dim_of(call: ast.Call, method: bool, constants: dict[str, str]) -> int | None:
    """The call's dim as an int (a literal, self.dim or a constructor's name), or None."""
    node = next((k.value for k in call.keywords if k.arg == "dim"), None)
    positional = call.args[0 if method else 1:]
    if node is None and positional:
        node = positional[0]
    if node is None:
        return None
    text = ast.unparse(node)
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
        text = constants.get(node.attr, text)
    elif isinstance(node, ast.Name):
        text = constants.get(node.id, text)
    try:
        return int(text)
    except ValueError:
        return None


def product(sizes: list[str]) -> str:
    """Sizes multiplied, bracketed when more than one; '1' for none."""
    return "1" if not sizes else sizes[0] if len(sizes) == 1 else f"({' * '.join(sizes)})"


def plain_sizes(shape: str) -> list[str] | None:
    """A description's shape ('n x 4') as its sizes, when each is a name or a number (a loop
    line can use them as they are), else None."""
    sizes = shape.split(" x ")
    return sizes if all(s.isidentifier() or s.isdigit() for s in sizes) else None


def along_dim(expression: ast.expr, shape: list[str], out: str, is_module: Callable[[str], bool],
              constants: dict[str, str], operand: Callable[[str], Writer], taken: set[str],
              finish: Callable[[str], str] = same) -> str | None:
    """The line for a reduction or scan of `expression` along one dim of `shape` (the first
    tensor's sizes), or None. `operand(index)` writes the reduced operand at that index;
    `taken` holds the description's tensor and size names (the loop's own names avoid them);
    `finish` turns the result into what out[i] gets (a store, math applied after)."""
    call = _call_of(expression)
    names = loop_names(taken)
    if call is None or names is None:
        return None
    assert isinstance(call.func, ast.Attribute)
    name = call.func.attr
    if name not in _REDUCE and name not in _SCAN:
        return None
    method = not is_module(ast.unparse(call.func.value))
    source = call.func.value if method else (call.args[0] if call.args else None)
    dim = dim_of(call, method, constants)
    if source is None or dim is None or not -len(shape) <= dim < len(shape) or \
            any(k.arg not in ("dim", "keepdim") for k in call.keywords):
        return None
    dim %= len(shape)
    reduced, inner = shape[dim], product(shape[dim + 1:])
    o, n, p, k = names["o"], names["n"], names["p"], names["k"]
    # Output element i: o counts the dims before `dim`, n those after; in a scan p is i's
    # position along it.
    if inner == "1":
        where, index = f"int {o} = i;", f"{o} * {reduced} + {k}"
    else:
        where, index = f"int {o} = i / {inner}, {n} = i % {inner};", \
            f"({o} * {reduced} + {k}) * {inner} + {n}"
    if name in _SCAN:
        where = (f"int {p} = i % {reduced}, {o} = i / {reduced};" if inner == "1" else
                 f"int {n} = i % {inner}, {p} = (i / {inner}) % {reduced}, {o} = i / ({inner} * "
                 f"{reduced});")
    element = operand(index)(source)
    if element is None:
        return None
    if name in _SCAN:
        start, step = (part.format(x=element, **names) for part in _SCAN[name])
        return (f"- per element: {where} {start} for (int {k} = 0; {k} <= {p}; ++{k}) "
                f"{step} {out}[i] = {finish(names['s'])};")
    start, step, result = (part.format(x=element, r=reduced, **names)
                           for part in _REDUCE[name])
    return (f"- per element (each reduces one line of {reduced}): {where} {start} "
            f"for (int {k} = 0; {k} < {reduced}; ++{k}) {step} {out}[i] = {finish(result)};")
