"""Level-2 families of the generator: row and whole-array reductions, softmax, RMS norm and
transposes, each as a Candidate for verification to judge."""

from __future__ import annotations

import random

from app.assist.teach.candidate import Arg, Candidate, flat_cases, grid_cases, pick_names, size_arg
from app.assist.teach.dtypes import DTYPES, REF_HEADER, numpy_out

# Identities are literals, not INT_MIN or INFINITY: a taught kernel must compile with no
# header beyond those of its types, since a proposal's answer begins after the signature.
# (op tag, C++ identity, C++ combine of s and t, NumPy over axis, words). Sums take inputs in
# [0, 1) so that no cancellation makes the float32 tolerance a lottery.
REDUCTIONS = {
    "float32": [("sum", "0.0f", "{s} + {t}", "np.sum", "the sum"),
                ("max", "-3.402823466e+38f", "fmaxf({s}, {t})", "np.max", "the largest value"),
                ("sumsq", "0.0f", "{s} + {t}", "np.sum", "the sum of squares")],
    "int32": [("sum", "0", "{s} + {t}", "np.sum", "the sum"),
              ("max", "(-2147483647 - 1)", "max({s}, {t})", "np.max", "the largest value")],
}


def _tree(ctype: str, combine: str, block: int) -> str:
    """C++ that folds each thread's `s` into part[0] through shared memory."""
    step = combine.format(s="part[threadIdx.x]", t="part[threadIdx.x + h]")
    return (f"    __shared__ {ctype} part[{block}];\n    part[threadIdx.x] = s;\n"
            f"    __syncthreads();\n    for (int h = blockDim.x / 2; h > 0; h >>= 1) {{\n"
            f"        if (threadIdx.x < h) {{\n            part[threadIdx.x] = {step};\n"
            f"        }}\n        __syncthreads();\n    }}\n")


def _reduction_parts(rng: random.Random) -> tuple[str, tuple[str, str, str, str, str], int]:
    """A dtype, a reduction of it and a power-of-two block size."""
    dtype = rng.choice(("float32", "float32", "int32"))
    return dtype, rng.choice(REDUCTIONS[dtype]), rng.choice((64, 128, 256))


def _element(op: str, value: str) -> str:
    """What one element contributes to the reduction."""
    return f"{value} * {value}" if op == "sumsq" else value


def _init(dtype: str, op: str) -> str:
    """How a reduction's input is drawn: sums over [0, 1) (see REDUCTIONS), maxima over normal
    values, integers over a range whose sums fit."""
    if dtype == "int32":
        return "randint(-1000, 1000)"
    return "uniform(0, 1)" if op != "max" else "normal"


def row_reduce(rng: random.Random, tag: str) -> Candidate:
    """y[r] = a reduction of row r of a rows x cols array: one block per row."""
    dtype, (op, ident, combine, npy, words), block = _reduction_parts(rng)
    d = DTYPES[dtype]
    (x,), y = pick_names(rng, 1)
    entry = f"row_{op}_{d.short}_{tag}"
    s_next = combine.format(s="s", t=_element(op, f"{x}[(size_t)r * cols + c]"))
    kernel = (f"// Generated: one block per row, a tree in shared memory.\n"
              f'extern "C" __global__ void {entry}(const {d.ctype}* __restrict__ {x},\n'
              f"    {d.ctype}* __restrict__ {y}, int rows, int cols)\n{{\n    int r = blockIdx.x;\n"
              f"    {d.ctype} s = {ident};\n"
              f"    for (int c = threadIdx.x; c < cols; c += blockDim.x) {{\n"
              f"        s = {s_next};\n    }}\n{_tree(d.ctype, combine, block)}"
              f"    if (threadIdx.x == 0) {{\n        {y}[r] = part[0];\n    }}\n}}\n")
    value = _element(op, "a")
    ref = (REF_HEADER.format(name=entry) + f"\ndef reference({x}, rows, cols):\n"
           f"    a = widen({x}).reshape(rows, cols)\n"
           f"    return {{\"{y}\": {npy}({value}, axis=1).astype({numpy_out(dtype)})}}\n")
    init = _init(dtype, op)
    desc = f"{y}[r] = {words} of row r of a row-major rows x cols {dtype} array {x}."
    args = [Arg(x, "in", dtype, ("rows", "cols"), init), Arg(y, "out", dtype, ("rows",)),
            size_arg("rows"), size_arg("cols")]
    return Candidate("row_reduction", 2, entry, desc, kernel, ref, args, ("rows",), (str(block),),
                     grid_cases(rng))


def whole_reduce(rng: random.Random, tag: str) -> Candidate:
    """y[0] = a reduction of all n elements: a single block walks the array."""
    dtype, (op, ident, combine, npy, words), block = _reduction_parts(rng)
    d = DTYPES[dtype]
    (x,), y = pick_names(rng, 1)
    entry = f"total_{op}_{d.short}_{tag}"
    s_next = combine.format(s="s", t=_element(op, f"{x}[i]"))
    kernel = (f"// Generated: one block strides over the whole array, then a tree.\n"
              f'extern "C" __global__ void {entry}('
              f"const {d.ctype}* __restrict__ {x},\n    {d.ctype}* __restrict__ {y}, int n)\n{{\n"
              f"    {d.ctype} s = {ident};\n"
              f"    for (int i = threadIdx.x; i < n; i += blockDim.x) {{\n        s = {s_next};\n"
              f"    }}\n{_tree(d.ctype, combine, block)}"
              f"    if (threadIdx.x == 0) {{\n        {y}[0] = part[0];\n    }}\n}}\n")
    value = _element(op, "a")
    ref = (REF_HEADER.format(name=entry) + f"\ndef reference({x}, n):\n    a = widen({x})\n"
           f"    return {{\"{y}\": np.array([{npy}({value})]).astype({numpy_out(dtype)})}}\n")
    init = _init(dtype, op)
    desc = f"{y}[0] = {words} of all n elements of the {dtype} array {x} (n >= 1)."
    args = [Arg(x, "in", dtype, ("n",), init), Arg(y, "out", dtype, ("1",)), size_arg("n")]
    return Candidate("reduction", 2, entry, desc, kernel, ref, args, ("1",), (str(block),),
                     flat_cases(rng))


def _row_stats(d_to: str, x: str, body: str, combine: str, result: str, ident: str,
               block: int) -> str:
    """C++ that reduces `body` (V: an element as float) over row r into the float `result`,
    in a scope of its own so that two reductions can follow each other."""
    load = d_to.format(v=f"{x}[(size_t)r * cols + c]")
    return (f"    float {result};\n    {{\n    float s = {ident};\n"
            f"    for (int c = threadIdx.x; c < cols; c += blockDim.x) {{\n"
            f"        float t = {body.replace('V', load)};\n"
            f"        s = {combine.format(s='s', t='t')};\n    }}\n"
            f"{_tree('float', combine, block)}    {result} = part[0];\n    __syncthreads();\n"
            "    }\n")


def softmax(rng: random.Random, tag: str) -> Candidate:
    """y[r, :] = softmax of row r (max subtracted first), float32 or float16."""
    dtype = rng.choice(("float32", "float32", "float16"))
    d, block = DTYPES[dtype], rng.choice((64, 128, 256))
    (x,), y = pick_names(rng, 1)
    entry = f"softmax_rows_{d.short}_{tag}"
    load = d.to_float.format(v=f"{x}[(size_t)r * cols + c]")
    kernel = (f"// Generated: one block per row: the row's max, then the sum of exponentials.\n"
              f'{d.include}extern "C" __global__ void {entry}(const {d.ctype}* __restrict__ {x},\n'
              f"    {d.ctype}* __restrict__ {y}, int rows, int cols)\n{{\n    int r = blockIdx.x;\n"
              + _row_stats(d.to_float, x, "V", "fmaxf({s}, {t})", "m", "-3.402823466e+38f", block)
              + _row_stats(d.to_float, x, "expf(V - m)", "{s} + {t}", "total", "0.0f", block)
              + f"    for (int c = threadIdx.x; c < cols; c += blockDim.x) {{\n"
              f"        {y}[(size_t)r * cols + c] = "
              f"{d.from_float.format(v=f'expf({load} - m) / total')};\n    }}\n}}\n")
    ref = (REF_HEADER.format(name=entry) + f"\ndef reference({x}, rows, cols):\n"
           f"    a = widen({x}).reshape(rows, cols)\n"
           "    e = np.exp(a - a.max(axis=1, keepdims=True))\n"
           f"    return {{\"{y}\": (e / e.sum(axis=1, keepdims=True)).astype(np.float32)}}\n")
    desc = (f"{y}[r, :] = softmax of row r of a row-major rows x cols {dtype} array {x} "
            "(subtract the row's max before exponentiating).")
    args = [Arg(x, "in", dtype, ("rows", "cols"), "normal"), Arg(y, "out", dtype, ("rows", "cols")),
            size_arg("rows"), size_arg("cols")]
    return Candidate("softmax", 2, entry, desc, kernel, ref, args, ("rows",), (str(block),),
                     grid_cases(rng))


def rms_norm(rng: random.Random, tag: str) -> Candidate:
    """y[r, c] = x[r, c] / sqrt(mean of row r's squares + eps), float32 or bfloat16."""
    dtype = rng.choice(("float32", "bfloat16"))
    d, block = DTYPES[dtype], rng.choice((64, 128, 256))
    (x,), y = pick_names(rng, 1)
    eps = rng.choice(("1e-5", "1e-6"))
    entry = f"rms_norm_{d.short}_{tag}"
    load = d.to_float.format(v=f"{x}[(size_t)r * cols + c]")
    kernel = (f"// Generated: one block per row: the mean square, then the scaled row.\n"
              f'{d.include}extern "C" __global__ void {entry}(const {d.ctype}* __restrict__ {x},\n'
              f"    {d.ctype}* __restrict__ {y}, int rows, int cols)\n{{\n    int r = blockIdx.x;\n"
              + _row_stats(d.to_float, x, "V * V", "{s} + {t}", "ms", "0.0f", block)
              + f"    float scale = 1.0f / sqrtf(ms / cols + {eps}f);\n"
              f"    for (int c = threadIdx.x; c < cols; c += blockDim.x) {{\n"
              f"        {y}[(size_t)r * cols + c] = {d.from_float.format(v=f'{load} * scale')};\n"
              "    }\n}\n")
    ref = (REF_HEADER.format(name=entry) + f"\ndef reference({x}, rows, cols):\n"
           f"    a = widen({x}).reshape(rows, cols)\n"
           f"    scale = 1.0 / np.sqrt((a * a).mean(axis=1, keepdims=True) + {eps})\n"
           f"    return {{\"{y}\": (a * scale).astype(np.float32)}}\n")
    desc = (f"{y}[r, c] = {x}[r, c] / sqrt(mean over c of {x}[r, c]^2 + {eps}) for a row-major "
            f"rows x cols {dtype} array (RMS norm without weights).")
    args = [Arg(x, "in", dtype, ("rows", "cols"), "normal"), Arg(y, "out", dtype, ("rows", "cols")),
            size_arg("rows"), size_arg("cols")]
    return Candidate("norm", 2, entry, desc, kernel, ref, args, ("rows",), (str(block),),
                     grid_cases(rng))


def transpose(rng: random.Random, tag: str) -> Candidate:
    """y[c, r] = x[r, c] for any of the four dtypes, on a 2-D grid of 2-D blocks."""
    dtype = rng.choice(("float32", "float16", "bfloat16", "int32"))
    d, side = DTYPES[dtype], rng.choice((8, 16, 32))
    (x,), y = pick_names(rng, 1)
    entry = f"transpose_{d.short}_{tag}"
    kernel = (f"// Generated: one thread per element, a 2-D grid over the input.\n{d.include}"
              f'extern "C" __global__ void {entry}(const {d.ctype}* __restrict__ {x},\n'
              f"    {d.ctype}* __restrict__ {y}, int rows, int cols)\n{{\n"
              f"    int c = blockIdx.x * blockDim.x + threadIdx.x;\n"
              f"    int r = blockIdx.y * blockDim.y + threadIdx.y;\n"
              f"    if (r < rows && c < cols) {{\n        {y}[(size_t)c * rows + r] = "
              f"{x}[(size_t)r * cols + c];\n    }}\n}}\n")
    ref = (REF_HEADER.format(name=entry) + f"\ndef reference({x}, rows, cols):\n"
           f"    a = widen({x}).reshape(rows, cols)\n"
           f"    return {{\"{y}\": a.T.copy().astype({numpy_out(dtype)})}}\n")
    desc = f"{y} (cols x rows) = the transpose of the row-major rows x cols {dtype} array {x}."
    init = "randint(-1000, 1000)" if dtype == "int32" else "normal"
    args = [Arg(x, "in", dtype, ("rows", "cols"), init), Arg(y, "out", dtype, ("cols", "rows")),
            size_arg("rows"), size_arg("cols")]
    return Candidate("transpose", 2, entry, desc, kernel, ref, args,
                     (f"cdiv(cols, {side})", f"cdiv(rows, {side})"), (str(side), str(side)),
                     grid_cases(rng))
