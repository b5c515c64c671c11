"""A level-2 family over N-D tensors (issue 27): an operation along one dim of a 2-D or 3-D
tensor whose output has the input's shape (softmax, log-softmax, the L1, L2 and RMS
normalizations, centring, prefix sums), one thread per output element, told in the registers
of app.assist.teach.registers.

What it teaches: the launch an imported problem has (one thread per element of the output) also
serves an operation along a dim. A thread finds its position j along that dim and the first
element of its line (`base = i - j * inner`), walks the line with a stride of the product of
the dims after it (`x[base + k * inner]`) once per statistic, then writes its own element.
Softmax, log-softmax, the norms and plain prefix sums are KernelBench problems in PyTorch's
words, so those registers tell only the compositions; the others tell them all.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from app.assist.prompting.candidates import signature
from app.assist.teach.candidate import INPUTS, OUTPUTS, Arg, Candidate
from app.assist.teach.dimreduce import (
    ORDINALS,
    Shape,
    dim_constant,
    reduce_cases,
    shaped_reference,
)
from app.assist.teach.dtypes import DTYPES, includes
from app.assist.teach.registers import REGISTER_WEIGHTS, REGISTERS, Problem, model_problem
from app.assist.teach.shaped import DIMS, LOCALS

LOWEST = "-3.402823466e+38f"
# The kernels' own variables: no size or buffer may take these names.
KERNEL_NAMES = frozenset({"j", "k", "base", "v", "m", "s"})


@dataclass(frozen=True)
class Along:
    """One operation along a dim. `passes`: (variable, identity, step) walked over the line
    before the element is written (v is the element read, as float; a step may use the
    variables of earlier passes and R, the dim's size); `prefix`: the last pass stops at the
    thread's own position ('<=' inclusive, '<' exclusive, '>=' from the end); `result`: C++ of
    v and the variables. NumPy and PyTorch take {x} and {d}."""

    tag: str
    passes: tuple[tuple[str, str, str], ...]
    result: str
    npy: str
    torch: str
    words: str
    sums: bool                # inputs in [0, 1): no cancellation or zero norm
    prefix: str = ""
    kernelbench: bool = False


_MAX = ("m", LOWEST, "fmaxf(m, v)")
_EXPSUM = ("s", "0.0f", "s + expf(v - m)")
_SOFTMAX_NPY = ("np.exp({x} - {x}.max(axis={d}, keepdims=True)) / np.exp({x} - {x}.max(axis={d}, "
                "keepdims=True)).sum(axis={d}, keepdims=True)")
ALONG = (
    Along("softmax", (_MAX, _EXPSUM), "expf(v - m) / s", _SOFTMAX_NPY,
          "torch.softmax({x}, dim={d})", "the softmax", False, kernelbench=True),
    Along("log_softmax", (_MAX, _EXPSUM), "(v - m) - logf(s)",
          "({x} - {x}.max(axis={d}, keepdims=True)) - np.log(np.exp({x} - {x}.max(axis={d}, "
          "keepdims=True)).sum(axis={d}, keepdims=True))",
          "torch.log_softmax({x}, dim={d})", "the log-softmax", False, kernelbench=True),
    Along("l1norm", (("s", "0.0f", "s + fabsf(v)"),), "v / s",
          "{x} / np.abs({x}).sum(axis={d}, keepdims=True)",
          "{x} / torch.sum(torch.abs({x}), dim={d}, keepdim=True)",
          "the L1 normalization", True, kernelbench=True),
    Along("l2norm", (("s", "0.0f", "s + v * v"),), "v / sqrtf(s)",
          "{x} / np.sqrt(({x} * {x}).sum(axis={d}, keepdims=True))",
          "{x} / torch.norm({x}, p=2, dim={d}, keepdim=True)", "the L2 normalization", True,
          kernelbench=True),
    Along("rmsnorm", (("s", "0.0f", "s + v * v"),), "v / sqrtf(s / (float)R + 1e-5f)",
          "{x} / np.sqrt(({x} * {x}).mean(axis={d}, keepdims=True) + 1e-5)",
          "{x} / torch.sqrt(torch.mean({x} ** 2, dim={d}, keepdim=True) + 1e-5)",
          "the RMS normalization (eps 1e-5)", True, kernelbench=True),
    Along("cumsum", (("s", "0.0f", "s + v"),), "s", "np.cumsum({x}, axis={d})",
          "torch.cumsum({x}, dim={d})", "the running sum", True, prefix="<=", kernelbench=True),
    Along("softmax_half", (("m", LOWEST, "fmaxf(m, v * 0.5f)"),
                           ("s", "0.0f", "s + expf(v * 0.5f - m)")), "expf(v * 0.5f - m) / s",
          _SOFTMAX_NPY.replace("{x}", "({x} * 0.5)"), "torch.softmax({x} * 0.5, dim={d})",
          "the softmax of half", False),
    Along("softmax_twice", (_MAX, _EXPSUM), "2.0f * expf(v - m) / s",
          f"2.0 * {_SOFTMAX_NPY}", "torch.softmax({x}, dim={d}) * 2.0",
          "twice the softmax", False),
    Along("center", (("s", "0.0f", "s + v"),), "v - s / (float)R",
          "{x} - {x}.mean(axis={d}, keepdims=True)", "{x} - {x}.mean(dim={d}, keepdim=True)",
          "the deviation from the mean", True),
    Along("maxabs_norm", (("m", "0.0f", "fmaxf(m, fabsf(v))"),), "v / m",
          "{x} / np.abs({x}).max(axis={d}, keepdims=True)",
          "{x} / {x}.abs().amax(dim={d}, keepdim=True)",
          "the scaling by the largest absolute value", True),
    Along("shift_min", (("m", "3.402823466e+38f", "fminf(m, v)"),), "v - m",
          "{x} - {x}.min(axis={d}, keepdims=True)", "{x} - {x}.amin(dim={d}, keepdim=True)",
          "the shift by the smallest value", False),
    Along("cumsum_sq", (("s", "0.0f", "s + v * v"),), "s", "np.cumsum({x} * {x}, axis={d})",
          "torch.cumsum({x} * {x}, dim={d})", "the running sum of squares", True, prefix="<=",
          kernelbench=True),  # cumsum of a product: 93_masked_cumsum's operations
    Along("cumsum_excl", (("s", "0.0f", "s + v"),), "s", "np.cumsum({x}, axis={d}) - {x}",
          "torch.cumsum({x}, dim={d}) - {x}", "the exclusive running sum", True, prefix="<"),
    Along("cumsum_rev", (("s", "0.0f", "s + v"),), "s",
          "np.flip(np.cumsum(np.flip({x}, axis={d}), axis={d}), axis={d})",
          "torch.cumsum({x}.flip({d}), dim={d}).flip({d})",
          "the running sum from the end", True, prefix=">=", kernelbench=True),
)


def _line(shape: Shape) -> tuple[str, str]:
    """(the product of the dims after the one walked, or '' for the last dim; its size)."""
    after = shape.dims[shape.axis + 1:]
    inner = " * ".join(after)
    return (f"({inner})" if len(after) > 1 else inner), shape.dims[shape.axis]


def _position(shape: Shape) -> str:
    """C++ for j, the thread's place along the dim, and base, its line's first element."""
    inner, size = _line(shape)
    if not inner:
        return f"        int j = i % {size};\n        int base = i - j;\n"
    j = f"i / {inner}" if shape.axis == 0 else f"(i / {inner}) % {size}"
    return f"        int j = {j};\n        int base = i - j * {inner};\n"


def _loop(shape: Shape, along: Along, last: bool) -> str:
    """The bounds of one walk over the line (a prefix's last walk stops at j)."""
    size = _line(shape)[1]
    if last and along.prefix == ">=":
        return f"for (int k = j; k < {size}; ++k)"
    if last and along.prefix:
        return f"for (int k = 0; k {along.prefix} j; ++k)"
    return f"for (int k = 0; k < {size}; ++k)"


def _kernel(entry: str, args: list[Arg], shape: Shape, along: Along, x: str, out: str,
            dtype: str) -> str:
    """One thread per element: its line's statistics, then its own element."""
    d = DTYPES[dtype]
    inner, size = _line(shape)
    total = " * ".join(shape.dims)
    read = f"{x}[base + k * {inner}]" if inner else f"{x}[base + k]"
    walks = ""
    for number, (name, ident, step) in enumerate(along.passes):
        last = number == len(along.passes) - 1
        walks += (f"        float {name} = {ident};\n        {_loop(shape, along, last)} {{\n"
                  f"            float v = {d.to_float.format(v=read)};\n"
                  f"            {name} = {step};\n        }}\n")
    result = along.result.replace("(float)R", f"(float){size}")
    store = d.from_float.format(v=result)
    # The element itself, where the result uses it (a prefix sum does not).
    own = f"        float v = {d.to_float.format(v=f'{x}[i]')};\n" if re.search(r"\bv\b", result) \
        else ""
    return (f"{includes(dtype)}{signature(entry, args)}\n{{\n"
            f"    // one thread per element of {out}; each walks the {size} elements of dim "
            f"{shape.axis} on its line\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (i < {total}) {{\n{_position(shape)}{walks}{own}"
            f"        {out}[i] = {store};\n    }}\n}}\n")


def _describe(rng: random.Random, register: str, shape: Shape, along: Along, names: tuple[str, str],
              dtype: str, launch: tuple[str, str]) -> str:
    """The operation in one register."""
    (x, out), dims, axis = names, shape.dims, shape.axis
    shaped = " x ".join(dims)
    if register == "module":
        constant = dim_constant(rng, dims, axis)
        return model_problem(rng, Problem(
            (x,), f"{x} ({dtype}, shape {shaped})", f"{out} ({dtype}, shape {shaped})", out,
            *launch, dims, along.torch.format(x=x, d=f"self.{constant[0]}" if constant
                                              else axis),
            f"{along.words} of {x} along dim {axis}", constant, (shaped,), shaped))
    if register == "pytorch":
        return (f"Compute what the PyTorch expression `{along.torch.format(x=x, d=axis)}` gives "
                f"for the input {x} ({dtype}, shape {shaped}), into {out} ({dtype}, shape "
                f"{shaped}); every tensor is contiguous and row-major, and the sizes are int32 "
                "arguments. One thread per element.")
    if register == "docstring":
        return (f'"""{along.words[0].upper()}{along.words[1:]} of {x} ({shaped}, {dtype}) along '
                f'its {ORDINALS[axis]} dim, into {out} of the same shape."""')
    if register == "terse":
        return (f"{out} = {along.tag}({x}, dim={axis}); {rng.choice(('f32', dtype))}; "
                f"[{', '.join(dims)}]; same shape out; 1 thread / element")
    letters = "ijk"[:len(dims)]
    return (f"{out}[{', '.join(letters)}] = {along.words} of {x} along {letters[axis]} < "
            f"{dims[axis]}, for a row-major {shaped} {dtype} array {x}; {out} has its shape "
            f"({' * '.join(dims)} elements), one thread per element.")


def dim_along(rng: random.Random, tag: str) -> Candidate:
    """out = an operation along one dim of x (softmax, norms, prefix sums), same shape."""
    dtype = rng.choice(("float32", "float32", "float16", "bfloat16"))
    rank = rng.choice((2, 2, 3))
    dims = rng.choice([d for d in DIMS[rank] if not set(d) & KERNEL_NAMES])
    shape = Shape(dims, rng.randrange(rank), True)
    register = rng.choices(REGISTERS, weights=REGISTER_WEIGHTS)[0]
    along = rng.choice([a for a in ALONG
                        if register not in ("pytorch", "module") or not a.kernelbench])
    taken = set(dims) | LOCALS | KERNEL_NAMES
    x = next(n for n in (rng.choice(INPUTS)[0] for _ in range(20)) if n not in taken)
    out = rng.choice([o for o in OUTPUTS if o not in taken | {x}])
    block = str(rng.choice((64, 128, 256)))
    entry = f"along_{along.tag}_{rank}d_{DTYPES[dtype].short}_{tag}"
    init = "uniform(0, 1)" if along.sums else "normal"
    args = [Arg(x, "in", dtype, dims, init), Arg(out, "out", dtype, dims),
            *[Arg(n, "scalar", "int32", value=n) for n in dims]]
    grid = f"cdiv({' * '.join(dims)}, {block})"
    cases = [dict(zip(dims, values, strict=True)) for values in reduce_cases(rng, shape)]
    traits = {"register": register, "shape": f"{rank}d", "dtype": dtype, "out_dtype": dtype,
              "capped": False, "scalar": False, "spelled": True, "launch": "flat"}
    return Candidate("dim_along", 2, entry,
                     _describe(rng, register, shape, along, (x, out), dtype, (grid, block)),
                     _kernel(entry, args, shape, along, x, out, dtype),
                     shaped_reference(entry, shape, along.npy, (x, out), dtype), args, (grid,),
                     (block,),
                     cases, extra={"traits": traits})
