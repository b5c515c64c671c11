"""One operation told in the registers users write in (issue 27): the project's own formulas,
a PyTorch expression or forward as KernelBench states problems (its inputs' shapes given as
`batch_size x dim`), a one-line docstring, an engineer's terse note, and an nn.Module framed in
the sentences `import kernelbench` frames an imported problem in. The kernel and spec
are the same whatever the register: the model learns that they all ask for the same thing,
and that a `batch_size x dim` tensor has batch_size * dim elements.

The words here are our own; no register names KernelBench, and the guard
(app.assist.teach.kbguard) refuses any description that copies one of its problems.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from app.assist.tasks.kernelbench_folder import built_sentence, framing
from app.assist.teach.candidate import Arg
from app.assist.teach.ops import Op

REGISTERS = ("project", "pytorch", "docstring", "terse", "module")
# How often each register is drawn: an nn.Module's forward, in the words `import kernelbench`
# gives an imported problem, the most (what the adapter knew least, and what an imported
# problem looks like), then PyTorch's expressions and the project's own (the suite speaks it).
REGISTER_WEIGHTS = (3, 3, 2, 2, 5)
SHORT_DTYPES = {"float32": ("f32", "fp32", "float"), "float16": ("f16", "fp16", "half"),
                "bfloat16": ("bf16", "bfloat16"), "int32": ("i32", "int32", "int")}
INDEX_LETTERS = ("i", "j", "k")


@dataclass(frozen=True)
class Told:
    """What a description says: the operation, its arguments and how it is laid out."""

    op: Op
    ins: tuple[str, ...]
    out: str
    scalar: Arg | None
    src: str                 # the inputs' dtype
    dst: str                 # the output's dtype
    dims: tuple[str, ...]    # size names, outermost first
    pitch: str               # the input rows' pitch (a size name), or '' when contiguous
    grid: tuple[str, ...]
    block: str
    capped: bool
    spelled: bool            # whether the element count is spelled out
    # (name, value) of a scalar the kernel has as a literal: a Model's constructor argument
    constant: tuple[str, str] | None = None

    @property
    def total(self) -> str:
        """The element count as a product of the dims."""
        return " * ".join(self.dims)

    def fill(self, template: str, names: tuple[str, ...]) -> str:
        """An operation's template with its inputs (and scalar) by these names."""
        values = dict(zip("ab", names, strict=False))
        if self.scalar is not None:
            values["s"] = self.scalar.name
        return template.format(**values)


def _shape_words(told: Told) -> str:
    """'batch_size x dim': the logical shape (a strided input's pitch is told apart)."""
    return " x ".join(told.dims)


def _dtype_clause(told: Told) -> str:
    """The types in words."""
    if told.src != told.dst:
        return f"{told.src} inputs, a {told.dst} output (compute in float32)"
    if told.src in ("float16", "bfloat16"):
        return f"{told.src} data, computed in float32"
    return f"{told.src} data"


def _scalar_clause(told: Told) -> str:
    """' alpha is a float32 scalar argument.' or ''."""
    if told.scalar is None:
        return ""
    return f" {told.scalar.name} is a {told.scalar.dtype} scalar argument."


def _launch_clause(rng: random.Random, told: Told) -> str:
    """The launch in words: capped (a grid-stride loop), or one thread per element."""
    if told.capped:
        return rng.choice((f" The grid is capped ({told.grid[0]} blocks of {told.block}): "
                           "each thread loops over the elements with a grid-sized stride.",
                           f" The launch caps the blocks at {told.grid[0]}: use a grid-stride "
                           "loop."))
    if len(told.grid) > 1:
        return rng.choice(("", f" A block row per {told.dims[0]} index: grid "
                               f"({', '.join(told.grid)}), block {told.block}."))
    return rng.choice(("", f" One thread per output element: grid {told.grid[0]}, block "
                           f"{told.block}."))


def _count_clause(rng: random.Random, told: Told) -> str:
    """The element count, when this description spells it out."""
    if not told.spelled or len(told.dims) == 1:
        return ""
    return rng.choice((f" ({told.total} elements in all: one flat index covers them)",
                       f"; there are {told.total} elements",
                       f" (flatten: {told.total} elements, row-major)"))


def project(rng: random.Random, told: Told) -> str:
    """`out[i, j] = |x[i, j]| for every i < rows, j < cols ...`: the project's notation."""
    letters = INDEX_LETTERS[:len(told.dims)]
    at = "[" + ", ".join(letters) + "]"
    formula = told.fill(told.op.formula, tuple(f"{n}{at}" for n in told.ins))
    bounds = ", ".join(f"{letter} < {dim}" for letter, dim in zip(letters, told.dims,
                                                                   strict=True))
    text = f"{told.out}{at} = {formula} for every {bounds}"
    if len(told.dims) > 1:
        text += f", row-major {_shape_words(told)} arrays"
    if told.pitch:
        text += (f"; the rows of {told.ins[0]} lie {told.pitch} elements apart ({told.pitch} "
                 f">= {told.dims[-1]}), {told.out} is contiguous")
    text += _count_clause(rng, told) + f", {_dtype_clause(told)}."
    return text + _scalar_clause(told) + _launch_clause(rng, told)


def _torch_expression(rng: random.Random, told: Told) -> str:
    """The PyTorch expression (a strided input is sliced to its first columns)."""
    names = told.ins
    if told.pitch:
        names = (f"{told.ins[0]}[:, :{told.dims[-1]}]", *told.ins[1:])
    return told.fill(rng.choice(told.op.torch), names)


def _tensor_words(told: Told, name: str, first: bool) -> str:
    """'x (float32, shape batch_size x dim)'."""
    shape = _shape_words(told)
    if told.pitch and first:
        shape = f"{told.dims[0]} x {told.pitch}"
    return f"{name} ({told.src}, shape {shape})"


def pytorch(rng: random.Random, told: Told) -> str:
    """The expression as a PyTorch problem states it, with its inputs' shapes."""
    expression = _torch_expression(rng, told)
    inputs = ", ".join(_tensor_words(told, n, i == 0) for i, n in enumerate(told.ins))
    output = f"{told.out} ({told.dst}, shape {_shape_words(told)})"
    if rng.random() < 0.5:
        layout = "tensors are row-major" if told.pitch else \
            "every tensor is contiguous and row-major"
        verb = rng.choice(("Compute", "Evaluate", "Implement"))
        text = (f"{verb} what the PyTorch expression `{expression}` gives for the inputs "
                f"{inputs}, into {output}; {layout}, and the sizes are int32 arguments.")
    else:
        params = ", ".join(told.ins)
        made = rng.choice(("torch.randn", "torch.rand"))
        text = (f"forward(self, {params}) returns `{expression}`, where each input is "
                f"{made}({', '.join((told.dims[0], told.pitch) if told.pitch else told.dims)})"
                f" ({told.src}); write the result to {output}.")
    if rng.random() < 0.5:  # a problem often opens with what its model does, in a sentence
        words = told.fill(told.op.words, told.ins)
        text = f"{words[0].upper()}{words[1:]}, elementwise. {text}"
    if told.pitch:
        text += f" {told.ins[0]}'s rows are {told.pitch} elements long; only the first " \
                f"{told.dims[-1]} are used."
    if told.src in ("float16", "bfloat16"):
        text += " Compute in float32."
    if told.spelled and len(told.dims) > 1:
        text += f" The output has {told.total} elements."
    return text + _scalar_clause(told) + _launch_clause(rng, told)


def docstring(rng: random.Random, told: Told) -> str:
    """A one-line docstring: what it computes, on what."""
    text = told.fill(told.op.words, told.ins)
    if told.pitch:
        text += f" over the first {told.dims[-1]} columns of each row"
    pitch = f", row pitch {told.pitch}" if told.pitch else ""
    extra = rng.choice(("", " Elementwise.", " One thread per element.")) if not told.capped \
        else rng.choice((" Grid-stride loop: the grid is capped.", " Capped grid, strided loop."))
    if told.spelled and len(told.dims) > 1:
        extra += f" {told.total} elements."
    scalar = f" ({told.scalar.name} is a scalar)" if told.scalar is not None else ""
    return (f'"""{text[0].upper()}{text[1:]} ({_shape_words(told)}, {told.src}{pitch}) into '
            f'{told.out}{scalar}.{extra}"""')


def terse(rng: random.Random, told: Told) -> str:
    """An engineer's note: the formula, types and shape, abbreviated."""
    formula = told.fill(told.op.formula, told.ins)
    src = rng.choice(SHORT_DTYPES[told.src])
    types = src if told.src == told.dst else f"{src} -> {rng.choice(SHORT_DTYPES[told.dst])}"
    shape = rng.choice(("[" + ", ".join(told.dims) + "]", " x ".join(told.dims)))
    parts = [f"{told.out} = {formula}", types, shape]
    if told.spelled and len(told.dims) > 1:
        parts.append(f"numel = {told.total}")
    if told.pitch:
        parts.append(f"{told.ins[0]} row stride {told.pitch} (>= {told.dims[-1]}), "
                     f"{told.out} dense")
    if told.scalar is not None:
        parts.append(f"{told.scalar.name} scalar")
    if told.capped:
        parts.append(rng.choice(("grid-stride loop", "capped grid, loop")))
    if told.src in ("float16", "bfloat16"):
        parts.append("fp32 math")
    return rng.choice(("; ", ", ", " | ")).join(parts)


def _forward_doc(params: tuple[str, ...], shapes: tuple[str, ...], out_shape: str,
                 words: str) -> list[str]:
    """forward's docstring with its arguments and result, as problem files often have."""
    lines = ['        """', f"        Computes {words}.", "", "        Args:"]
    lines += [f"            {p} (torch.Tensor): input of shape ({s.replace(' x ', ', ')})."
              for p, s in zip(params, shapes, strict=True)]
    return lines + ["", "        Returns:",
                    f"            torch.Tensor: the result, of shape "
                    f"({out_shape.replace(' x ', ', ')}).", '        """']


def model_source(rng: random.Random, problem: Problem, defaulted: bool = True) -> str:
    """An nn.Module whose forward returns the expression; a constant is its constructor's
    argument (`self.alpha` in the expression), with its value as the default when `defaulted`
    (else the description says what it is built with)."""
    params, words, constant = problem.params, problem.words, problem.constant
    hinted = rng.random() < 0.6
    listed = ", ".join(f"{p}: torch.Tensor" if hinted else p for p in params)
    lines = ["class Model(nn.Module):"]
    if rng.random() < 0.6:
        lines += ['    """', f"    Computes {words}.", '    """']
    extra = ""
    if constant is not None:
        kind = "float" if "." in constant[1] else "int"
        default = f" = {constant[1]}" if hinted else f"={constant[1]}"
        extra = (f", {constant[0]}: {kind}" if hinted else f", {constant[0]}") + \
            (default if defaulted else "")
    lines += [f"    def __init__(self{extra}):",
              "        " + rng.choice(("super(Model, self).__init__()", "super().__init__()"))]
    if constant is not None:
        lines.append(f"        self.{constant[0]} = {constant[0]}")
    lines += ["", f"    def forward(self, {listed}){' -> torch.Tensor' if hinted else ''}:"]
    if problem.shapes and rng.random() < 0.5:
        lines += _forward_doc(params, problem.shapes, problem.out_shape, words)
    lines.append(f"        return {problem.expression}")
    return "\n".join(lines)


@dataclass(frozen=True)
class Problem:
    """What a problem told as a Module says: its forward's parameters, the buffers in words,
    the output's name, the launch, the sizes, the expression forward returns and its words."""

    params: tuple[str, ...]
    inputs: str
    output: str
    out: str
    grid: str
    block: str
    sizes: tuple[str, ...]
    expression: str
    words: str
    constant: tuple[str, str] | None = None
    shapes: tuple[str, ...] = ()   # each parameter's shape in words, for forward's docstring
    out_shape: str = ""


def model_problem(rng: random.Random, problem: Problem) -> str:
    """A problem told as `import kernelbench` tells one: a sentence on what the model does (or
    none), the framing of inputs, outputs, sizes and launch, then the Model's source."""
    words = problem.words
    opening = rng.choice(("", f"{words[0].upper()}{words[1:]}. ",
                          f"A model that computes {words}. "))
    # A constant comes as problem files give most: an argument of get_init_inputs, said in the
    # description; or as the constructor's default.
    built, defaulted = "", True
    if problem.constant is not None and rng.random() < 0.6:
        name, value = problem.constant
        built, defaulted = built_sentence([name], [f"{name} = {value}"]), False
    text = framing(problem.inputs, problem.output, problem.out, problem.grid, problem.block,
                   sizes=problem.sizes, built=built)
    return opening + text + model_source(rng, problem, defaulted)


def module(rng: random.Random, told: Told) -> str:
    """The operation as an nn.Module's forward, framed as an imported problem is (its tensors
    contiguous, one thread per element: the shaped family draws such a launch for it)."""
    expression = told.fill(rng.choice(told.op.torch), told.ins)
    inputs = ", ".join(f"{n} ({told.src}, shape {_shape_words(told)})" for n in told.ins)
    output = f"{told.out} ({told.dst}, shape {_shape_words(told)})"
    words = told.fill(told.op.words, told.ins) + ", elementwise"
    shape = _shape_words(told)
    return model_problem(rng, Problem(told.ins, inputs, output, told.out, told.grid[0],
                                      told.block, told.dims, expression, words, told.constant,
                                      (shape,) * len(told.ins), shape))


TELLERS = {"project": project, "pytorch": pytorch, "docstring": docstring, "terse": terse,
           "module": module}


def describe(register: str, rng: random.Random, told: Told) -> str:
    """The description of told in that register."""
    return TELLERS[register](rng, told)
