"""A KernelBench problem written as a task folder: the spec (arguments from get_inputs, the
output from forward's expression, scaled-down verify cases, the problem's own sizes as the
[bench] case), a reference that runs the problem's Model on the host, and the problem file
itself (problem.py, run only by that reference, under verify's rules)."""

from __future__ import annotations

import ast
import json
import math
import re
from pathlib import Path
from typing import Any

from app.assist.tasks.forward_shapes import ShapeReader
from app.assist.tasks.kernelbench import (
    MAX_CASE_ELEMENTS,
    MAX_PROBLEM_BYTES,
    MEDIUM_SIZES,
    SMALL_SIZES,
    Problem,
    Refused,
    attributes_of,
    constants_of,
    function_named,
    init_inputs_of,
    inputs_of,
    model_class,
    refuse_weights,
    returned_expression,
)
from app.base.fsutil import NotAFile, atomic_write_text, read_regular
from app.spec.expr import evaluate
from app.spec.expr import names as expression_names
from app.spec.model import SpecError, parse_spec_text

LEVEL_FOLDER = re.compile(r"level\s*_?([0-9]+)", re.IGNORECASE)
BLOCK = 256
INT32_MAX = (1 << 31) - 1
# Larger than two blocks of BLOCK threads (primes, so no size is a multiple of the block).
LARGE_SIZES = (1031, 523)
TOO_DEEP = ("{name} has expressions too deeply nested to read: write the problem with plain "
            "expressions (KernelBench problems have no such nesting)")


def _level(path: Path) -> int | None:
    """The level a KernelBench path names (its folder level1, level2, ...), if any."""
    for part in reversed(path.parts[:-1]):
        match = LEVEL_FOLDER.fullmatch(part)
        if match:
            return int(match.group(1))
    return None


def _doc(model: ast.ClassDef) -> str:
    """The Model's docstring, on one line."""
    return " ".join((ast.get_docstring(model) or "").split())


def read_source(path: Path) -> str:
    """The problem file's text: a regular file of at most MAX_PROBLEM_BYTES, UTF-8 (a BOM is
    fine). A FIFO or a device such as /dev/zero is refused instead of hanging or reading
    without end (fsutil.read_regular)."""
    try:
        raw = read_regular(path, MAX_PROBLEM_BYTES)
    except NotAFile as error:
        raise Refused(f"{error}: give a KernelBench problem's .py file (at most "
                      f"{MAX_PROBLEM_BYTES >> 10} KiB)") from None
    except OSError as error:
        raise Refused(f"cannot read {path}: {error.strerror or error}") from None
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise Refused(f"{path.name} is not UTF-8 text: {error}") from None


def read_problem(path: Path, source: str | None = None) -> Problem:
    """Read a problem file as text; Refused says why it does not map."""
    level = _level(path)
    if level is not None and level != 1:
        raise Refused(f"{path.name} is a level-{level} problem (fused operators or whole "
                      "models): only level-1 problems map to a task")
    text = read_source(path) if source is None else source
    try:
        tree = ast.parse(text, filename=path.name)
    except (SyntaxError, ValueError) as error:
        raise Refused(f"{path.name} is not Python that can be read: {error}") from None
    except (RecursionError, MemoryError):
        raise Refused(TOO_DEEP.format(name=path.name)) from None
    try:
        return _problem(path.stem, tree)
    except (RecursionError, MemoryError):
        raise Refused(TOO_DEEP.format(name=path.name)) from None


def _problem(stem: str, tree: ast.Module) -> Problem:
    """The parts of a parsed problem."""
    model = model_class(tree)
    refuse_weights(model)
    forward = function_named(model, "forward")
    returned = returned_expression(forward)
    constants = constants_of(tree)
    inputs = inputs_of(tree, forward, constants)
    init_inputs = init_inputs_of(tree, constants)
    shape = ShapeReader(inputs, attributes_of(model, init_inputs), constants).shape(returned)
    if shape is None:
        raise Refused("forward returns a number, not a tensor")
    sizes = {n: constants[n] for t in inputs for d in t.shape for n in expression_names(d)}
    _check_sizes(sizes, [t.name for t in inputs], [t.shape for t in inputs] + [shape.dims])
    passed = {n.id for n in ast.walk(function_named(tree, "get_init_inputs"))
              if isinstance(n, ast.Name)}
    values = attributes_of(model, init_inputs)
    return Problem(stem, _doc(model), _with_values(returned, values), inputs, sizes, init_inputs,
                   shape.dims, shape.dtype, shape.summed, frozenset(passed & set(sizes)))


def _check_sizes(sizes: dict[str, Any], params: list[str],
                 shapes: list[tuple[str, ...]]) -> None:
    """Sizes are the kernel's int32 scalars and every dim must have elements: refuse the rest
    (and forward parameters named like a size, which would be two arguments of one name)."""
    for name, value in sizes.items():
        if isinstance(value, bool) or not isinstance(value, int):
            raise Refused(f"the size {name} = {value!r} is not a whole number")
        if not 0 < value <= INT32_MAX:
            raise Refused(f"the size {name} = {value} is not a positive int32 (1 to {INT32_MAX})")
    taken = set(params) & set(sizes)
    if taken:
        raise Refused(f"forward's parameter `{sorted(taken)[0]}` has the name of a size "
                      "constant: rename one of them in the problem file")
    for dims in shapes:
        for dim in dims:
            if int(evaluate(dim, sizes)) <= 0:
                raise Refused(f"the dim `{dim}` is {int(evaluate(dim, sizes))} at the problem's "
                              "sizes: every dim must be at least 1")


class _Substitute(ast.NodeTransformer):
    """Replaces self.attr by its value, so the description shows numbers, not attributes."""

    def __init__(self, values: dict[str, Any]) -> None:
        """Know the Model's attribute values."""
        self.values = values

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        """self.attr with a known value becomes that value."""
        if isinstance(node.value, ast.Name) and node.value.id == "self" and isinstance(
                self.values.get(node.attr), int | float | bool):
            return ast.Constant(self.values[node.attr])
        return self.generic_visit(node)


def _with_values(expression: ast.expr, values: dict[str, Any]) -> str:
    """The returned expression as text, with the Model's attributes replaced by values."""
    return ast.unparse(_Substitute(values).visit(ast.parse(ast.unparse(expression), mode="eval")))


def task_name(stem: str) -> str:
    """An entry name from the file's stem: '19_ReLU' gives 'kb_19_relu'."""
    return "kb_" + re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_")


def _elements(dims: tuple[str, ...], case: dict[str, int]) -> int:
    """Elements of a shape in a case."""
    return math.prod(int(evaluate(d, case)) for d in dims)


def _fits(problem: Problem, case: dict[str, int]) -> bool:
    """Whether every buffer of a case stays within MAX_CASE_ELEMENTS."""
    shapes = [t.shape for t in problem.inputs] + [problem.output_shape]
    return all(0 < _elements(dims, case) <= MAX_CASE_ELEMENTS for dims in shapes)


def _scaled(problem: Problem, wanted: tuple[int, ...]) -> dict[str, int]:
    """A case with each size variable at its wanted value (never above the problem's), halved
    from the largest until every buffer fits."""
    case = {name: value if name in problem.fixed else min(value, wanted[i % len(wanted)])
            for i, (name, value) in enumerate(problem.sizes.items())}
    free = [n for n in case if n not in problem.fixed]
    for _attempt in range(64):
        if _fits(problem, case):
            return case
        if not free:
            break
        largest = max(free, key=lambda n: case[n])
        case[largest] = max(1, case[largest] // 2)
    raise Refused("no small case of this problem fits in memory for verification")


def cases(problem: Problem) -> list[dict[str, int]]:
    """Verify cases: one with small prime sizes, one medium (distinct sizes, so swapped
    indices show), and, where those launch one block only, one larger than two blocks (so a
    kernel that handles only the first block fails); sizes passed to the Model as init inputs
    keep their value."""
    found: list[dict[str, int]] = []
    for wanted in (SMALL_SIZES, MEDIUM_SIZES):
        case = _scaled(problem, wanted)
        if case not in found:
            found.append(case)
    outputs = max(_elements(problem.output_shape, case) for case in found)
    if outputs <= 2 * BLOCK < _elements(problem.output_shape, problem.sizes):
        large = _scaled(problem, LARGE_SIZES)
        if _elements(problem.output_shape, large) > outputs:
            found.append(large)
    return found


def _toml(value: Any) -> str:
    """A TOML value (strings, numbers, lists)."""
    return json.dumps(value)


def _arg(name: str, kind: str, dtype: str, shape: tuple[str, ...] = (),
         init: str = "", value: str = "") -> list[str]:
    """One [[arg]] table."""
    lines = ["[[arg]]", f"name = {_toml(name)}", f"kind = {_toml(kind)}",
             f"dtype = {_toml(dtype)}"]
    lines += [f"shape = {_toml(list(shape))}"] if shape else [f"value = {_toml(value)}"]
    return lines + ([f"init = {_toml(init)}"] if init else []) + [""]


def describe(problem: Problem, name: str) -> str:
    """The task's description, in words."""
    inputs = ", ".join(f"{t.name} ({t.dtype}, shape {' x '.join(t.shape)})"
                       for t in problem.inputs)
    count = " * ".join(problem.output_shape)
    return (f"KernelBench level-1 problem {problem.stem}: {problem.doc} Compute what the "
            f"PyTorch expression `{problem.returned}` gives for the inputs {inputs}, into out "
            f"({problem.output_dtype}, shape {' x '.join(problem.output_shape)}); every tensor "
            f"is contiguous and row-major, and the sizes are int32 arguments. The launch has "
            f"one thread per output element: grid cdiv({count}, {BLOCK}), block {BLOCK}.")


def spec_text(problem: Problem, name: str) -> str:
    """The task's spec."""
    count = " * ".join(problem.output_shape)
    lines = [f"# Imported from the KernelBench problem {problem.stem}.py by `kernel-studio "
             "import kernelbench`.", "", "[task]",
             f"description = {_toml(describe(problem, name))}", "level = 1",
             'tags = ["kernelbench"]', "", "[kernel]", f'source = "{name}.cu"',
             f'entry = "{name}"', "options = []", ""]
    for tensor in problem.inputs:
        lines += _arg(tensor.name, "in", tensor.dtype, tensor.shape, tensor.init)
    lines += _arg("out", "out", problem.output_dtype, problem.output_shape)
    for size in problem.sizes:
        lines += _arg(size, "scalar", "int32", value=size)
    lines += ["[launch]", f'grid = ["cdiv({count}, {BLOCK})"]', f'block = ["{BLOCK}"]',
              'shared_bytes = "0"', "", "[reference]", f'python = "{name}_ref.py"', "",
              "[verify]", "cases = [" + ", ".join(
                  "{ " + ", ".join(f"{k} = {v}" for k, v in c.items()) + " }"
                  for c in cases(problem)) + "]", "seeds = 2"]
    if problem.exact and problem.output_dtype.startswith("float"):
        lines += ["# Sums of many terms: their order differs between the kernel and PyTorch.",
                  "rtol = 1e-4", "atol = 1e-4"]
    bench = ", ".join(f"{k} = {v}" for k, v in problem.sizes.items())
    return "\n".join(lines + ["", "[bench]", f"case = {{ {bench} }}"]) + "\n"


REFERENCE = '''"""Reference for the KernelBench problem {stem}: runs its Model on the host.

The problem file (problem.py beside this one) is someone else's code: it runs only here, when
verify runs this reference, inside verify's sandbox (or, where no sandbox can be had, only once
the user trusts this folder).
"""

import importlib.util
from pathlib import Path

import numpy as np
import torch

INIT_INPUTS = {init}
INPUTS = {inputs}


def built_model():
    """The problem's Model, built with its init inputs."""
    location = Path(__file__).with_name("problem.py")
    spec = importlib.util.spec_from_file_location("kernelbench_problem", location)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Model(*INIT_INPUTS)


def reference({params}):
    """out = Model(*INIT_INPUTS)(*inputs), computed by PyTorch on the CPU."""
    tensors = [torch.from_numpy(np.ascontiguousarray(value)) for value in ({arrays},)]
    with torch.no_grad():
        out = built_model()(*tensors)
    return {{"out": out.detach().cpu().numpy()}}
'''


def reference_text(problem: Problem) -> str:
    """The reference file."""
    names = [t.name for t in problem.inputs]
    return REFERENCE.format(stem=problem.stem, init=repr(problem.init_inputs),
                            inputs=repr(names), params=", ".join(names + list(problem.sizes)),
                            arrays=", ".join(names))


def _checked_spec(problem: Problem, name: str, folder: Path) -> str:
    """The spec's text, once the app's own spec parser accepts it: a task that verify would
    reject is never written."""
    try:
        text = spec_text(problem, name)
        parse_spec_text(text, folder, folder / f"{name}.toml", check_files=False)
    except SpecError as error:
        raise Refused(f"the task's spec would not load: {error}") from None
    except (RecursionError, MemoryError):
        raise Refused(TOO_DEEP.format(name=f"{problem.stem}.py")) from None
    return text


def write_task(problem: Problem, source: str, out_dir: Path, force: bool = False) -> Path:
    """Write the task folder (out_dir/<name>/); the spec's path. An existing folder holds the
    user's edits, so it is overwritten only with force."""
    name = task_name(problem.stem)
    folder = out_dir / name
    spec = _checked_spec(problem, name, folder)
    if folder.exists() and not force:
        raise Refused(f"the task folder {folder} exists already (it may hold your edits): pass "
                      "--force to overwrite it, or choose another --out")
    try:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(folder / "problem.py", source)
        atomic_write_text(folder / f"{name}_ref.py", reference_text(problem))
        atomic_write_text(folder / f"{name}.toml", spec)
    except OSError as error:
        raise Refused(f"cannot write the task folder {folder}: {error.strerror or error}: "
                      "choose another --out") from None
    return folder / f"{name}.toml"


def import_problem(path: Path, out_dir: Path, force: bool = False) -> Path:
    """Read a problem file (never running it) and write its task; Refused says why not."""
    source = read_source(path)
    return write_task(read_problem(path, source), source, out_dir, force)
