"""Level-1 families of the generator: elementwise expressions over one to three inputs,
activations, casts and broadcasts. Each returns a Candidate for verification to judge."""

from __future__ import annotations

import random

from app.assist.teach.candidate import (
    BLOCKS,
    Arg,
    Candidate,
    flat_cases,
    grid_cases,
    pick_names,
    size_arg,
)
from app.assist.teach.dtypes import DTYPES, FLOATS, REF_HEADER, includes, numpy_out

# (C++ with A B C as float inputs, NumPy with the same letters, words, tag for the name).
FLOAT_EXPRS = {
    1: [("A * A", "A * A", "the square of {A}", "square"),
        ("fabsf(A)", "np.abs(A)", "the absolute value of {A}", "abs"),
        ("A * 0.5f + 1.0f", "A * 0.5 + 1.0", "{A} halved plus one", "halfp1"),
        ("sqrtf(fabsf(A))", "np.sqrt(np.abs(A))", "the square root of |{A}|", "sqrtabs"),
        ("A * A * A", "A * A * A", "the cube of {A}", "cube")],
    2: [("A + B", "A + B", "{A} + {B}", "add"), ("A - B", "A - B", "{A} - {B}", "sub"),
        ("A * B", "A * B", "{A} * {B}", "mul"),
        ("fmaxf(A, B)", "np.maximum(A, B)", "the larger of {A} and {B}", "max"),
        ("fminf(A, B)", "np.minimum(A, B)", "the smaller of {A} and {B}", "min"),
        ("A * B + A", "A * B + A", "{A} * {B} + {A}", "mula")],
    3: [("fmaf(A, B, C)", "A * B + C", "{A} * {B} + {C}", "fma"),
        ("A + B + C", "A + B + C", "{A} + {B} + {C}", "add3"),
        ("A * (B - C)", "A * (B - C)", "{A} * ({B} - {C})", "muldiff"),
        ("fmaxf(A, B) * C", "np.maximum(A, B) * C", "max({A}, {B}) * {C}", "maxmul")],
}
INT_EXPRS = {
    1: [("A * 3 + 1", "A * 3 + 1", "3 * {A} + 1", "lin"), ("-A", "-A", "minus {A}", "neg")],
    2: [("A + B", "A + B", "{A} + {B}", "add"), ("A - B", "A - B", "{A} - {B}", "sub"),
        ("A ^ B", "np.bitwise_xor(A, B)", "{A} xor {B}", "xor"),
        ("max(A, B)", "np.maximum(A, B)", "the larger of {A} and {B}", "max"),
        ("A & B", "np.bitwise_and(A, B)", "{A} and {B} bitwise", "and")],
    3: [("A * B + C", "A * B + C", "{A} * {B} + {C}", "muladd"),
        ("min(A, B) + C", "np.minimum(A, B) + C", "min({A}, {B}) + {C}", "minadd")],
}
ACTIVATIONS = [
    ("fmaxf(A, 0.0f)", "np.maximum(A, 0.0)", "relu", "ReLU"),
    ("1.0f / (1.0f + expf(-A))", "1.0 / (1.0 + np.exp(-A))", "sigmoid", "the logistic sigmoid"),
    ("A / (1.0f + expf(-A))", "A / (1.0 + np.exp(-A))", "silu", "SiLU (x * sigmoid(x))"),
    ("(A > 0.0f ? A : 0.05f * A)", "np.where(A > 0, A, 0.05 * A)", "lrelu",
     "leaky ReLU with slope 0.05"),
    ("A * (0.5f + 0.5f * tanhf(0.5f * A))", "A * (0.5 + 0.5 * np.tanh(0.5 * A))", "swish_t",
     "x * (1 + tanh(x / 2)) / 2"),
]
# Conversions with a scale and a shift: a bare cast returns its input (nearly) unchanged, so a
# kernel that merely copied would pass its spec, and spec-check calls such a spec weak; so does
# it any float32-to-16-bit conversion, whose rounding hides float16 arithmetic. Scales are powers
# of two: the product is exact, so the kernel and the float64 reference truncate alike.
CASTS = [("float32", "int32"), ("float16", "bfloat16"), ("bfloat16", "float16"),
         ("int32", "float32"), ("int32", "float16")]
SCALES = (("0.5", "0.25"), ("4.0", "-1.5"), ("0.125", "3.0"), ("8.0", "0.0"))


def _letters(expr: str, values: list[str]) -> str:
    """An expression with A, B, C replaced by the given C++ or NumPy values."""
    out = []
    for ch in expr:
        out.append(values["ABC".index(ch)] if ch in "ABC" else ch)
    return "".join(out)


def _map_kernel(entry: str, ins: list[str], ins_t: str, out: str, out_t: str, body: str) -> str:
    """A one-thread-per-element kernel whose output element is `body` (C++ over index i)."""
    ti, to = DTYPES[ins_t], DTYPES[out_t]
    params = "".join(f"    const {ti.ctype}* __restrict__ {n},\n" for n in ins)
    store = to.from_float.format(v=body) if to.floating else body
    return (f"// Generated: one thread per element.\n{includes(ins_t, out_t)}"
            f'extern "C" __global__ void {entry}(\n{params}    {to.ctype}* __restrict__ {out},\n'
            f"    int n)\n{{\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (i < n) {{\n        {out}[i] = {store};\n    }}\n}}\n")


def _flat(family: str, level: int, entry: str, desc: str, kernel: str, ref: str,
          ins: list[str], ins_t: str, out: str, out_t: str, init: str,
          rng: random.Random) -> Candidate:
    """A 1-D candidate over n elements."""
    block = rng.choice(BLOCKS)
    args = [Arg(n, "in", ins_t, ("n",), init) for n in ins]
    args += [Arg(out, "out", out_t, ("n",)), size_arg("n")]
    return Candidate(family, level, entry, desc, kernel, ref, args, (f"cdiv(n, {block})",),
                     (str(block),), flat_cases(rng))


def elementwise(rng: random.Random, tag: str) -> Candidate:
    """out[i] = an expression over one to three inputs of one dtype."""
    dtype = rng.choice(("float32", "float32", "float16", "bfloat16", "int32"))
    count = rng.randint(1, 3)
    table = INT_EXPRS if dtype == "int32" else FLOAT_EXPRS
    cxx, npy, words, op = rng.choice(table[count])
    ins, out = pick_names(rng, count)
    d = DTYPES[dtype]
    loads = [d.to_float.format(v=f"{n}[i]") for n in ins]
    entry = f"{op}_{d.short}_{tag}"
    what = words.format(**{k: n for k, n in zip("ABC", ins, strict=False)})
    desc = f"{out}[i] = {what} for every i < n, {dtype} data" + (
        " (computed in float32, rounded once)." if dtype in ("float16", "bfloat16") else ".")
    ref = (REF_HEADER.format(name=entry) + f"\ndef reference({', '.join(ins)}, n):\n"
           + "".join(f"    {k} = widen({n})\n" for k, n in zip("ABC", ins, strict=False))
           + f"    return {{\"{out}\": ({npy}).astype({numpy_out(dtype)})}}\n")
    init = "randint(-1000, 1000)" if dtype == "int32" else "normal"
    kernel = _map_kernel(entry, ins, dtype, out, dtype, _letters(cxx, loads))
    return _flat("elementwise", 1, entry, desc, kernel, ref, ins, dtype, out, dtype, init, rng)


def activation(rng: random.Random, tag: str) -> Candidate:
    """out[i] = an activation function of x[i], in a float dtype."""
    dtype = rng.choice(FLOATS)
    cxx, npy, op, words = rng.choice(ACTIVATIONS)
    ins, out = pick_names(rng, 1)
    d = DTYPES[dtype]
    entry = f"{op}_{d.short}_{tag}"
    desc = f"{out}[i] = {words} of {ins[0]}[i] for every i < n, {dtype} data."
    ref = (REF_HEADER.format(name=entry) + f"\ndef reference({ins[0]}, n):\n"
           f"    A = widen({ins[0]})\n    return {{\"{out}\": ({npy}).astype(np.float32)}}\n")
    kernel = _map_kernel(entry, ins, dtype, out, dtype,
                         _letters(cxx, [d.to_float.format(v=f"{ins[0]}[i]")]))
    return _flat("activation", 1, entry, desc, kernel, ref, ins, dtype, out, dtype, "normal", rng)


def cast(rng: random.Random, tag: str) -> Candidate:
    """out[i] = x[i] converted from one dtype to another."""
    src, dst = rng.choice(CASTS)
    ins, out = pick_names(rng, 1)
    s, t = DTYPES[src], DTYPES[dst]
    scale, shift = rng.choice(SCALES)
    entry = f"cast_{s.short}_to_{t.short}_{tag}"
    value = s.to_float.format(v=f"{ins[0]}[i]")
    value = f"(float){value}" if src == "int32" else value
    scaled = f"{value} * {scale}f + {shift}f"
    body = f"(int)({scaled})" if dst == "int32" else scaled
    convert = f"np.trunc(A * {scale} + {shift})" if dst == "int32" else f"A * {scale} + {shift}"
    desc = (f"{out}[i] = {ins[0]}[i] * {scale} + {shift}, computed in float32 and converted from "
            f"{src} to {dst}, for every i < n"
            + (" (truncating toward zero)." if dst == "int32" else " (rounded once)."))
    ref = (REF_HEADER.format(name=entry) + f"\ndef reference({ins[0]}, n):\n"
           f"    A = widen({ins[0]})\n"
           f"    return {{\"{out}\": ({convert}).astype({numpy_out(dst)})}}\n")
    kernel = _map_kernel(entry, ins, src, out, dst, body)
    init = "randint(-1000, 1000)" if src == "int32" else "uniform(-100, 100)"
    return _flat("cast", 1, entry, desc, kernel, ref, ins, src, out, dst, init, rng)


def broadcast(rng: random.Random, tag: str) -> Candidate:
    """out[r, c] = x[r, c] op v[c] (a row vector) or op v[r] (a column), float32 or float16."""
    dtype = rng.choice(("float32", "float16"))
    d = DTYPES[dtype]
    along_cols = rng.random() < 0.5
    sym, word = rng.choice((("+", "plus"), ("*", "times")))
    (x, v), out = pick_names(rng, 2)
    index = "c" if along_cols else "r"
    entry = f"bcast_{'row' if along_cols else 'col'}_{d.short}_{tag}"
    left, right = d.to_float.format(v=f"{x}[r * cols + c]"), d.to_float.format(v=f"{v}[{index}]")
    body = f"{left} {sym} {right}"
    store = d.from_float.format(v=body)
    kernel = (f"// Generated: one thread per element of a rows x cols array.\n{d.include}"
              f'extern "C" __global__ void {entry}(const {d.ctype}* __restrict__ {x},\n'
              f"    const {d.ctype}* __restrict__ {v}, {d.ctype}* __restrict__ {out},"
              f" int rows, int cols)\n{{\n    int c = blockIdx.x * blockDim.x + threadIdx.x;\n"
              f"    int r = blockIdx.y;\n    if (c < cols && r < rows) {{\n"
              f"        {out}[r * cols + c] = {store};\n    }}\n}}\n")
    shape = ("1", "cols") if along_cols else ("rows", "1")
    ref = (REF_HEADER.format(name=entry) + f"\ndef reference({x}, {v}, rows, cols):\n"
           f"    a = widen({x}).reshape(rows, cols)\n"
           f"    b = widen({v}).reshape({', '.join(shape)})\n"
           f"    return {{\"{out}\": (a {sym} b).astype(np.float32)}}\n")
    vec = "cols" if along_cols else "rows"
    desc = (f"{out}[r, c] = {x}[r, c] {word} {v}[{index}] for a row-major rows x cols {dtype} "
            f"array {x} and a {dtype} vector {v} of length {vec}.")
    block = rng.choice((64, 128, 256))
    args = [Arg(x, "in", dtype, ("rows", "cols"), "normal"), Arg(v, "in", dtype, (vec,), "normal"),
            Arg(out, "out", dtype, ("rows", "cols")), size_arg("rows"), size_arg("cols")]
    return Candidate("broadcast", 1, entry, desc, kernel, ref, args,
                     (f"cdiv(cols, {block})", "rows"), (str(block),), grid_cases(rng))
