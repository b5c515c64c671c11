"""A level-2 family over N-D tensors (issue 27): a reduction over one dim of a 2-D or 3-D
tensor, one thread per output element, told in the registers of app.assist.teach.registers'
family (project, PyTorch, docstring, terse, an nn.Module).

What it teaches: the output of reducing dim d has the other dims' product of elements; a
thread splits its flat index into the part before d and the part after it, and walks the
reduced dim with a stride of the product of the dims after it
(`x[(lead * R + j) * inner + tail]`).
Plain sums, means and maxima over a dim are KernelBench problems in PyTorch's words (47-53), so
that register tells only the compositions (`x.abs().sum(dim=1)`); the others tell them all.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from app.assist.prompting.candidates import signature
from app.assist.teach.candidate import INPUTS, OUTPUTS, Arg, Candidate
from app.assist.teach.dtypes import DTYPES, REF_HEADER, includes, numpy_out
from app.assist.teach.registers import REGISTER_WEIGHTS, REGISTERS, Problem, model_problem
from app.assist.teach.shaped import DIMS, LOCALS

ORDINALS = ("first", "second", "third")


@dataclass(frozen=True)
class Reduction:
    """One reduction: C++ identity, step (s, v: the accumulator and an element as float) and
    finish (s, R: the reduced dim's size); NumPy over an axis; PyTorch with {x}, {d} and {k}
    (keepdim); words."""

    tag: str
    ident: str
    step: str
    finish: str
    npy: str
    torch: str
    words: str
    sums: bool          # inputs drawn in [0, 1): no cancellation makes the tolerance a lottery
    kernelbench: bool = False
    # The position of the extreme, an int64 output: step is then the comparison and finish
    # the value compared.
    index: bool = False

    def out_dtype(self, dtype: str) -> str:
        """The output's dtype for inputs of this one."""
        return "int64" if self.index else dtype


REDUCTIONS = (
    Reduction("sum", "0.0f", "s + v", "s", "np.sum({x}, axis={d})", "torch.sum({x}, dim={d}{k})",
              "the sum", True, kernelbench=True),
    Reduction("mean", "0.0f", "s + v", "s / {R}", "np.mean({x}, axis={d})",
              "torch.mean({x}, dim={d}{k})", "the mean", True, kernelbench=True),
    Reduction("max", "-3.402823466e+38f", "fmaxf(s, v)", "s", "np.max({x}, axis={d})",
              "torch.amax({x}, dim={d}{k})", "the largest value", False, kernelbench=True),
    Reduction("sumsq", "0.0f", "s + v * v", "s", "np.sum({x} * {x}, axis={d})",
              "({x} * {x}).sum(dim={d}{k})", "the sum of squares", True),
    Reduction("meansq", "0.0f", "s + v * v", "s / {R}", "np.mean({x} * {x}, axis={d})",
              "torch.mean({x} ** 2, dim={d}{k})", "the mean of squares", True),
    Reduction("sumabs", "0.0f", "s + fabsf(v)", "s", "np.sum(np.abs({x}), axis={d})",
              "{x}.abs().sum(dim={d}{k})", "the sum of absolute values", False),
    Reduction("maxabs", "0.0f", "fmaxf(s, fabsf(v))", "s", "np.max(np.abs({x}), axis={d})",
              "{x}.abs().amax(dim={d}{k})", "the largest absolute value", False),
    Reduction("sumhalf", "0.0f", "s + v", "s * 0.5f", "np.sum({x}, axis={d}) * 0.5",
              "{x}.sum(dim={d}{k}) * 0.5", "half the sum", True),
    Reduction("argmax", "-3.402823466e+38f", ">", "v", "np.argmax({x}, axis={d})",
              "torch.argmax({x}, dim={d}{k})", "the index of the largest value", False,
              kernelbench=True, index=True),
    Reduction("argmin", "3.402823466e+38f", "<", "v", "np.argmin({x}, axis={d})",
              "torch.argmin({x}, dim={d}{k})", "the index of the smallest value", False,
              kernelbench=True, index=True),
    Reduction("argmaxabs", "-1.0f", ">", "fabsf(v)", "np.argmax(np.abs({x}), axis={d})",
              "torch.argmax({x}.abs(), dim={d}{k})", "the index of the largest absolute value",
              False, index=True),
)


@dataclass(frozen=True)
class Shape:
    """A tensor's dims and the one reduced."""

    dims: tuple[str, ...]
    axis: int
    keep: bool

    @property
    def out_dims(self) -> tuple[str, ...]:
        """The output's shape: the reduced dim kept as 1, or dropped."""
        rest = list(self.dims)
        rest[self.axis] = "1"
        return tuple(rest) if self.keep else tuple(d for d in rest if d != "1")

    def product(self, dims: tuple[str, ...]) -> str:
        """'a * b', or '1' for no dims."""
        return " * ".join(dims) or "1"


def reduce_cases(rng: random.Random, shape: Shape) -> list[list[int]]:
    """All ones; a small one; one whose output needs several blocks, with a reduced dim long
    enough that a kernel reading the wrong stride fails."""
    rank = len(shape.dims)
    big = [rng.choice((11, 17, 33))] * rank
    kept = [k for k in range(rank) if k != shape.axis]
    if rank == 2:
        big[kept[0]] = rng.randint(600, 900)
    else:
        big[kept[0]], big[kept[1]] = rng.randint(6, 9), rng.choice((129, 257))
    small = [rng.randint(2, 9) for _ in range(rank)]
    return [[1] * rank, small, big]


def _walk(shape: Shape, x: str) -> tuple[str, str]:
    """(C++ that splits the flat output index i around the reduced dim, the element read at
    step j of the reduced dim)."""
    before = shape.dims[:shape.axis]
    after = shape.dims[shape.axis + 1:]
    size = shape.dims[shape.axis]
    inner = " * ".join(after)
    grouped = f"({inner})" if len(after) > 1 else inner
    if not after:  # the last dim: each output reads one contiguous run
        return "        int lead = i;\n", f"{x}[lead * {size} + j]"
    if not before:  # the first dim: a stride of the other dims' product
        return "        int tail = i;\n", f"{x}[j * {grouped} + tail]"
    return (f"        int lead = i / {grouped};\n        int tail = i % {grouped};\n",
            f"{x}[(lead * {size} + j) * {grouped} + tail]")


def _kernel(entry: str, args: list[Arg], shape: Shape, red: Reduction, x: str, out: str,
            dtype: str) -> str:
    """One thread per output element: split its index around the reduced dim, walk that dim."""
    d = DTYPES[dtype]
    size = shape.dims[shape.axis]
    total = " * ".join(n for k, n in enumerate(shape.dims) if k != shape.axis)
    split, element = _walk(shape, x)
    value = red.finish.format(R=f"(float){size}")
    store = d.from_float.format(v=value) if d.floating else value
    step = f"            s = {red.step};\n"
    if red.index:  # the first position of the extreme, as torch.argmax gives it
        step = (f"            if ({value} {red.step} s) {{\n                s = {value};\n"
                f"                at = j;\n            }}\n")
        split += "        int at = 0;\n"
        store = "at"
    return (f"{includes(dtype)}{signature(entry, args)}\n{{\n"
            f"    // {out} has {total} elements; each reduces the {size} elements of dim "
            f"{shape.axis}\n    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (i < {total}) {{\n{split}        float s = {red.ident};\n"
            f"        for (int j = 0; j < {size}; ++j) {{\n"
            f"            float v = {d.to_float.format(v=element)};\n"
            f"{step}        }}\n        {out}[i] = {store};\n    }}\n}}\n")


def shaped_reference(entry: str, shape: Shape, npy: str, names: tuple[str, str],
                     out_dtype: str) -> str:
    """The NumPy reference of an operation over one shaped input: `npy` of X_ (the input,
    widened and shaped) and its dim {d}."""
    x, out = names
    expression = npy.format(x="X_", d=shape.axis)
    return (REF_HEADER.format(name=entry) + f"\ndef reference({x}, {', '.join(shape.dims)}):\n"
            f"    X_ = widen({x}).reshape({', '.join(shape.dims)})\n"
            f"    return {{\"{out}\": np.asarray({expression}).reshape(-1).astype("
            f"{numpy_out(out_dtype)})}}\n")


def dim_constant(rng: random.Random, dims: tuple[str, ...], axis: int
                 ) -> tuple[str, str] | None:
    """The dim as the Model's constructor argument (name, value), as problem files often give
    it, or None (a literal in forward)."""
    name = next(n for n in ("dim", "axis", "reduce_dim") if n not in dims)
    return (name, str(axis)) if rng.random() < 0.5 else None


def _describe(rng: random.Random, register: str, shape: Shape, red: Reduction, x: str,
              out: str, dtype: str, grid: str, block: str) -> str:
    """The reduction in one register."""
    dims, axis = shape.dims, shape.axis
    out_shape = " x ".join(shape.out_dims) or "1"
    odt = red.out_dtype(dtype)
    # An index's type is said wherever the output is (the inputs' type otherwise).
    typed = f", {odt}" if red.index else ""
    if register == "pytorch":
        keep = ", keepdim=True" if shape.keep else ""
        expression = red.torch.format(x=x, d=axis, k=keep)
        return (f"Compute what the PyTorch expression `{expression}` gives for the input {x} "
                f"({dtype}, shape {' x '.join(dims)}), into {out} ({odt}, shape "
                f"{out_shape}); every tensor is contiguous and row-major, and the sizes are "
                "int32 arguments. One thread per output element.")
    if register == "module":
        keep = ", keepdim=True" if shape.keep else ""
        constant = dim_constant(rng, dims, axis)
        return model_problem(rng, Problem(
            (x,), f"{x} ({dtype}, shape {' x '.join(dims)})", f"{out} ({odt}, shape "
            f"{out_shape})", out, grid, block, dims,
            red.torch.format(x=x, d=f"self.{constant[0]}" if constant else axis, k=keep),
            f"{red.words} of {x} over its dim {axis}", constant, (" x ".join(dims),),
            out_shape))
    if register == "docstring":
        return (f'"""{red.words[0].upper()}{red.words[1:]} of {x} ({" x ".join(dims)}, {dtype})'
                f' over its {ORDINALS[axis]} dim into {out} ({out_shape}{typed})."""')
    if register == "terse":
        return (f"{out} = {red.tag}({x}, dim={axis}); {rng.choice(('f32', dtype))}; "
                f"[{', '.join(dims)}] -> [{', '.join(shape.out_dims)}]{typed}; 1 thread / output")
    letters = "ijk"[:len(dims)]
    kept = ", ".join(letter for k, letter in enumerate(letters) if k != axis) or "0"
    at = ", ".join(letters)
    return (f"{out}[{kept}] = {red.words} of {x}[{at}] over {letters[axis]} < {dims[axis]}, "
            f"for a row-major {' x '.join(dims)} {dtype} array {x}; {out} is {out_shape}{typed} "
            f"({shape.product(tuple(d for d in shape.out_dims if d != '1'))} elements).")


def dim_reduce(rng: random.Random, tag: str) -> Candidate:
    """out = a reduction of x over one of its dims, one thread per output element."""
    dtype = rng.choice(("float32", "float32", "float16", "bfloat16"))
    rank = rng.choice((2, 3, 3))
    dims = rng.choice(DIMS[rank])
    shape = Shape(dims, rng.randrange(rank), rng.random() < 0.4)
    register = rng.choices(REGISTERS, weights=REGISTER_WEIGHTS)[0]
    red = rng.choice([r for r in REDUCTIONS
                      if register not in ("pytorch", "module") or not r.kernelbench])
    x = next(n for n in (rng.choice(INPUTS)[0] for _ in range(20)) if n not in set(dims) | LOCALS)
    out = rng.choice([o for o in OUTPUTS if o not in set(dims) | LOCALS | {x}])
    block = rng.choice((64, 128, 256))
    entry = f"reduce_{red.tag}_{rank}d_{DTYPES[dtype].short}_{tag}"
    init = "uniform(0, 1)" if red.sums else "normal"
    sizes = [Arg(n, "scalar", "int32", value=n) for n in dims]
    args = [Arg(x, "in", dtype, dims, init),
            Arg(out, "out", red.out_dtype(dtype), shape.out_dims or ("1",)), *sizes]
    total = shape.product(tuple(d for k, d in enumerate(dims) if k != shape.axis))
    cases = [dict(zip(dims, values, strict=True)) for values in reduce_cases(rng, shape)]
    traits = {"register": register, "shape": f"{rank}d", "dtype": dtype,
              "out_dtype": red.out_dtype(dtype), "capped": False, "scalar": False,
              "spelled": True, "launch": "flat"}
    grid = f"cdiv({total}, {block})"
    return Candidate("dim_reduce", 2, entry,
                     _describe(rng, register, shape, red, x, out, dtype, grid, str(block)),
                     _kernel(entry, args, shape, red, x, out, dtype),
                     shaped_reference(entry, shape, red.npy, (x, out), red.out_dtype(dtype)),
                     args, (grid,), (str(block),),
                     cases, extra={"traits": traits})
