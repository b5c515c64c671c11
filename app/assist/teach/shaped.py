"""Level-1 families over tensors of one to three dims and over strided rows (issue 27), each
example told in one of the registers of app.assist.teach.registers.

What they teach that the 1-D families do not: a `batch_size x dim` tensor has batch_size * dim
elements, so one flat index runs to the product of the dims (the kernel names that product);
a 2-D launch may give each row its own block row; an input's rows may lie a pitch apart
(row r starts at r * pitch); argument names and orders vary; grids may be capped (a
grid-stride loop). Nothing here is trusted: the builder verifies and spec-checks every one.
"""

from __future__ import annotations

import random
from dataclasses import replace

from app.assist.prompting.candidates import signature
from app.assist.teach.candidate import INPUTS, OUTPUTS, Arg, Candidate
from app.assist.teach.dtypes import DTYPES, REF_HEADER, includes, numpy_out
from app.assist.teach.ops import FLOAT_OPS, INT_OPS, Op
from app.assist.teach.registers import REGISTER_WEIGHTS, REGISTERS, Told, describe

DIMS = {
    1: (("n",), ("size",), ("numel",), ("length",), ("count",), ("N",)),
    2: (("batch_size", "dim"), ("batch_size", "dim"), ("rows", "cols"), ("m", "n"),
        ("batch", "features"), ("N", "D"), ("num_rows", "row_len"), ("B", "H")),
    3: (("batch_size", "seq_len", "hidden"), ("batch", "channels", "length"), ("B", "T", "C"),
        ("depth", "height", "width"), ("N", "C", "L"), ("batch_size", "dim1", "dim2")),
}
PITCHED = (("rows", "cols", "pitch"), ("m", "n", "ld"), ("batch_size", "dim", "row_stride"),
           ("num_rows", "row_len", "stride"), ("N", "D", "ldx"))
SCALARS = ("alpha", "beta", "scale", "s", "t", "w", "k")
FLOAT_VALUES = ("0.5", "0.25", "1.5", "2.0", "-0.75", "3.0")
# Locals the kernels use: no argument may take these names.
LOCALS = frozenset({"i", "row", "col", "total"})
BLOCKS = (64, 128, 256, 512)
CAPPED_BLOCKS = (64, 128, 256)
CAPS = (8, 16, 32)
# Argument orders: where the output, the scalar and the sizes go relative to the inputs.
ORDERS = ("ios", "ios", "ois", "iso", "sio")


def _dtypes(rng: random.Random) -> tuple[str, str]:
    """(inputs' dtype, output's): mostly alike; 16-bit inputs may widen to float32."""
    src = rng.choice(("float32", "float32", "float16", "bfloat16", "int32"))
    if src in ("float16", "bfloat16") and rng.random() < 0.25:
        return src, "float32"
    return src, src


def _names(rng: random.Random, count: int, sizes: tuple[str, ...], register: str
           ) -> tuple[tuple[str, ...], str]:
    """Input and output names that clash with no size or local (a PyTorch problem's output
    is mostly `out`)."""
    taken = set(sizes) | LOCALS
    while True:
        ins = tuple(rng.choice(INPUTS)[:count])
        out = "out" if register == "pytorch" and rng.random() < 0.7 else rng.choice(OUTPUTS)
        if not (set(ins) | {out}) & taken and out not in ins:
            return ins, out


def _scalar(rng: random.Random, op: Op, taken: set[str]) -> Arg | None:
    """The operation's scalar argument, with a fixed value."""
    if not op.scalar:
        return None
    name = rng.choice([s for s in SCALARS if s not in taken])
    if op.integer:
        return Arg(name, "scalar", "int32", value=str(rng.randint(2, 9)))
    return Arg(name, "scalar", "float32", value=rng.choice(FLOAT_VALUES))


def _order(rng: random.Random, ins: list[Arg], out: Arg, scalar: Arg | None,
           sizes: list[Arg]) -> list[Arg]:
    """The arguments in one of ORDERS."""
    parts = {"i": ins, "o": [out], "s": ([scalar] if scalar else []) + sizes}
    order = rng.choice(ORDERS)
    if order == "iso" and scalar is not None:  # the scalar between the inputs and the output
        return ins + [scalar, out] + sizes
    return [a for key in order for a in parts[key]]


def _cases(rng: random.Random, rank: int, pitched: bool) -> list[list[int]]:
    """Sizes per case, outermost first: one element, a small ragged one, one of several
    blocks (more than the largest capped grid covers, 32 x 256, so its loop must run); the
    dims differ, so a kernel that stops at one of them fails."""
    if pitched:
        cols = rng.choice((129, 257))
        return [[1, 1, rng.randint(1, 4)], [rng.randint(2, 9), (c := rng.randint(2, 300)),
                                            c + rng.randint(1, 17)],
                [rng.randint(67, 160), cols, cols + rng.choice((3, 7, 64))]]
    if rank == 1:
        return [[1], [rng.randint(2, 999)], [rng.choice((10_001, 20_011, 65_537))]]
    if rank == 2:
        return [[1, 1], [rng.randint(2, 9), rng.randint(2, 300)],
                [rng.randint(67, 160), rng.choice((129, 257))]]
    return [[1, 1, 1], [2, 3, rng.randint(5, 40)],
            [rng.randint(6, 9), rng.randint(11, 17), rng.choice((129, 257))]]


def _launch(rng: random.Random, dims: tuple[str, ...], capped: bool, rows_grid: bool
            ) -> tuple[tuple[str, ...], str]:
    """(grid, block): a capped flat grid, a block row per outer index, or a flat grid."""
    total = " * ".join(dims)
    if capped:
        block = rng.choice(CAPPED_BLOCKS)
        return (f"min(cdiv({total}, {block}), {rng.choice(CAPS)})",), str(block)
    block = rng.choice(BLOCKS)
    if rows_grid:
        return (f"cdiv({dims[-1]}, {block})", dims[0]), str(block)
    return (f"cdiv({total}, {block})",), str(block)


def _loads(told: Told, index: str, pitched_index: str) -> tuple[str, ...]:
    """Each input's element as a float (or int) in C++."""
    to = DTYPES[told.src].to_float
    return tuple(to.format(v=f"{n}[{pitched_index if told.pitch and k == 0 else index}]")
                 for k, n in enumerate(told.ins))


def _store(told: Told, value: str) -> str:
    """A value rounded once to the output's type."""
    d = DTYPES[told.dst]
    return d.from_float.format(v=value) if d.floating else value


def _flat_body(rng: random.Random, told: Told) -> str:
    """One flat index over every element (a grid-stride loop when the grid is capped)."""
    rows = ""
    pitched = "i"
    if told.pitch:
        cols = told.dims[-1]
        rows = f"        int row = i / {cols};\n        int col = i % {cols};\n"
        pitched = f"row * {told.pitch} + col"
    value = told.fill(told.op.cxx, _loads(told, "i", pitched))
    inner = f"{rows}        {told.out}[i] = {_store(told, value)};\n"
    named = rng.random() < 0.6 or told.spelled
    note = (f"    // {' x '.join(told.dims)} elements, row-major: one flat index covers "
            "them all\n") if len(told.dims) > 1 and rng.random() < 0.5 else ""
    head = note + (f"    int total = {told.total};\n" if named else "")
    bound = "total" if named else told.total
    if told.capped:
        return (f"{head}    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < {bound};\n"
                f"         i += gridDim.x * blockDim.x) {{\n{inner}    }}\n")
    return (f"{head}    int i = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (i < {bound}) {{\n{inner}    }}\n")


def _rows_body(told: Told) -> str:
    """A block row per outer index (blockIdx.y), threads along the row."""
    outer, inner = told.dims
    pitched = f"row * {told.pitch} + col" if told.pitch else f"row * {inner} + col"
    value = told.fill(told.op.cxx, _loads(told, f"row * {inner} + col", pitched))
    return (f"    int row = blockIdx.y;\n    int col = blockIdx.x * blockDim.x + threadIdx.x;\n"
            f"    if (row < {outer} && col < {inner}) {{\n"
            f"        {told.out}[row * {inner} + col] = {_store(told, value)};\n    }}\n")


def _reference(entry: str, told: Told, params: list[str]) -> str:
    """The NumPy reference: inputs widened and shaped (a strided one sliced), the output in
    the spec's shape."""
    shape = ", ".join(told.dims)
    lines = []
    for k, name in enumerate(told.ins):
        if told.pitch and k == 0:
            lines.append(f"    {name.upper()}_ = widen({name}).reshape({told.dims[0]}, "
                         f"{told.pitch})[:, :{told.dims[-1]}]\n")
        else:
            lines.append(f"    {name.upper()}_ = widen({name}).reshape({shape})\n")
    values = {"a": f"{told.ins[0].upper()}_"}
    if len(told.ins) > 1:
        values["b"] = f"{told.ins[1].upper()}_"
    if told.scalar is not None:
        kind = "np.int64" if told.scalar.dtype == "int32" else "np.float32"
        lines.append(f"    S_ = {kind}({told.scalar.name})\n")
        values["s"] = "S_"
    expression = told.op.npy.format(**values)
    return (REF_HEADER.format(name=entry) + f"\ndef reference({', '.join(params)}):\n"
            + "".join(lines) + f"    return {{\"{told.out}\": ({expression}).reshape({shape})"
            f".astype({numpy_out(told.dst)})}}\n")


def _register(rng: random.Random, op: Op, pitched: bool) -> str:
    """A register for this operation: not PyTorch's or a Module's when that form is a
    KernelBench problem, and not a Module's for strided rows (an imported problem's tensors are
    contiguous)."""
    while True:
        register = rng.choices(REGISTERS, weights=REGISTER_WEIGHTS)[0]
        if register in ("pytorch", "module") and op.kernelbench:
            continue
        if not (register == "module" and pitched):
            return register


def _inlined(op: Op, scalar: Arg) -> Op:
    """The operation with its scalar as a literal (a Model's constructor argument, `self.alpha`
    in its PyTorch form): the kernel takes no scalar argument then."""
    value = scalar.value
    literal = value if op.integer else f"{value}f"
    return replace(op, cxx=op.cxx.replace("{s}", literal), npy=op.npy.replace("{s}", value),
                   torch=tuple(t.replace("{s}", f"self.{scalar.name}") for t in op.torch),
                   formula=op.formula.replace("{s}", value),
                   words=op.words.replace("{s}", value), scalar=False)


def _told(rng: random.Random, pitched: bool) -> tuple[Told, str]:
    """A drawn operation, layout, names, dtypes and launch, and its register."""
    src, dst = _dtypes(rng)
    ops = INT_OPS if src == "int32" else FLOAT_OPS
    op = rng.choice([o for o in ops if not pitched or o.arity == 1 or rng.random() < 0.5])
    rank = 2 if pitched else rng.choice((1, 2, 2, 3))
    sizes = rng.choice(PITCHED) if pitched else rng.choice(DIMS[rank])
    register = _register(rng, op, pitched)
    ins, out = _names(rng, op.arity, sizes, register)
    scalar = _scalar(rng, op, set(ins) | {out} | set(sizes))
    dims, pitch = (sizes[:2], sizes[2]) if pitched else (sizes, "")
    # A Module is told as an imported problem is: a constant in its constructor, one thread
    # per element, one dtype throughout.
    module = register == "module"
    constant = None
    if module and scalar is not None:
        op, constant, scalar = _inlined(op, scalar), (scalar.name, scalar.value), None
    capped = not module and rng.random() < 0.25
    rows_grid = rank == 2 and not capped and not module and rng.random() < 0.3
    grid, block = _launch(rng, dims, capped, rows_grid)
    told = Told(op, ins, out, scalar, src, src if module else dst, dims, pitch, grid, block,
                capped, rank > 1 and rng.random() < 0.5, constant)
    return told, register


def _candidate(rng: random.Random, tag: str, pitched: bool) -> Candidate:
    """One example of the shaped or strided family."""
    told, register = _told(rng, pitched)
    family = "strided_map" if pitched else "shaped_map"
    rank = "strided" if pitched else f"{len(told.dims)}d"
    entry = f"{told.op.tag}_{rank}_{DTYPES[told.src].short}_{tag}"
    in_shape = (told.dims[0], told.pitch) if pitched else told.dims
    init = "randint(-1000, 1000)" if told.src == "int32" else "normal"
    ins = [Arg(n, "in", told.src, in_shape if k == 0 else told.dims, init)
           for k, n in enumerate(told.ins)]
    sizes = [Arg(s, "scalar", "int32", value=s) for s in (*told.dims, *([told.pitch]
                                                                        if pitched else []))]
    args = _order(rng, ins, Arg(told.out, "out", told.dst, told.dims), told.scalar, sizes)
    body = _rows_body(told) if len(told.grid) > 1 else _flat_body(rng, told)
    kernel = f"{includes(told.src, told.dst)}{signature(entry, args)}\n{{\n{body}}}\n"
    params = [a.name for a in args if a.kind != "out"]
    names = [a.name for a in sizes]
    cases = [dict(zip(names, values, strict=True))
             for values in _cases(rng, len(told.dims), pitched)]
    traits = {"register": register, "op": told.op.tag, "shape": rank, "dtype": told.src,
              "out_dtype": told.dst, "capped": told.capped, "scalar": told.scalar is not None,
              "constant": told.constant is not None,
              "spelled": told.spelled, "launch": "rows" if len(told.grid) > 1 else "flat"}
    return Candidate(family, 1, entry, describe(register, rng, told), kernel,
                     _reference(entry, told, params), args, told.grid, (told.block,), cases,
                     extra={"traits": traits})


def shaped_map(rng: random.Random, tag: str) -> Candidate:
    """An elementwise operation over a 1-D, 2-D or 3-D tensor, in some register."""
    return _candidate(rng, tag, pitched=False)


def strided_map(rng: random.Random, tag: str) -> Candidate:
    """An elementwise operation over the rows of a matrix stored with a row pitch."""
    return _candidate(rng, tag, pitched=True)
