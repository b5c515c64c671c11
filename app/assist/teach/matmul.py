"""A level-2 family (issue 27): matrix products, one thread per output element, told in the
registers of app.assist.teach.registers: plain, with either operand stored transposed, and
batched, each with an optional epilogue (ReLU, tanh, a scale).

What it teaches: the launch an imported problem has (one thread per element of the output)
serves a matrix product too. A thread splits its flat index into (batch,) row and column,
sums the products along the inner dim, reading each operand as it is stored (`A[row * K + p]`,
or `A[p * M + row]` for a transposed one), and applies the epilogue once. A plain product in
PyTorch's words is a KernelBench problem, so those registers tell only products with an
epilogue; the others tell them all.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from app.assist.prompting.candidates import signature
from app.assist.teach.candidate import Arg, Candidate
from app.assist.teach.dtypes import DTYPES, REF_HEADER, includes, numpy_out
from app.assist.teach.registers import REGISTER_WEIGHTS, REGISTERS, Problem, model_problem
from app.assist.teach.shaped import FLOAT_VALUES

# (M, K, N) and the batch's name: no name the kernel uses for itself (row, col, p, s, b, i).
SIZES = (("M", "K", "N"), ("m", "kdim", "n"), ("rows", "inner", "cols"),
         ("M", "N_in", "N_out"), ("num_rows", "depth", "num_cols"))
BATCHES = ("batch", "B_", "nb", "batch_size")
OPERANDS = (("A", "B"), ("a", "w"), ("x", "weight"), ("lhs", "rhs"), ("mat_a", "mat_b"))
OUTS = ("out", "C", "result", "dst")
# float32 sums of up to 257 products of normal values, whose order the reference does not share: as
# `import kernelbench` compares such sums (near-zero outputs after a ReLU are otherwise lost).
SUM_TOLERANCE = 1e-4


@dataclass(frozen=True)
class Layout:
    """How the operands are stored: 'plain', 'trans_a' (A is K x M), 'trans_b' (B is N x K)
    or 'batched' (b x M x K times b x K x N)."""

    kind: str
    sizes: tuple[str, str, str]
    batch: str = ""

    def a_shape(self) -> tuple[str, ...]:
        m, k, _n = self.sizes
        return (*self.lead(), *((k, m) if self.kind == "trans_a" else (m, k)))

    def b_shape(self) -> tuple[str, ...]:
        _m, k, n = self.sizes
        return (*self.lead(), *((n, k) if self.kind == "trans_b" else (k, n)))

    def out_shape(self) -> tuple[str, ...]:
        return (*self.lead(), self.sizes[0], self.sizes[2])

    def lead(self) -> tuple[str, ...]:
        return (self.batch,) if self.batch else ()


@dataclass(frozen=True)
class Epilogue:
    """What follows the sum: C++ of s, NumPy and PyTorch of {e} (the product), words; {c} is
    the scale's value (a literal, or the Model's constant)."""

    tag: str
    cxx: str
    npy: str
    torch: str
    words: str


EPILOGUES = (
    Epilogue("", "s", "{e}", "{e}", ""),
    Epilogue("relu", "fmaxf(s, 0.0f)", "np.maximum({e}, 0.0)", "torch.relu({e})",
             ", then ReLU"),
    Epilogue("tanh", "tanhf(s)", "np.tanh({e})", "torch.tanh({e})", ", then tanh"),
    Epilogue("scale", "s * {c}f", "{e} * {c}", "{e} * {c}", ", times {c}"),
)


def _torch_product(layout: Layout, a: str, b: str) -> str:
    """The product in PyTorch."""
    if layout.kind == "trans_a":
        return f"torch.matmul({a}.T, {b})"
    if layout.kind == "trans_b":
        return f"torch.matmul({a}, {b}.T)"
    if layout.kind == "batched":
        return f"torch.bmm({a}, {b})"
    return f"torch.matmul({a}, {b})"


def _reads(layout: Layout, a: str, b: str) -> tuple[str, str]:
    """The two elements multiplied at step p, as stored."""
    m, k, n = layout.sizes
    if layout.kind == "trans_a":
        return f"{a}[p * {m} + row]", f"{b}[p * {n} + col]"
    if layout.kind == "trans_b":
        return f"{a}[row * {k} + p]", f"{b}[col * {k} + p]"
    if layout.kind == "batched":
        return f"{a}[(b * {m} + row) * {k} + p]", f"{b}[(b * {k} + p) * {n} + col]"
    return f"{a}[row * {k} + p]", f"{b}[p * {n} + col]"


def _kernel(entry: str, args: list[Arg], layout: Layout, names: tuple[str, str, str],
            dtype: str, epilogue: str) -> str:
    """One thread per output element: its row and column, the sum along the inner dim."""
    (a, b, out), d = names, DTYPES[dtype]
    m, k, n = layout.sizes
    total = " * ".join(layout.out_shape())
    split = (f"        int b = i / ({m} * {n});\n        int row = (i / {n}) % {m};\n"
             if layout.batch else f"        int row = i / {n};\n")
    left, right = _reads(layout, a, b)
    product = f"{d.to_float.format(v=left)} * {d.to_float.format(v=right)}"
    return (f"{includes(dtype)}{signature(entry, args)}\n{{\n"
            f"    // one thread per element of {out}; each sums {k} products\n"
            f"    int i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < {total}) {{\n"
            f"{split}        int col = i % {n};\n        float s = 0.0f;\n"
            f"        for (int p = 0; p < {k}; ++p) {{\n            s += {product};\n"
            f"        }}\n        {out}[i] = {d.from_float.format(v=epilogue)};\n    }}\n}}\n")


def _reference(entry: str, layout: Layout, names: tuple[str, str, str], dtype: str,
               epilogue: Epilogue, value: str) -> str:
    """The NumPy reference."""
    a, b, out = names
    m, k, n = layout.sizes
    params = [a, b, *layout.lead(), m, k, n]
    lines = [f"    A_ = widen({a}).reshape({', '.join(layout.a_shape())})\n",
             f"    B_ = widen({b}).reshape({', '.join(layout.b_shape())})\n"]
    left = "np.swapaxes(A_, -1, -2)" if layout.kind == "trans_a" else "A_"
    right = "np.swapaxes(B_, -1, -2)" if layout.kind == "trans_b" else "B_"
    expression = epilogue.npy.format(e=f"np.matmul({left}, {right})", c=value)
    return (REF_HEADER.format(name=entry) + f"\ndef reference({', '.join(params)}):\n"
            + "".join(lines) + f"    return {{\"{out}\": np.asarray({expression}).reshape(-1)"
            f".astype({numpy_out(dtype)})}}\n")


def _shapes(layout: Layout) -> tuple[str, str, str]:
    """The three shapes in words."""
    return (" x ".join(layout.a_shape()), " x ".join(layout.b_shape()),
            " x ".join(layout.out_shape()))


def _formula(layout: Layout, a: str, b: str) -> tuple[str, str]:
    """The two factors at step p in index notation, as stored (a transposed one swapped)."""
    lead = "b, " if layout.batch else ""
    left = f"{a}[{lead}p, r]" if layout.kind == "trans_a" else f"{a}[{lead}r, p]"
    right = f"{b}[{lead}c, p]" if layout.kind == "trans_b" else f"{b}[{lead}p, c]"
    return left, right


def _describe(rng: random.Random, register: str, layout: Layout, names: tuple[str, str, str],
              dtype: str, epilogue: Epilogue, value: str, launch: tuple[str, str]) -> str:
    """The product in one register."""
    (a, b, out), (m, k, n) = names, layout.sizes
    a_words, b_words, out_words = _shapes(layout)
    words = epilogue.words.format(c=value)
    if register in ("pytorch", "module"):
        constant = ("alpha", value) if register == "module" and epilogue.tag == "scale" else None
        expression = epilogue.torch.format(e=_torch_product(layout, a, b),
                                           c="self.alpha" if constant else value)
        if register == "module":
            return model_problem(rng, Problem(
                (a, b), f"{a} ({dtype}, shape {a_words}), {b} ({dtype}, shape {b_words})",
                f"{out} ({dtype}, shape {out_words})", out, *launch,
                (*layout.lead(), m, k, n), expression, f"the matrix product of {a} and {b}"
                f"{words}", constant, (a_words, b_words), out_words))
        return (f"Compute what the PyTorch expression `{expression}` gives for the inputs {a} "
                f"({dtype}, shape {a_words}), {b} ({dtype}, shape {b_words}), into {out} "
                f"({dtype}, shape {out_words}); every tensor is contiguous and row-major, and "
                "the sizes are int32 arguments. One thread per output element.")
    stored = {"trans_a": f"; {a} is stored transposed ({a_words})",
              "trans_b": f"; {b} is stored transposed ({b_words})"}.get(layout.kind, "")
    if register == "docstring":
        return (f'"""Matrix product of {a} ({a_words}) and {b} ({b_words}){words}, {dtype}, '
                f'into {out} ({out_words}){stored}."""')
    if register == "terse":
        return (f"{out} = {a} @ {b}{words}; {DTYPES[dtype].short}; [{a_words}] x [{b_words}] -> "
                f"[{out_words}]{stored}; 1 thread / output")
    at = "[b, r, c]" if layout.batch else "[r, c]"
    left, right = _formula(layout, a, b)
    return (f"{out}{at} = sum over p < {k} of {left} * {right}{words}, for every r < {m}, "
            f"c < {n}"
            f"{', b < ' + layout.batch if layout.batch else ''}; row-major {dtype} arrays "
            f"{a} ({a_words}), {b} ({b_words}), {out} ({out_words}){stored}.")


def _cases(rng: random.Random, batched: bool) -> list[list[int]]:
    """(batch,) M, K, N per case: ones, a small ragged one, one of several blocks whose three
    sizes differ (a kernel that swaps two of them fails)."""
    cases = [[1, 1, 1], [rng.randint(2, 9), rng.randint(2, 9), rng.randint(2, 9)],
             [rng.randint(33, 70), rng.randint(40, 130), rng.choice((129, 257))]]
    if batched:
        return [[1, *cases[0]], [rng.randint(2, 4), *cases[1]], [3, *cases[2][:2], 65]]
    return cases


def mat_product(rng: random.Random, tag: str) -> Candidate:
    """out = A @ B (a layout, an epilogue), one thread per output element."""
    dtype = rng.choice(("float32", "float32", "float16", "bfloat16"))
    kind = rng.choice(("plain", "plain", "trans_a", "trans_b", "batched"))
    layout = Layout(kind, rng.choice(SIZES), rng.choice(BATCHES) if kind == "batched" else "")
    register = rng.choices(REGISTERS, weights=REGISTER_WEIGHTS)[0]
    epilogue = rng.choice([e for e in EPILOGUES
                           if e.tag or register not in ("pytorch", "module")])
    value = rng.choice(FLOAT_VALUES)
    a, b = rng.choice(OPERANDS)
    names = (a, b, rng.choice([o for o in OUTS if o not in layout.sizes]))
    block = str(rng.choice((64, 128, 256)))
    short = {"plain": "", "trans_a": "_ta", "trans_b": "_tb", "batched": "_bmm"}[kind]
    entry = f"mm{short}_{epilogue.tag or 'plain'}_{DTYPES[dtype].short}_{tag}"
    sizes = [*layout.lead(), *layout.sizes]
    args = [Arg(a, "in", dtype, layout.a_shape(), "normal"),
            Arg(b, "in", dtype, layout.b_shape(), "normal"),
            Arg(names[2], "out", dtype, layout.out_shape()),
            *[Arg(s, "scalar", "int32", value=s) for s in sizes]]
    grid = f"cdiv({' * '.join(layout.out_shape())}, {block})"
    cases = [dict(zip(sizes, values, strict=True)) for values in _cases(rng, bool(layout.batch))]
    traits = {"register": register, "shape": "3d" if layout.batch else "2d", "dtype": dtype,
              "out_dtype": dtype, "capped": False, "scalar": False, "spelled": True,
              "launch": "flat"}
    return Candidate("mat_product", 2, entry,
                     _describe(rng, register, layout, names, dtype, epilogue, value,
                               (grid, block)),
                     _kernel(entry, args, layout, names, dtype,
                             epilogue.cxx.format(c=value)),
                     _reference(entry, layout, names, dtype, epilogue, value), args, (grid,),
                     (block,), cases, extra={"traits": traits},
                     tolerance=SUM_TOLERANCE if dtype == "float32" else None)
