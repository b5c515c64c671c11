"""A KernelBench problem written as a task folder: the spec (get_inputs' tensors and the Model's
weights as `in` buffers, forward's outputs as `out` buffers, scaled-down verify cases, the
problem's own sizes as the [bench] case), a reference that loads the weights into the problem's
Model and runs its forward on the host, and the problem file itself (problem.py, run only by
that reference and by the import's probe, both under verify's rules: in the sandbox).

The file is first read as text (its sizes, forward's parameters); what its Model is (shapes,
dtypes, how each weight is drawn) is then learned by running it on torch's meta device inside
the sandbox (kernelbench_meta, kernelbench_probe), and written down by kernelbench_plan.
"""

from __future__ import annotations

import ast
import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from app.assist.tasks import kernelbench_runtime
from app.assist.tasks.kernelbench import MAX_PROBLEM_BYTES, Refused, function_named, model_class
from app.assist.tasks.kernelbench_meta import ask, ask_many
from app.assist.tasks.kernelbench_plan import (
    BLOCK,
    MAX_CASE_ELEMENTS,
    WEIGHT_ELEMENTS,
    Buffer,
    Plan,
    plan,
    tolerance,
)
from app.assist.tasks.kernelbench_sizes import Sizes, groups, sizes_of
from app.assist.tasks.suite import MAX_DESCRIPTION
from app.base.fsutil import NotAFile, atomic_write_text, read_regular
from app.spec.dtypes import lookup
from app.spec.model import SpecError, parse_spec_text

LEVEL_FOLDER = re.compile(r"level\s*_?([0-9]+)", re.IGNORECASE)
TOO_DEEP = ("{name} has expressions too deeply nested to read: write the problem with plain "
            "expressions (KernelBench problems have no such nesting)")
LISTED_WEIGHTS = 8
CLIPPED = "\n    ... (the rest is in problem.py)"


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


@dataclass
class Problem:
    """What the file says, read without running it: its name, level, the Model's docstring
    and source, forward's parameters, the sizes."""

    stem: str
    level: int
    doc: str
    model_source: str
    params: list[str]
    sizes: Sizes
    defaults: int = 0
    # get_init_inputs()'s arguments to Model, read as text: (the expression, its value where
    # the file gives it as a constant, else '')
    init: list[tuple[str, str]] = field(default_factory=list)


def read_problem(path: Path, source: str | None = None) -> Problem:
    """Read a problem file as text; Refused says why it is not a KernelBench problem."""
    text = read_source(path) if source is None else source
    try:
        tree = ast.parse(text, filename=path.name)
    except (SyntaxError, ValueError) as error:
        raise Refused(f"{path.name} is not Python that can be read: {error}") from None
    except (RecursionError, MemoryError):
        raise Refused(TOO_DEEP.format(name=path.name)) from None
    try:
        return _problem(path, tree, text)
    except (RecursionError, MemoryError):
        raise Refused(TOO_DEEP.format(name=path.name)) from None


def _problem(path: Path, tree: ast.Module, text: str) -> Problem:
    """The parts of a parsed problem."""
    model = model_class(tree)
    forward = function_named(model, "forward")
    if forward.args.vararg or forward.args.kwonlyargs:
        raise Refused("forward takes *args or keyword-only arguments: only named tensor "
                      "parameters map to buffers")
    source = ast.get_source_segment(text, model) or ast.unparse(model)
    return Problem(path.stem, _level(path) or 1, _doc(model), source,
                   [a.arg for a in forward.args.args[1:]], sizes_of(tree),
                   len(forward.args.defaults), init_arguments(tree))


def init_arguments(tree: ast.Module) -> list[tuple[str, str]]:
    """What get_init_inputs() returns, element by element, with each constant's value where the
    file sets it at module level (the Model is built with these, and its source alone does not
    say them: a pooling's kernel size, a reduction's dim); [] when it returns no list."""
    try:
        function = function_named(tree, "get_init_inputs")
    except Refused:
        return []
    returned = next((n.value for n in ast.walk(function) if isinstance(n, ast.Return)), None)
    if not isinstance(returned, ast.List | ast.Tuple):
        return []
    constants = _module_constants(tree)
    return [(ast.unparse(item), constants.get(item.id, "") if isinstance(item, ast.Name) else
             "") for item in returned.elts]


def _module_constants(tree: ast.Module) -> dict[str, str]:
    """Module-level `name = literal` (numbers, booleans, strings, None, tuples of them), as
    written."""
    found: dict[str, str] = {}
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and \
                isinstance(node.targets[0], ast.Name):
            try:
                ast.literal_eval(node.value)
            except (ValueError, TypeError, SyntaxError, RecursionError):
                found.pop(node.targets[0].id, None)
                continue
            found[node.targets[0].id] = ast.unparse(node.value)
    return found


def built_with(problem: Problem, scalars: list[str]) -> str:
    """' The Model is built as Model(kernel_size, stride) (get_init_inputs), with
    kernel_size = 8, stride = 1.': the constructor's arguments, a size that is a kernel
    argument named as one; '' for a Model built with none."""
    if not problem.init:
        return ""
    listed = []
    for expression, value in problem.init:
        if expression in scalars:
            listed.append(f"{expression} (the int32 argument)")
        elif value and value != expression:
            listed.append(f"{expression} = {value}")
    return built_sentence([e for e, _ in problem.init], listed)


def built_sentence(arguments: list[str], listed: list[str]) -> str:
    """' The Model is built as Model(a, b) (get_init_inputs), with a = 1, b = 2.' (shared
    with the teaching register that tells generated tasks as imported ones)."""
    return (f" The Model is built as Model({', '.join(arguments)}) (get_init_inputs)"
            + (f", with {', '.join(listed)}." if listed else "."))


def request(problem: Problem) -> dict[str, Any]:
    """What the probe is asked: the file's own sizes, the candidate cases, the limits."""
    return {"bench": {}, "groups": groups(problem.sizes), "elements": MAX_CASE_ELEMENTS,
            "weights": WEIGHT_ELEMENTS}


def task_plan(problem: Problem, source: str) -> Plan:
    """The task's buffers and cases, learned by running the problem in the sandbox."""
    return plan(ask(source, request(problem)), problem.sizes, problem.params,
                problem.defaults)


def task_name(stem: str) -> str:
    """An entry name from the file's stem: '19_ReLU' gives 'kb_19_relu'."""
    return "kb_" + re.sub(r"[^a-z0-9]+", "_", stem.lower()).strip("_")


def _toml(value: Any) -> str:
    """A TOML value (strings, numbers, lists)."""
    return json.dumps(value)


def _arg(buffer: Buffer) -> list[str]:
    """One buffer's [[arg]] table (a plain number's scalar table, its value in init)."""
    if buffer.kind == "scalar":
        return ["[[arg]]", f"name = {_toml(buffer.name)}", 'kind = "scalar"',
                f"dtype = {_toml(buffer.dtype)}", f"value = {_toml(buffer.init)}", ""]
    lines = ["[[arg]]", f"name = {_toml(buffer.name)}", f"kind = {_toml(buffer.kind)}",
             f"dtype = {_toml(buffer.dtype)}", f"shape = {_toml(list(buffer.shape))}"]
    if buffer.widened:
        lines += [f"# get_inputs draws {buffer.name} from [0, 1); the forward is finite on "
                  "[-1, 1), so it is drawn there: a kernel must be right for negative values "
                  "too (on [0, 1) the identity passes for an ELU)."]
    return lines + ([f"init = {_toml(buffer.init)}"] if buffer.init else []) + [""]


def _scalar(name: str) -> list[str]:
    """One size's [[arg]] table."""
    return ["[[arg]]", f"name = {_toml(name)}", 'kind = "scalar"', 'dtype = "int32"',
            f"value = {_toml(name)}", ""]


def _listed(buffers: list[Buffer]) -> str:
    """Buffers in words."""
    return ", ".join(f"{b.name} ({b.dtype} scalar, {b.init})" if b.kind == "scalar" else
                     f"{b.name} ({b.dtype}, shape {' x '.join(b.shape)}"
                     + (f", the Model's {b.key}" if b.key else "") + ")" for b in buffers)


def describe(problem: Problem, plan_: Plan, name: str) -> str:
    """The task's description, in words, with the Model's source."""
    count = " * ".join(plan_.outputs[0].shape)
    listed = (_listed(plan_.weights) if len(plan_.weights) <= LISTED_WEIGHTS else
              f"{len(plan_.weights)} buffers after the inputs, in the order of the Model's "
              f"state_dict(), named after its keys ({_listed(plan_.weights[:2])}, ...)")
    weights = (f" The Model's learned weights are inputs too, loaded into it before forward: "
               f"{listed}." if plan_.weights else "")
    text = (f"KernelBench level-{problem.level} problem {problem.stem}: {problem.doc} "
            + framing(_listed(plan_.inputs), _listed(plan_.outputs), plan_.outputs[0].name,
                      f"cdiv({count}, {BLOCK})", str(BLOCK), weights=weights,
                      sizes=tuple(plan_.scalars), built=built_with(problem, plan_.scalars)))
    return (text + _clipped(problem.model_source, MAX_DESCRIPTION - len(text)))[:MAX_DESCRIPTION]


def framing(inputs: str, outputs: str, out_name: str, grid: str, block: str, *,
            weights: str = "", sizes: tuple[str, ...] = (), built: str = "") -> str:
    """The sentences between an imported problem's docstring and its Model's source. Teaching
    tells generated tasks in these same words (app.assist.teach.registers.module), so that an
    adapter meets imported problems in the form it was taught on."""
    said = f" The sizes {', '.join(sizes)} are int32 arguments." if sizes else ""
    return (f"Compute what the Model's forward gives for the inputs {inputs}, into "
            f"{outputs}.{weights} Every tensor is contiguous and row-major.{said} The launch "
            f"has one thread per element of {out_name}: grid {grid}, block {block} (a kernel of "
            f"several launches may change that).{built} The Model (problem.py):\n")


def _clipped(source: str, room: int) -> str:
    """The Model's source within `room` characters."""
    if len(source) <= room:
        return source
    return source[:max(0, room - len(CLIPPED))] + CLIPPED


def _case_text(case: dict[str, int]) -> str:
    """A case as an inline TOML table."""
    return "{ " + ", ".join(f"{k} = {v}" for k, v in case.items()) + " }"


def spec_text(problem: Problem, plan_: Plan, name: str) -> str:
    """The task's spec."""
    count = " * ".join(plan_.outputs[0].shape)
    lines = [f"# Imported from the KernelBench problem {problem.stem}.py by `kernel-studio "
             "import kernelbench`.", "", "[task]",
             f"description = {_toml(describe(problem, plan_, name))}",
             f"level = {min(problem.level, 3)}",
             f'tags = ["kernelbench", "kernelbench-level{problem.level}"]', "", "[kernel]",
             f'source = "{name}.cu"', f'entry = "{name}"', "options = []", ""]
    for buffer in [*plan_.inputs, *plan_.weights, *plan_.outputs]:
        lines += _arg(buffer)
    for scalar in plan_.scalars:
        lines += _scalar(scalar)
    lines += ["[launch]", f'grid = ["cdiv({count}, {BLOCK})"]', f'block = ["{BLOCK}"]',
              'shared_bytes = "0"', "", "[reference]", f'python = "{name}_ref.py"', ""]
    if any("_dim" in s for s in plan_.scalars):
        lines += ["# A size named <buffer>_dim<i> is that dim as the Model gives it at the "
                  "case's other sizes: a new case must give it too."]
    cases = plan_.cases if plan_.scalars else plan_.cases[:1]
    lines += ["[verify]", "cases = [" + ", ".join(_case_text(c) for c in cases) + "]",
              "seeds = 2"]
    rtol = tolerance(plan_, problem.model_source)
    # Only ever looser than the outputs' own defaults: half precision's 1e-2 already holds a
    # sum's rounding, and 1e-4 would fail a correct half kernel by one rounding of its output.
    defaults = [lookup(b.dtype).rtol for b in plan_.outputs if lookup(b.dtype).is_float]
    if rtol is not None and defaults and rtol > max(defaults):
        lines += ["# Sums of many terms: their order differs between the kernel and PyTorch.",
                  f"rtol = {rtol:g}", f"atol = {rtol:g}"]
    if plan_.scalars:
        lines += ["", "[bench]", f"case = {_case_text(plan_.bench)}"]
    return "\n".join(lines) + "\n"


REFERENCE = '''"""Reference for the KernelBench problem {stem}: builds the problem's Model at the
case's sizes, loads the weights the verifier drew into it, and runs its forward on the host.

The problem file (problem.py beside this one) is someone else's code: it runs only here, when
verify runs this reference, inside verify's sandbox (or, where no sandbox can be had, only once
the user trusts this folder). The functions above `reference` are Kernel Studio's
(app/assist/tasks/kernelbench_runtime.py).
"""

from __future__ import annotations
{runtime}

PROBLEM = Path(__file__).with_name("problem.py")
# The sizes this task passes to the kernel that are the problem's own: set in problem.py
# before it runs, as the case gives them.
SIZES = {sizes}
# forward's inputs: (argument, torch dtype, 0-d).
INPUTS = {inputs}
# The Model's weights: argument -> (its state key, torch dtype).
WEIGHTS = {weights}
OUTPUTS = {outputs}


def reference(**arguments):
    """forward's outputs, the Model built at these sizes and holding these weights."""
    return forward_outputs(PROBLEM, SIZES, INPUTS, WEIGHTS, OUTPUTS, arguments)
'''


def _runtime_text() -> str:
    """kernelbench_runtime's code, without its docstring and __future__ import."""
    text = Path(kernelbench_runtime.__file__).read_text(encoding="utf-8")
    return text.split("from __future__ import annotations\n", 1)[1]


def reference_text(problem: Problem, plan_: Plan) -> str:
    """The reference file."""
    inputs = [(b.name, b.torch, b.zero_d) for b in plan_.inputs]
    weights = {b.name: (b.key, b.torch) for b in plan_.weights}
    return REFERENCE.format(stem=problem.stem, runtime=_runtime_text(),
                            sizes=repr(plan_.overridden), inputs=repr(inputs),
                            weights=repr(weights), outputs=repr([b.name for b in plan_.outputs]))


def _checked_spec(problem: Problem, plan_: Plan, name: str, folder: Path) -> str:
    """The spec's text, once the app's own spec parser accepts it: a task that verify would
    reject is never written."""
    try:
        text = spec_text(problem, plan_, name)
        parse_spec_text(text, folder, folder / f"{name}.toml", check_files=False)
    except SpecError as error:
        raise Refused(f"the task's spec would not load: {error}") from None
    except (RecursionError, MemoryError):
        raise Refused(TOO_DEEP.format(name=f"{problem.stem}.py")) from None
    return text


def write_task(problem: Problem, plan_: Plan, source: str, out_dir: Path,
               force: bool = False) -> Path:
    """Write the task folder (out_dir/<name>/); the spec's path. An existing folder holds the
    user's edits, so it is overwritten only with force."""
    name = task_name(problem.stem)
    folder = out_dir / name
    if folder.exists() and not force:
        raise Refused(f"the task folder {folder} exists already (it may hold your edits): pass "
                      "--force to overwrite it, or choose another --out")
    spec = _checked_spec(problem, plan_, name, folder)
    try:
        folder.mkdir(parents=True, exist_ok=True)
        atomic_write_text(folder / "problem.py", source)
        atomic_write_text(folder / f"{name}_ref.py", reference_text(problem, plan_))
        atomic_write_text(folder / f"{name}.toml", spec)
    except OSError as error:
        raise Refused(f"cannot write the task folder {folder}: {error.strerror or error}: "
                      "choose another --out") from None
    return folder / f"{name}.toml"


def import_problem(path: Path, out_dir: Path, force: bool = False) -> Path:
    """Read a problem file, learn its Model in the sandbox, and write its task; Refused says
    why not. An existing task folder is refused before anything runs."""
    source = read_source(path)
    problem = read_problem(path, source)
    folder = out_dir / task_name(problem.stem)
    if folder.exists() and not force:
        raise Refused(f"the task folder {folder} exists already (it may hold your edits): pass "
                      "--force to overwrite it, or choose another --out")
    return write_task(problem, task_plan(problem, source), source, out_dir, force)


def import_problems(paths: list[Path], out_dir: Path, force: bool = False
                    ) -> list[Path | Refused]:
    """import_problem for many files, their Models learned in one sandboxed process (a fresh
    Python and torch per file would take most of the time); for each, its spec or Refused."""
    read: list[tuple[int, Problem, str]] = []
    found: list[Path | Refused] = []
    for path in paths:
        try:
            source = read_source(path)
            problem = read_problem(path, source)
            if (out_dir / task_name(problem.stem)).exists() and not force:
                raise Refused(f"the task folder {out_dir / task_name(problem.stem)} exists "
                              "already (it may hold your edits): pass --force to overwrite it")
            read.append((len(found), problem, source))
            found.append(Refused("not asked"))
        except Refused as error:
            found.append(error)
    answers = ask_many([(source, request(problem)) for _i, problem, source in read])
    for (index, problem, source), answer in zip(read, answers, strict=True):
        try:
            if isinstance(answer, Refused):
                raise answer
            found[index] = write_task(problem, plan(answer, problem.sizes, problem.params,
                                                     problem.defaults),
                                      source, out_dir, force)
        except Refused as error:
            found[index] = error
    return found
