"""The kernel spec (docs/spec.md): a TOML file beside the `.cu` that says how to run the kernel
and what is right. Version 1 has one `[launch]` of `[kernel].entry` with every argument;
version 2, a superset, has several `[[launch]]` tables run in order (each its own entry, the
arguments it takes, grid, block and shared memory), `scratch` buffers the launches share, and
template instantiations as entries. Parsing validates every field and names it in each problem;
`spec_to_toml` writes what `parse_spec_text` reads, so the GUI and the CLI share one file."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from enum import StrEnum
from pathlib import Path
from typing import Any

from app.base.fsutil import NotAFile, read_regular
from app.base.settings import Compiler as Compiler  # the vocabulary lives with the settings
from app.spec import expr
from app.spec.dtypes import DTYPES, lookup
from app.spec.inits import InitError, parse_init
from app.spec.limits import (
    MAX_ARGS,
    MAX_CASES,
    MAX_KEY_PARTS,
    MAX_NESTING,
    MAX_PROBLEMS,
    TOO_DEEP,
    brief,
    long_dotted_key,
    nesting,
    sensible,
)


class ArgKind(StrEnum):
    """What a kernel parameter is: a buffer read, written, or both, device memory the launches
    share (scratch: poisoned before each run, guarded, never compared), or a value."""

    IN = "in"
    OUT = "out"
    INOUT = "inout"
    SCRATCH = "scratch"
    SCALAR = "scalar"


KINDS = tuple(ArgKind)
BUFFER_KINDS = (ArgKind.IN, ArgKind.OUT, ArgKind.INOUT, ArgKind.SCRATCH)
# The buffers the reference computes and the checks compare.
OUTPUT_KINDS = (ArgKind.OUT, ArgKind.INOUT)
IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# An entry: a function name, perhaps qualified (ns::name), perhaps a template instantiation
# (`scale<float, 4>`), which NVRTC resolves as a name expression.
ENTRY = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(::[A-Za-z_][A-Za-z0-9_]*)*"
                   r"(<[A-Za-z0-9_ ,:<>()*&.+\-]*>)?$")
MAX_LAUNCHES = 16
MAX_SPEC_BYTES = 1 << 20


COMPILERS = tuple(Compiler)

Case = dict[str, int | float]


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a spec: the field (a dotted path) and what is wrong with it."""

    field: str
    message: str

    def __str__(self) -> str:
        """`field: message`, as shown to users."""
        return f"{self.field}: {self.message}"


class SpecError(ValueError):
    """A spec that cannot be used; `problems` lists every problem found, each naming its field."""

    def __init__(self, problems: list[Problem], path: Path | None = None) -> None:
        """Keep the problems; the message lists them all."""
        self.problems = problems
        self.path = path
        where = f"{path}: " if path else ""
        lines = "\n".join(f"  {p}" for p in problems)
        super().__init__(f"{where}the spec has {len(problems)} problem(s):\n{lines}")


@dataclass(frozen=True)
class Arg:
    """One kernel parameter, in order."""

    name: str
    kind: ArgKind
    dtype: str
    shape: tuple[str, ...] = ()
    init: str | None = None
    value: str | None = None

    @property
    def is_buffer(self) -> bool:
        """Buffers are passed as device pointers; scalars by value."""
        return self.kind in BUFFER_KINDS

    @property
    def is_output(self) -> bool:
        """Whether the reference computes this buffer and the checks compare it."""
        return self.kind in OUTPUT_KINDS

    @property
    def is_scratch(self) -> bool:
        """Device memory the launches share, never compared."""
        return self.kind == ArgKind.SCRATCH


@dataclass(frozen=True)
class LaunchSpec:
    """One launch of a run: its entry, the names of the arguments it takes (in the kernel's
    parameter order), and its grid, block and dynamic shared memory as expressions."""

    entry: str
    args: tuple[str, ...]
    grid: tuple[str, ...]
    block: tuple[str, ...]
    shared_bytes: str = "0"


def entry_name(entry: str) -> str:
    """The function's own name in an entry (`scale` of `ns::scale<float, 4>`), for file names
    and messages."""
    return entry.split("<")[0].split("::")[-1].strip()


def balanced(entry: str) -> bool:
    """Whether an entry's parentheses pair up, and its angle brackets outside them (`sum<(4 > 2)>`
    compares inside its parentheses)."""
    angles = parens = 0
    for char in entry:
        if char in "()":
            parens += 1 if char == "(" else -1
        elif char in "<>" and parens == 0:
            angles += 1 if char == "<" else -1
        if angles < 0 or parens < 0:
            return False
    return angles == parens == 0


def entry_problem(entry: str) -> str | None:
    """What is wrong with an entry as written, or None."""
    if not ENTRY.match(entry) or not balanced(entry):
        return (f"{brief(entry)} is not a function name (a name such as reduce_sum, or a "
                f"template instantiation such as scale<float, 4>)")
    return None


@dataclass(frozen=True)
class Spec:
    """A parsed, validated spec. Paths inside are relative to `base_dir`."""

    source: str
    # The first launch's entry, grid, block and shared memory (a version 1 spec's only launch).
    entry: str
    args: tuple[Arg, ...]
    grid: tuple[str, ...]
    block: tuple[str, ...]
    reference: str
    cases: tuple[Case, ...]
    options: tuple[str, ...] = ()
    shared_bytes: str = "0"
    seeds: int = 3
    rtol: float | None = None
    atol: float | None = None
    bench_case: Case = field(default_factory=dict)
    bench_bytes: str | None = None
    bench_flops: str | None = None
    compiler: Compiler = Compiler.NVRTC
    base_dir: Path = Path(".")
    path: Path | None = None
    # What the spec was parsed from, kept so that one read serves every later use of it (the
    # assistant's prompts, the copies beside its candidates, the [task] table of the suite):
    # the TOML text ('' when parsed from data) and its [task] table (None when it has none).
    text: str = field(default="", repr=False, compare=False)
    task: Mapping[str, Any] | None = field(default=None, repr=False, compare=False)
    # The [[launch]] tables of a version 2 spec, in order; empty for a version 1 spec, whose one
    # launch is `launches`' only item. The first table's entry, grid, block and shared memory
    # are always the fields above (__post_init__ makes them so: `replace(spec, block=...)`
    # changes the first launch, as it always did); set every launch with `with_launches`.
    launch_tables: tuple[LaunchSpec, ...] = ()

    def __post_init__(self) -> None:
        """The first [[launch]] table follows entry, grid, block and shared_bytes."""
        if self.launch_tables:
            first = replace(self.launch_tables[0], entry=self.entry, grid=self.grid,
                            block=self.block, shared_bytes=self.shared_bytes)
            object.__setattr__(self, "launch_tables", (first, *self.launch_tables[1:]))

    def with_launches(self, launches: tuple[LaunchSpec, ...]) -> Spec:
        """A copy whose launches are `launches` (several: [[launch]] tables; one that takes every
        argument in order: the version 1 [launch] table, unless the spec had tables)."""
        first = launches[0]
        one_plain = (len(launches) == 1 and not self.launch_tables
                     and first.args == tuple(a.name for a in self.args))
        return replace(self, entry=first.entry, grid=first.grid, block=first.block,
                       shared_bytes=first.shared_bytes,
                       launch_tables=() if one_plain else tuple(launches))

    @property
    def version(self) -> int:
        """2 when the spec uses a version 2 feature ([[launch]] tables, scratch buffers, a
        template entry), else 1."""
        v2 = self.launch_tables or any(a.is_scratch for a in self.args) or "<" in self.entry
        return 2 if v2 else 1

    @property
    def launches(self) -> tuple[LaunchSpec, ...]:
        """Every launch of a run, in order."""
        if self.launch_tables:
            return self.launch_tables
        return (LaunchSpec(self.entry, tuple(a.name for a in self.args), self.grid, self.block,
                           self.shared_bytes),)

    @property
    def entries(self) -> tuple[str, ...]:
        """The distinct entries of the launches, in the order they first run."""
        return tuple(dict.fromkeys(launch.entry for launch in self.launches))

    def launch_args(self, launch: LaunchSpec) -> tuple[Arg, ...]:
        """The arguments of one launch, in its order."""
        return tuple(self.arg(name) for name in launch.args)

    @property
    def source_path(self) -> Path:
        """The kernel source file."""
        return self.base_dir / self.source

    @property
    def reference_path(self) -> Path:
        """The Python reference file."""
        return self.base_dir / self.reference

    def arg(self, name: str) -> Arg:
        """The argument called `name`."""
        return next(a for a in self.args if a.name == name)

    def with_cases(self, cases: list[Case]) -> Spec:
        """A copy that verifies other cases (the CLI's --case)."""
        return replace(self, cases=tuple(cases))


# ---------------------------------------------------------------------------------------------
# Parsing


class _Collector:
    """Gathers problems so that a user sees all of them at once, not one per attempt."""

    def __init__(self) -> None:
        """Start with none."""
        self.problems: list[Problem] = []
        self.missing_sections: set[str] = set()
        self.unlisted = 0

    @property
    def full(self) -> bool:
        """Whether MAX_PROBLEMS are listed already (the checks may stop early)."""
        return len(self.problems) >= MAX_PROBLEMS

    def add(self, where: str, message: str) -> None:
        """Record one problem; a field of a section already reported missing is not repeated;
        past MAX_PROBLEMS, problems are only counted."""
        if message == "missing" and where.split(".")[0] in self.missing_sections:
            return
        if self.full:
            self.unlisted += 1
            return
        self.problems.append(Problem(where, message))

    def listed(self) -> list[Problem]:
        """The problems, ending with how many were not listed."""
        more = [Problem("spec", f"and {self.unlisted} more problem(s) not listed; fix the "
                                "ones above first")] if self.unlisted else []
        return self.problems + more

    def table(self, data: Mapping[str, Any], key: str, allowed: set[str],
              required: bool = True) -> dict[str, Any]:
        """A sub-table, checked for unknown keys (they are usually typos)."""
        value = data.get(key)
        if value is None:
            if required:
                self.add(f"[{key}]", "missing section")
                self.missing_sections.add(f"[{key}]")
            return {}
        if not isinstance(value, dict):
            self.add(key, f"must be a table, not {type(value).__name__}")
            return {}
        self.unknown_keys(value, allowed, f"[{key}]")
        return value

    def unknown_keys(self, data: Mapping[str, Any], allowed: set[str], where: str) -> None:
        """Report keys that version 1 of the spec does not have."""
        for key in data:
            if key not in allowed:
                self.add(f"{where}.{key}", f"unknown key (allowed: {', '.join(sorted(allowed))})")

    def text(self, data: Mapping[str, Any], key: str, where: str, required: bool = True,
             default: str | None = None) -> str | None:
        """A string field."""
        value = data.get(key, default)
        if value is None:
            if required:
                self.add(f"{where}.{key}", "missing")
            return None
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            self.add(f"{where}.{key}", f"must be text, not {type(value).__name__}")
            return None
        return value

    def expression(self, data: Mapping[str, Any], key: str, where: str, required: bool = True,
                   default: str | None = None) -> str | None:
        """A field holding an expression; it must parse."""
        value = self.text(data, key, where, required, default)
        if value is not None:
            try:
                expr.parse(value)
            except expr.ExprError as error:
                self.add(f"{where}.{key}", str(error))
                return None
        return value

    def expressions(self, data: Mapping[str, Any], key: str, where: str, low: int,
                    high: int) -> tuple[str, ...]:
        """A list of 1..3 expressions (shape, grid, block)."""
        value = data.get(key)
        if value is None:
            self.add(f"{where}.{key}", "missing")
            return ()
        if not isinstance(value, list) or not low <= len(value) <= high:
            self.add(f"{where}.{key}", f"must be a list of {low} to {high} expressions")
            return ()
        checked = [self._item_expression(item, f"{where}.{key}[{i}]")
                   for i, item in enumerate(value)]
        return tuple(c for c in checked if c is not None)

    def _item_expression(self, value: Any, where: str) -> str | None:
        """One element of an expression list: text (or a number) that parses."""
        if isinstance(value, int | float) and not isinstance(value, bool):
            value = str(value)
        if not isinstance(value, str):
            self.add(where, f"must be an expression as text, not {brief(value)}")
            return None
        try:
            expr.parse(value)
        except expr.ExprError as error:
            self.add(where, str(error))
            return None
        return value


def _check_init(c: _Collector, init: str, dtype: str, where: str) -> None:
    """`init` must be one of the documented generators, able to make values of `dtype`."""
    try:
        parse_init(init, lookup(dtype))
    except InitError as error:
        c.add(where, str(error))


def _parse_arg(c: _Collector, data: Any, index: int) -> Arg | None:
    """One [[arg]] entry."""
    where = f"arg[{index}]"
    if not isinstance(data, dict):
        c.add(where, "must be a table")
        return None
    name = c.text(data, "name", where)
    if name is not None:
        where = f"arg[{index}] ({name})"
        if not IDENTIFIER.match(name):
            c.add(f"{where}.name", "must be an identifier (letters, digits, _)")
    c.unknown_keys(data, {"name", "kind", "dtype", "shape", "init", "value"}, where)
    kind = c.text(data, "kind", where)
    if kind is not None and kind not in KINDS:
        c.add(f"{where}.kind", f"{brief(kind)} is not one of {', '.join(KINDS)}")
    dtype = c.text(data, "dtype", where)
    if dtype is not None and dtype not in DTYPES:
        c.add(f"{where}.dtype", f"{brief(dtype)} is not one of {', '.join(DTYPES)}")
    if name is None or kind not in KINDS or dtype not in DTYPES:
        return None
    assert kind is not None and dtype is not None
    if kind == ArgKind.SCALAR:
        return _scalar_arg(c, data, where, name, dtype)
    return _buffer_arg(c, data, where, name, ArgKind(kind), dtype)


def _scalar_arg(c: _Collector, data: Mapping[str, Any], where: str, name: str,
                dtype: str) -> Arg:
    """A scalar needs a value and has no shape or init."""
    for key in ("shape", "init"):
        if key in data:
            c.add(f"{where}.{key}", "a scalar has no " + key)
    value = c.expression(data, "value", where)
    return Arg(name, ArgKind.SCALAR, dtype, value=value)


def _buffer_arg(c: _Collector, data: Mapping[str, Any], where: str, name: str, kind: ArgKind,
                dtype: str) -> Arg:
    """A buffer needs a shape; inputs may name an init (default normal); outputs have none."""
    if "value" in data:
        c.add(f"{where}.value", "a buffer has no value (only scalars do)")
    shape = c.expressions(data, "shape", where, 1, 8)
    init = c.text(data, "init", where, required=False)
    if kind == ArgKind.SCRATCH and init is not None:
        c.add(f"{where}.init", "a scratch buffer is poisoned before each run (a kernel must "
                               "write what it reads there); use kind = \"in\" for values the "
                               "kernel is given")
        init = None
    elif kind == ArgKind.OUT and init is not None:
        c.add(f"{where}.init", "an out buffer is filled by the kernel; use kind = \"inout\" to "
                               "give it initial values")
        init = None
    elif kind != ArgKind.OUT:
        init = init or "normal"
        _check_init(c, init, dtype, f"{where}.init")
    return Arg(name, kind, dtype, shape, init)


def _parse_case(c: _Collector, value: Any, where: str) -> Case | None:
    """A case: a table of size variables to numbers."""
    if not isinstance(value, dict):
        c.add(where, "a case must be a table such as { n = 1000 }")
        return None
    case: Case = {}
    for key, number in value.items():
        if not IDENTIFIER.match(key):
            c.add(f"{where}.{key}", "must be an identifier")
        elif isinstance(number, bool) or not isinstance(number, int | float):
            c.add(f"{where}.{key}", f"must be a number, not {brief(number)}")
        elif not sensible(number):
            c.add(f"{where}.{key}", f"{number!r} is not a finite number of sensible size "
                                    f"(at most 2**80)")
        else:
            case[key] = number
    return case


def _parse_cases(c: _Collector, verify: Mapping[str, Any]) -> tuple[Case, ...]:
    """[verify].cases: a non-empty list of cases."""
    raw = verify.get("cases")
    if "[verify]" in c.missing_sections:
        return ()
    if not isinstance(raw, list) or not raw:
        c.add("[verify].cases", "must be a non-empty list of cases, e.g. [{ n = 1 }, { n = 1000 }]")
        return ()
    if len(raw) > MAX_CASES:
        c.add("[verify].cases", f"{len(raw)} cases; at most {MAX_CASES} (each runs every seed): "
                                "keep the sizes that test something different")
        return ()
    parsed = [_parse_case(c, v, f"[verify].cases[{i}]") for i, v in enumerate(raw)]
    return tuple(p for p in parsed if p is not None)


def _tolerance(c: _Collector, verify: Mapping[str, Any], key: str) -> float | None:
    """rtol / atol: a non-negative number, or absent for the dtype's default."""
    value = verify.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or not sensible(value) \
            or value < 0:
        c.add(f"[verify].{key}", f"must be a non-negative number, not {brief(value)}")
        return None
    return float(value)


def _seeds(c: _Collector, verify: Mapping[str, Any]) -> int:
    """[verify].seeds: 1 to 1000 fresh random inputs per case."""
    seeds = verify.get("seeds", 3)
    if isinstance(seeds, bool) or not isinstance(seeds, int) or not 1 <= seeds <= 1000:
        c.add("[verify].seeds", f"must be a whole number from 1 to 1000, not {brief(seeds)}")
        return 3
    return seeds


def _options(c: _Collector, kernel: Mapping[str, Any]) -> tuple[str, ...]:
    """[kernel].options: a list of strings (the compiler checks them against its allowlist)."""
    options = kernel.get("options", [])
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        c.add("[kernel].options", "must be a list of strings, e.g. [\"-O3\"]")
        return ()
    return tuple(options)


def _compiler(c: _Collector, kernel: Mapping[str, Any]) -> Compiler:
    """[kernel].compiler: "nvrtc" (the default) or "nvcc"."""
    value = kernel.get("compiler", Compiler.NVRTC)
    if value not in COMPILERS:
        shown = repr(value) if isinstance(value, str) else f"a {type(value).__name__}"
        c.add("[kernel].compiler", f"{shown} is not a compiler Kernel Studio can use: write "
                                   "\"nvrtc\" (the default) or \"nvcc\" (needed when the "
                                   "file also has host code)")
        return Compiler.NVRTC
    return Compiler(value)


def _relative_file(c: _Collector, value: str | None, where: str, base_dir: Path,
                   check_exists: bool) -> str:
    """A file named relative to the spec; it must stay inside the spec's folder."""
    if value is None:
        return ""
    path = Path(value)
    if path.is_absolute() or ".." in path.parts:
        c.add(where, f"{brief(value)} must be a path relative to the spec's folder, inside it")
    elif check_exists and not (base_dir / path).is_file():
        c.add(where, f"file {brief(value)} not found in {base_dir}")
    return value


def _check_names(c: _Collector, spec_args: list[Arg]) -> None:
    """Argument names are unique; there is at least one buffer to check."""
    seen: set[str] = set()
    for arg in spec_args:
        if arg.name in seen:
            c.add(f"arg ({arg.name})", "duplicate argument name")
        seen.add(arg.name)
    if spec_args and not any(a.is_output for a in spec_args):
        c.add("arg", "no out or inout buffer: there would be nothing to verify")


def _check_variables(c: _Collector, spec: Spec) -> None:
    """Every size variable used in shapes, values and launch must be defined in every case."""
    used: dict[str, set[str]] = {}
    texts = [(f"arg ({a.name}).shape", s) for a in spec.args for s in a.shape]
    texts += [(f"arg ({a.name}).value", a.value) for a in spec.args if a.value]
    for label, launch in zip(launch_labels(spec), spec.launches, strict=True):
        texts += [(f"{label}.grid", g) for g in launch.grid]
        texts += [(f"{label}.block", b) for b in launch.block]
        texts += [(f"{label}.shared_bytes", launch.shared_bytes)]
    for where, text in texts:
        for name in expr.names(text):
            used.setdefault(name, set()).add(where)
    for index, case in enumerate(spec.cases):
        if c.full:  # a case that misses many names fills the list; stop before the next
            return
        for name in sorted(set(used) - set(case)):
            c.add(f"[verify].cases[{index}]", f"does not define {name!r}, used in "
                                               f"{', '.join(sorted(used[name]))}")
    if spec.bench_case:
        for name in sorted(set(used) - set(spec.bench_case)):
            c.add("[bench].case", f"does not define {name!r}")


def launch_labels(spec: Spec) -> list[str]:
    """How problems name each launch: `[launch]` for a version 1 spec's one launch, else
    `launch[i] (entry)`."""
    if not spec.launch_tables:
        return ["[launch]"]
    return [f"launch[{i}] ({entry_name(launch.entry)})" for i, launch in enumerate(spec.launches)]


def _launch_arg_names(c: _Collector, data: Mapping[str, Any], where: str,
                      spec_args: list[Arg]) -> tuple[str, ...]:
    """A launch's `args`: names of [[arg]] entries, each once; every argument when absent."""
    known = [a.name for a in spec_args]
    value = data.get("args")
    if value is None:
        return tuple(known)
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        c.add(f"{where}.args", "must be a list of [[arg]] names, in the kernel's parameter "
                               "order, e.g. [\"x\", \"partial\", \"n\"]")
        return ()
    for name in value:
        if name not in known:
            c.add(f"{where}.args", f"{brief(name)} is not the name of an [[arg]] (they are "
                                   f"{', '.join(known) or 'none'})")
    for name in sorted({n for n in value if value.count(n) > 1}):
        c.add(f"{where}.args", f"{brief(name)} is passed twice: give each parameter its own "
                               "[[arg]]")
    return tuple(value)


def _parse_launch(c: _Collector, data: Any, index: int, default_entry: str | None,
                  spec_args: list[Arg]) -> LaunchSpec | None:
    """One [[launch]] table."""
    where = f"launch[{index}]"
    if not isinstance(data, dict):
        c.add(where, "must be a table")
        return None
    c.unknown_keys(data, {"entry", "args", "grid", "block", "shared_bytes"}, where)
    entry = c.text(data, "entry", where, required=default_entry is None, default=default_entry)
    if entry is not None:
        entry = entry.strip()
        where = f"launch[{index}] ({entry_name(entry)})"
        problem = entry_problem(entry)
        if problem:
            c.add(f"{where}.entry", problem)
    args = _launch_arg_names(c, data, where, spec_args)
    grid = c.expressions(data, "grid", where, 1, 3)
    block = c.expressions(data, "block", where, 1, 3)
    shared = c.expression(data, "shared_bytes", where, False, "0") or "0"
    if entry is None:
        return None
    return LaunchSpec(entry, args, grid, block, shared)


def _parse_launches(c: _Collector, data: Mapping[str, Any], default_entry: str | None,
                    spec_args: list[Arg]) -> tuple[LaunchSpec, ...]:
    """The [[launch]] tables of a version 2 spec; every buffer is passed to one of them."""
    raw = data["launch"]
    if not raw or len(raw) > MAX_LAUNCHES:
        c.add("[[launch]]", f"{len(raw)} [[launch]] tables; a run has 1 to {MAX_LAUNCHES}")
        return ()
    parsed = [_parse_launch(c, t, i, default_entry, spec_args) for i, t in enumerate(raw)]
    launches = tuple(p for p in parsed if p is not None)
    passed = {name for launch in launches for name in launch.args}
    for arg in spec_args:
        if arg.is_buffer and arg.name not in passed and len(launches) == len(raw):
            c.add(f"arg ({arg.name})", "no [[launch]] takes this buffer: name it in the args of "
                                       "the launches that use it")
    return launches


def _launch_table(c: _Collector, data: Mapping[str, Any]) -> dict[str, Any]:
    """The version 1 [launch] table (empty for a version 2 spec's [[launch]] list)."""
    if isinstance(data.get("launch"), list):
        return {}
    return c.table(data, "launch", {"grid", "block", "shared_bytes"})


def _entry(c: _Collector, kernel: Mapping[str, Any], several: bool) -> str:
    """[kernel].entry: required unless every [[launch]] names its own."""
    entry = c.text(kernel, "entry", "[kernel]", required=not several)
    if entry is None:
        return ""
    entry = entry.strip()
    problem = entry_problem(entry)
    if problem:
        c.add("[kernel].entry", problem)
    return entry


def parse_spec_data(data: Mapping[str, Any], base_dir: Path, path: Path | None = None,
                    check_files: bool = True) -> Spec:
    """Validate a spec already read from TOML; raise SpecError listing every problem."""
    if nesting(data) > MAX_NESTING:
        raise SpecError([Problem("toml", TOO_DEEP)], path)
    c = _Collector()
    c.unknown_keys(data, {"kernel", "arg", "launch", "reference", "verify", "bench", "task"},
                   "spec")
    # A task for the assistant (app.assist.tasks.suite reads its fields): its kernel need not exist.
    task = c.table(data, "task", {"description", "level", "tags"}, required=False)
    kernel = c.table(data, "kernel", {"source", "entry", "options", "compiler"})
    several = isinstance(data.get("launch"), list)
    launch = _launch_table(c, data)
    reference = c.table(data, "reference", {"python"})
    verify = c.table(data, "verify", {"cases", "seeds", "rtol", "atol"})
    bench = c.table(data, "bench", {"case", "bytes", "flops"}, required=False)
    source = _relative_file(c, c.text(kernel, "source", "[kernel]"), "[kernel].source", base_dir,
                            check_files and not task)
    entry = _entry(c, kernel, several)
    raw_args = data.get("arg", [])
    if not isinstance(raw_args, list) or not raw_args:
        c.add("[[arg]]", "at least one [[arg]] table is needed, one per kernel parameter")
        raw_args = []
    elif len(raw_args) > MAX_ARGS:
        c.add("[[arg]]", f"{len(raw_args)} [[arg]] tables; a kernel here takes at most "
                         f"{MAX_ARGS} parameters")
        raw_args = []
    parsed_args = [_parse_arg(c, a, i) for i, a in enumerate(raw_args)]
    spec_args = [a for a in parsed_args if a is not None]
    _check_names(c, spec_args)
    bench_case = _parse_case(c, bench.get("case", {}), "[bench].case") if bench else {}
    tables = _parse_launches(c, data, entry or None, spec_args) if several else ()
    first = tables[0] if tables else None
    spec = Spec(
        source=source, entry=first.entry if first else entry, args=tuple(spec_args),
        grid=first.grid if first else c.expressions(launch, "grid", "[launch]", 1, 3),
        block=first.block if first else c.expressions(launch, "block", "[launch]", 1, 3),
        shared_bytes=first.shared_bytes if first else (
            c.expression(launch, "shared_bytes", "[launch]", False, "0") or "0"),
        launch_tables=tables,
        reference=_relative_file(c, c.text(reference, "python", "[reference]"),
                                 "[reference].python", base_dir, check_files),
        cases=_parse_cases(c, verify), options=_options(c, kernel), compiler=_compiler(c, kernel),
        seeds=_seeds(c, verify),
        rtol=_tolerance(c, verify, "rtol"), atol=_tolerance(c, verify, "atol"),
        bench_case=bench_case or {},
        bench_bytes=c.expression(bench, "bytes", "[bench]", required=False),
        bench_flops=c.expression(bench, "flops", "[bench]", required=False),
        base_dir=base_dir, path=path,
        task=data["task"] if isinstance(data.get("task"), dict) else None)
    if not c.problems:
        _check_variables(c, spec)
    if c.problems:
        raise SpecError(c.listed(), path)
    return spec


def parse_spec_text(text: str, base_dir: Path, path: Path | None = None,
                    check_files: bool = True) -> Spec:
    """Parse TOML text into a Spec; SpecError names every problem (TOML syntax included)."""
    if not text.strip():
        raise SpecError([Problem("file", "the spec is empty; start from a template such as "
                                         "resources/kernels/vector_add/vector_add.toml")], path)
    line = long_dotted_key(text)
    if line is not None:
        # a dotted key of that many parts nests as many tables: the same problem, said early
        raise SpecError([Problem("toml", f"line {line}: a dotted key of more than "
                                         f"{MAX_KEY_PARTS} parts: {TOO_DEEP}")], path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise SpecError([Problem("toml", f"not valid TOML: {error}")], path) from None
    except RecursionError:
        raise SpecError([Problem("toml", TOO_DEEP)], path) from None
    return replace(parse_spec_data(data, base_dir, path, check_files), text=text)


def load_spec(path: Path | str) -> Spec:
    """Read and validate a spec file; every failure is a SpecError with a clear message."""
    path = Path(path)
    try:
        raw = read_regular(path, MAX_SPEC_BYTES)
    except NotAFile as error:
        raise SpecError([Problem("file", f"{error}: a spec is a TOML file of at most "
                                         f"{MAX_SPEC_BYTES} bytes")], path) from None
    except OSError as error:
        raise SpecError([Problem("file", f"cannot read {path}: {error.strerror}")], path) from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        raise SpecError([Problem("file", f"not UTF-8 text (byte {error.start})")], path) from None
    return parse_spec_text(text, path.resolve().parent, path)
