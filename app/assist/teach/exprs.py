"""Level-1 families written as formulas: random expression trees over one to three inputs and
an optional scalar argument, told in the notation tasks use (`y[i] = max(a[i], 0) * t`), over
1-D arrays or rows x cols matrices with per-row or per-column vectors.

The maps family says each operation in words; here the model learns to turn a formula into
CUDA (functions, conversions of 16-bit types, scalars, index arithmetic, capped grids), which is
what most level-1 tasks ask.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any

from app.assist.prompting.candidates import signature
from app.assist.teach.candidate import (
    BLOCKS,
    Arg,
    Candidate,
    flat_cases,
    grid_cases,
    pick_names,
    size_arg,
)
from app.assist.teach.dtypes import DTYPES, REF_HEADER, includes, numpy_out

SCALAR_NAMES = ("alpha", "beta", "t", "s", "k", "scale", "w")
SCALAR_VALUES = ("0.5", "0.25", "1.5", "2.0", "-0.75", "3.0")
CAPS = (16, 32, 64, 128)
INDEX_NAMES = {"i", "r", "c", "n"}


ATOM = 9  # names, calls and bracketed forms bind tightest


@dataclass(frozen=True)
class Expr:
    """One expression in three renderings: C++ over floats, NumPy over float64, the formula."""

    cxx: str
    npy: str
    text: str
    precedence: int = ATOM  # of the formula's outermost operation, to know when to bracket it


Table = tuple[tuple[Any, ...], ...]
# Unary operations: (C++ with {x}, NumPy with {x}, formula with {x}).
FLOAT_UNARY = (
    ("fabsf({x})", "np.abs({x})", "|{x}|"),
    ("expf({x})", "np.exp({x})", "exp({x})"),
    ("tanhf({x})", "np.tanh({x})", "tanh({x})"),
    ("sqrtf(fabsf({x}))", "np.sqrt(np.abs({x}))", "sqrt(|{x}|)"),
    ("fmaxf({x}, 0.0f)", "np.maximum({x}, 0.0)", "max({x}, 0)"),
    ("(1.0f / (1.0f + expf(-({x}))))", "(1.0 / (1.0 + np.exp(-({x}))))", "sigmoid({x})"),
    ("(-({x}))", "(-({x}))", "-({x})"),
    ("(({x}) * ({x}))", "(({x}) * ({x}))", "({x})^2"),
)
# Binary operations, with the precedence of their formula (calls bind like names).
FLOAT_BINARY = (
    ("({x} + {y})", "({x} + {y})", "{x} + {y}", 1),
    ("({x} - {y})", "({x} - {y})", "{x} - {y}", 1),
    ("({x} * {y})", "({x} * {y})", "{x} * {y}", 2),
    ("fmaxf({x}, {y})", "np.maximum({x}, {y})", "max({x}, {y})", ATOM),
    ("fminf({x}, {y})", "np.minimum({x}, {y})", "min({x}, {y})", ATOM),
)
INT_UNARY = (
    ("abs({x})", "np.abs({x})", "|{x}|"),
    ("(-({x}))", "(-({x}))", "-({x})"),
    ("max({x}, 0)", "np.maximum({x}, 0)", "max({x}, 0)"),
)
INT_BINARY = FLOAT_BINARY[:3] + (
    ("max({x}, {y})", "np.maximum({x}, {y})", "max({x}, {y})", ATOM),
    ("min({x}, {y})", "np.minimum({x}, {y})", "min({x}, {y})", ATOM),
    ("({x} ^ {y})", "np.bitwise_xor({x}, {y})", "{x} xor {y}", 0),
)
DTYPE_PHRASES = (" ({dtype}).", ", {dtype} data.", ", on {dtype} values.", " ({dtype} arrays).")


def _apply(template: tuple[str, ...], *parts: Expr) -> Expr:
    """An operation applied to sub-expressions; in the formula an operand that binds less
    tightly than the operation is bracketed (the right one of a minus also when equal)."""
    cxx, npy, text = template[:3]
    precedence = int(template[3]) if len(template) > 3 else ATOM
    shown = []
    for side, part in zip("xy", parts, strict=False):
        loose = part.precedence < precedence or (
            side == "y" and part.precedence == precedence and text.startswith("{x} -"))
        shown.append(f"({part.text})" if loose and precedence != ATOM else part.text)
    names = dict(zip("xy", parts, strict=False))
    return Expr(cxx.format(**{k: v.cxx for k, v in names.items()}),
                npy.format(**{k: v.npy for k, v in names.items()}),
                text.format(**dict(zip("xy", shown, strict=False))), precedence)


def _tree(rng: random.Random, leaves: list[Expr], integer: bool, depth: int) -> Expr:
    """A random expression using every leaf once, at most `depth` operations deep."""
    unary: Table = INT_UNARY if integer else FLOAT_UNARY
    binary: Table = INT_BINARY if integer else FLOAT_BINARY
    if len(leaves) == 1:
        leaf = leaves[0]
        if depth > 0 and rng.random() < 0.7:
            return _apply(rng.choice(unary), _tree(rng, leaves, integer, depth - 1))
        return leaf
    split = rng.randint(1, len(leaves) - 1)
    left = _tree(rng, leaves[:split], integer, depth - 1)
    right = _tree(rng, leaves[split:], integer, depth - 1)
    return _apply(rng.choice(binary), left, right)


def _leaf(name: str, index: str, load: str) -> Expr:
    """An input element: C++ loads it (as float for 16-bit types), NumPy has it widened."""
    return Expr(load.format(v=f"{name}[{index}]"), name.upper() + "_", f"{name}[{index}]")


def _scalar(rng: random.Random, integer: bool, taken: list[str]) -> Arg:
    """A scalar argument with a fixed value."""
    name = rng.choice([s for s in SCALAR_NAMES if s not in taken])
    if integer:
        return Arg(name, "scalar", "int32", value=str(rng.randint(2, 9)))
    return Arg(name, "scalar", "float32", value=rng.choice(SCALAR_VALUES))


def _dtypes(rng: random.Random) -> tuple[str, str]:
    """(input dtype, output dtype): mostly alike; 16-bit inputs may widen to float32."""
    dtype = rng.choice(("float32", "float32", "float16", "bfloat16", "int32"))
    if dtype in ("float16", "bfloat16") and rng.random() < 0.3:
        return dtype, "float32"
    return dtype, dtype


def _dtype_words(rng: random.Random, src: str, dst: str, ins: list[str], out: str) -> str:
    """How the description names the types."""
    if src != dst:
        return f", from {src} {' and '.join(ins)} to a {dst} {out} (compute in float32)."
    text = rng.choice(DTYPE_PHRASES).format(dtype=src)
    if src in ("float16", "bfloat16") and rng.random() < 0.5:
        text = text[:-1] + "; compute in float32."
    return text


def _reference(entry: str, params: list[str], ins: list[str], scalar: Arg | None, out: str,
               npy: str, dst: str) -> str:
    """The NumPy reference: inputs widened under upper-case names, the scalar as given."""
    lines = [f"    {n.upper()}_ = widen({n})\n" for n in ins]
    if scalar is not None:
        cast = "np.int64" if scalar.dtype == "int32" else "np.float32"
        lines.append(f"    {scalar.name.upper()}_ = {cast}({scalar.name})\n")
    return (REF_HEADER.format(name=entry) + f"\ndef reference({', '.join(params)}):\n"
            + "".join(lines) + f"    return {{\"{out}\": ({npy}).astype({numpy_out(dst)})}}\n")


def _store(dst: str, value: str) -> str:
    """C++ that turns a float value into the output type."""
    return DTYPES[dst].from_float.format(v=value) if DTYPES[dst].floating else value


def _body(flat: bool, capped: bool, out: str, store: str) -> str:
    """The kernel body: one element per thread, or a grid-stride loop when the grid is capped."""
    index = "i" if flat else "r * cols + c"
    inner = (f"{out}[{index}] = {store};" if flat else
             f"int r = i / cols;\n        int c = i % cols;\n        {out}[{index}] = {store};")
    total = "n" if flat else "rows * cols"
    if capped:
        return (f"    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < {total};\n"
                f"         i += gridDim.x * blockDim.x) {{\n        {inner}\n    }}\n")
    return (f"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (i < {total}) {{\n        {inner}\n    }}\n")


def _launch(rng: random.Random, total: str) -> tuple[str, str, bool]:
    """(grid, block, capped): one thread per element, or a capped grid that must loop."""
    block = rng.choice(BLOCKS)
    if rng.random() < 0.2:
        return f"min(cdiv({total}, {block}), {rng.choice(CAPS)})", str(block), True
    return f"cdiv({total}, {block})", str(block), False


def _kernel(entry: str, args: list[Arg], body: str, *dtypes: str) -> str:
    """The whole kernel: the signature the spec will imply (candidates.signature), then the
    body."""
    return f"{includes(*dtypes)}{signature(entry, args)}\n{{\n{body}}}\n"


CAPPED_NOTES = (" The grid is capped, so each thread loops over the elements with a grid stride.",
                " The launch caps the number of blocks: loop with a grid-sized stride.")


def formula(rng: random.Random, tag: str) -> Candidate:
    """out[i] = a random formula over one to three 1-D inputs and maybe a scalar."""
    src, dst = _dtypes(rng)
    integer = src == "int32"
    ins, out = pick_names(rng, rng.randint(1, 3))
    load = DTYPES[src].to_float
    leaves = [_leaf(n, "i", load) for n in ins]
    scalar = _scalar(rng, integer, ins + [out]) if rng.random() < 0.35 else None
    if scalar is not None:
        leaves.insert(rng.randint(0, len(leaves)), Expr(scalar.name, scalar.name.upper() + "_",
                                                        scalar.name))
    expr = _tree(rng, leaves, integer, rng.randint(1, 2))
    grid, block, capped = _launch(rng, "n")
    entry = f"expr_{DTYPES[src].short}_{tag}"
    desc = f"{out}[i] = {expr.text} for every i < n" + _dtype_words(rng, src, dst, ins, out)
    if scalar is not None:
        desc += f" {scalar.name} is {'an int' if integer else 'a float'} scalar argument."
    if capped:
        desc += rng.choice(CAPPED_NOTES)
    init = "randint(-1000, 1000)" if integer else "normal"
    args = [Arg(n, "in", src, ("n",), init) for n in ins] + [Arg(out, "out", dst, ("n",))]
    args += ([scalar] if scalar else []) + [size_arg("n")]
    kernel = _kernel(entry, args, _body(True, capped, out, _store(dst, expr.cxx)), src, dst)
    params = [a.name for a in args if a.kind != "out"]
    ref = _reference(entry, params, ins, scalar, out, expr.npy, dst)
    return Candidate("formula", 1, entry, desc, kernel, ref, args, (grid,), (block,),
                     flat_cases(rng))


def matrix_formula(rng: random.Random, tag: str) -> Candidate:
    """out[r, c] = a formula over a rows x cols matrix and one or two vectors (per column or
    per row), one thread per element of a flat grid."""
    dtype = rng.choice(("float32", "float32", "float16", "bfloat16"))
    (x, *vectors), out = pick_names(rng, rng.randint(2, 3))
    while {x, *vectors, out} & INDEX_NAMES:  # `c` names the column index here
        (x, *vectors), out = pick_names(rng, rng.randint(2, 3))
    along = [rng.choice(("c", "r")) for _ in vectors]
    load = DTYPES[dtype].to_float
    leaves = [_leaf(x, "r * cols + c", load)]
    leaves += [_leaf(v, a, load) for v, a in zip(vectors, along, strict=True)]
    expr = _tree(rng, leaves, False, 2)
    text = expr.text.replace(f"{x}[r * cols + c]", f"{x}[r, c]")
    grid, block, capped = _launch(rng, "rows * cols")
    entry = f"mat_{DTYPES[dtype].short}_{tag}"
    held = "; ".join(f"{v} holds {'cols' if a == 'c' else 'rows'} {dtype} values"
                     for v, a in zip(vectors, along, strict=True))
    desc = (f"{out}[r, c] = {text} for a row-major rows x cols {dtype} matrix {x}; {held}"
            + ("; compute in float32." if dtype != "float32" else ".")
            + (rng.choice(CAPPED_NOTES) if capped else ""))
    args = [Arg(x, "in", dtype, ("rows", "cols"), "normal")]
    args += [Arg(v, "in", dtype, ("cols" if a == "c" else "rows",), "normal")
             for v, a in zip(vectors, along, strict=True)]
    args += [Arg(out, "out", dtype, ("rows", "cols")), size_arg("rows"), size_arg("cols")]
    kernel = _kernel(entry, args, _body(False, capped, out, _store(dtype, expr.cxx)), dtype)
    ref = _matrix_reference(entry, x, vectors, along, out, expr.npy)
    return Candidate("matrix_formula", 1, entry, desc, kernel, ref, args, (grid,), (block,),
                     grid_cases(rng))


def _matrix_reference(entry: str, x: str, vectors: list[str], along: list[str], out: str,
                      npy: str) -> str:
    """The reference of matrix_formula: vectors shaped to broadcast along their axis."""
    lines = [f"    {x.upper()}_ = widen({x}).reshape(rows, cols)\n"]
    lines += [f"    {v.upper()}_ = widen({v}).reshape({'1, cols' if a == 'c' else 'rows, 1'})\n"
              for v, a in zip(vectors, along, strict=True)]
    return (REF_HEADER.format(name=entry) + f"\ndef reference({x}, {', '.join(vectors)}, rows, "
            f"cols):\n" + "".join(lines)
            + f"    return {{\"{out}\": ({npy}).astype(np.float32)}}\n")
