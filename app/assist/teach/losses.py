"""A level-2 family (issue 27): a loss, a whole-tensor reduction of two tensors into one value
(mean absolute or squared error, sums, a hinge), told in the registers of
app.assist.teach.registers.

What it teaches: an output of one element under the launch an imported problem has (one
thread per element of the output) is one thread that walks every element of its inputs, the
flat count being the product of their dims. The mean squared error and the hinge loss in
PyTorch's words are KernelBench problems, so those registers tell only the others.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from app.assist.prompting.candidates import signature
from app.assist.teach.candidate import Arg, Candidate
from app.assist.teach.dtypes import DTYPES, REF_HEADER, includes
from app.assist.teach.registers import REGISTER_WEIGHTS, REGISTERS, Problem, model_problem
from app.assist.teach.shaped import DIMS, LOCALS

NAMES = (("predictions", "targets"), ("pred", "target"), ("a", "b"), ("x", "y"),
         ("output", "label"), ("lhs", "rhs"))
OUTS = ("out", "loss", "result", "total_loss")
# A float32 sum of up to 40k terms in another order than the reference's.
SUM_TOLERANCE = 1e-4


@dataclass(frozen=True)
class Loss:
    """One loss: C++ of an element's term (p and t, as float), mean or sum, NumPy, PyTorch and
    the project's notation over {a} and {b}, words."""

    tag: str
    term: str
    mean: bool
    npy: str
    torch: str
    words: str
    formula: str
    positive: bool = False   # inputs in [0, 1): a signed sum would cancel
    kernelbench: bool = False


LOSSES = (
    Loss("mse", "(p - t) * (p - t)", True, "np.mean(({a} - {b}) ** 2)",
         "torch.mean(({a} - {b}) ** 2)", "the mean squared error", "({a}[i] - {b}[i])^2",
         kernelbench=True),
    Loss("mae", "fabsf(p - t)", True, "np.mean(np.abs({a} - {b}))",
         "torch.mean(torch.abs({a} - {b}))", "the mean absolute error", "|{a}[i] - {b}[i]|"),
    Loss("sse", "(p - t) * (p - t)", False, "np.sum(({a} - {b}) ** 2)",
         "torch.sum(({a} - {b}) ** 2)", "the sum of squared differences",
         "({a}[i] - {b}[i])^2"),
    Loss("hinge", "fmaxf(1.0f - p * t, 0.0f)", True, "np.mean(np.maximum(1.0 - {a} * {b}, 0.0))",
         "torch.mean(torch.clamp(1 - {a} * {b}, min=0))", "the mean hinge loss",
         "max(1 - {a}[i] * {b}[i], 0)", kernelbench=True),
    Loss("dot", "p * t", False, "np.sum({a} * {b})", "torch.sum({a} * {b})",
         "the sum of products", "{a}[i] * {b}[i]",
         positive=True),
    Loss("half_mse", "0.5f * (p - t) * (p - t)", True, "0.5 * np.mean(({a} - {b}) ** 2)",
         "0.5 * torch.mean(({a} - {b}) ** 2)", "half the mean squared error",
         "0.5 * ({a}[i] - {b}[i])^2"),
    Loss("mean_relu_diff", "fmaxf(p - t, 0.0f)", True, "np.mean(np.maximum({a} - {b}, 0.0))",
         "torch.relu({a} - {b}).mean()", "the mean of the positive part of the difference",
         "max({a}[i] - {b}[i], 0)"),
)


def _kernel(entry: str, args: list[Arg], loss: Loss, names: tuple[str, str, str],
            dims: tuple[str, ...], dtype: str) -> str:
    """One thread walks every element and writes the one value."""
    (a, b, out), d = names, DTYPES[dtype]
    total = " * ".join(dims)
    finish = "s / (float)total" if loss.mean else "s"
    return (f"{includes(dtype)}{signature(entry, args)}\n{{\n"
            f"    // {out} holds one value: one thread walks all {total} elements\n"
            f"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < 1) {{\n"
            f"        int total = {total};\n        float s = 0.0f;\n"
            f"        for (int k = 0; k < total; ++k) {{\n"
            f"            float p = {d.to_float.format(v=f'{a}[k]')};\n"
            f"            float t = {d.to_float.format(v=f'{b}[k]')};\n"
            f"            s += {loss.term};\n        }}\n"
            f"        {out}[0] = {d.from_float.format(v=finish)};\n    }}\n}}\n")


def _reference(entry: str, loss: Loss, names: tuple[str, str, str], dims: tuple[str, ...]
               ) -> str:
    """The NumPy reference."""
    a, b, out = names
    expression = loss.npy.format(a="A_", b="B_")
    return (REF_HEADER.format(name=entry) + f"\ndef reference({a}, {b}, {', '.join(dims)}):\n"
            f"    A_, B_ = widen({a}), widen({b})\n"
            f"    return {{\"{out}\": np.asarray({expression}).reshape(1).astype(np.float32)}}\n")


def _describe(rng: random.Random, register: str, loss: Loss, names: tuple[str, str, str],
              dims: tuple[str, ...], dtype: str, launch: tuple[str, str]) -> str:
    """The loss in one register."""
    a, b, out = names
    shaped = " x ".join(dims)
    inputs = f"{a} ({dtype}, shape {shaped}), {b} ({dtype}, shape {shaped})"
    expression = loss.torch.format(a=a, b=b)
    if register == "module":
        return model_problem(rng, Problem((a, b), inputs, f"{out} ({dtype}, shape 1)", out,
                                          *launch, dims, expression, loss.words,
                                          shapes=(shaped, shaped), out_shape="1"))
    if register == "pytorch":
        return (f"Compute what the PyTorch expression `{expression}` gives for the inputs "
                f"{inputs}, into {out} ({dtype}, shape 1); every tensor is contiguous and "
                "row-major, and the sizes are int32 arguments. One thread does the whole sum.")
    if register == "docstring":
        return (f'"""{loss.words[0].upper()}{loss.words[1:]} of {a} and {b} ({shaped}, {dtype})'
                f' into {out}[0]."""')
    if register == "terse":
        return (f"{out}[0] = {loss.tag}({a}, {b}); {DTYPES[dtype].short}; [{', '.join(dims)}]; "
                "1 thread, one value")
    kind = "mean" if loss.mean else "sum"
    term = loss.formula.format(a=a, b=b)
    return (f"{out}[0] = {kind} over every element i of {term}, for row-major {shaped} {dtype} "
            f"arrays {a} and {b} ({' * '.join(dims)} elements); {out} holds one value.")


def whole_loss(rng: random.Random, tag: str) -> Candidate:
    """out[0] = a loss of a and b over all their elements, by one thread."""
    dtype = rng.choice(("float32", "float32", "float32", "float16", "bfloat16"))
    dims = rng.choice(DIMS[rng.choice((1, 2, 2, 3))])
    register = rng.choices(REGISTERS, weights=REGISTER_WEIGHTS)[0]
    loss = rng.choice([x for x in LOSSES
                       if register not in ("pytorch", "module") or not x.kernelbench])
    a, b = rng.choice([n for n in NAMES if not set(n) & (set(dims) | LOCALS)])
    names = (a, b, rng.choice([o for o in OUTS if o not in dims]))
    block = str(rng.choice((32, 64, 256)))
    entry = f"loss_{loss.tag}_{len(dims)}d_{DTYPES[dtype].short}_{tag}"
    init = "uniform(0, 1)" if loss.positive else "normal"
    args = [Arg(a, "in", dtype, dims, init), Arg(b, "in", dtype, dims, init),
            Arg(names[2], "out", dtype, ("1",)), *[Arg(n, "scalar", "int32", value=n)
                                                  for n in dims]]
    grid = f"cdiv(1, {block})"
    big = {1: [[20_011]], 2: [[rng.randint(67, 160), rng.choice((129, 257))]],
           3: [[rng.randint(6, 9), rng.randint(11, 17), 129]]}[len(dims)]
    small = [[rng.randint(2, 9) for _ in dims]]
    cases = [dict(zip(dims, values, strict=True)) for values in [[1] * len(dims), *small, *big]]
    traits = {"register": register, "shape": f"{len(dims)}d", "dtype": dtype,
              "out_dtype": dtype, "capped": False, "scalar": False, "spelled": True,
              "launch": "flat"}
    return Candidate("whole_loss", 2, entry,
                     _describe(rng, register, loss, names, dims, dtype, (grid, block)),
                     _kernel(entry, args, loss, names, dims, dtype),
                     _reference(entry, loss, names, dims), args, (grid,), (block,), cases,
                     extra={"traits": traits},
                     tolerance=SUM_TOLERANCE if dtype == "float32" else None)
