"""Resolving a spec for one case: the buffer shapes, scalar values, grid, block and shared
memory that the expressions give, checked against CUDA's launch limits."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from app.spec import expr
from app.spec.dtypes import lookup
from app.spec.inits import largest_finite
from app.spec.model import Arg, Case, LaunchSpec, Spec, launch_labels

MAX_BLOCK_THREADS = 1024
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_BLOCK = (1024, 1024, 64)
# A case that needs more host memory than this is almost certainly a typo in a size.
MAX_TOTAL_BYTES = 16 * 2**30


class CaseError(ValueError):
    """A case whose expressions give an impossible launch; the message names the field."""


@dataclass(frozen=True)
class ResolvedLaunch:
    """One launch of a case: grid, block and dynamic shared memory as numbers."""

    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int


@dataclass(frozen=True)
class Resolved:
    """One case of a spec, with every expression evaluated; grid, block and shared_bytes are
    the first launch's, `launches` has every launch's."""

    case: Case
    shapes: dict[str, tuple[int, ...]]
    scalars: dict[str, int | float]
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_bytes: int
    launches: tuple[ResolvedLaunch, ...] = ()

    def launch_shapes(self) -> tuple[ResolvedLaunch, ...]:
        """Every launch's shape (the first alone when made without `launches`)."""
        return self.launches or (ResolvedLaunch(self.grid, self.block, self.shared_bytes),)

    def nbytes(self, spec: Spec) -> int:
        """Bytes of all buffers of this case."""
        return sum(math.prod(self.shapes[a.name]) * lookup(a.dtype).itemsize
                   for a in spec.args if a.is_buffer)


def _int(text: str, case: Case, where: str) -> int:
    """An expression that must give a whole number."""
    try:
        return expr.evaluate_int(text, case, where)
    except expr.ExprError as error:
        # evaluate_int's message may already start with `where`; say it once.
        message = str(error)
        raise CaseError(message if message.startswith(where) else f"{where}: {message}") from None


def _dims(texts: tuple[str, ...], case: Case, where: str,
          limits: tuple[int, int, int]) -> tuple[int, int, int]:
    """grid or block as three positive sizes within CUDA's limits."""
    values = [_int(t, case, f"{where}[{i}]") for i, t in enumerate(texts)]
    values += [1] * (3 - len(values))
    for i, (value, limit) in enumerate(zip(values, limits, strict=True)):
        if not 1 <= value <= limit:
            raise CaseError(f"{where}[{i}] is {value}; it must be from 1 to {limit}")
    return values[0], values[1], values[2]


def _scalar(arg: Arg, case: Case) -> int | float:
    """A scalar argument's value, converted to its dtype (and checked to fit)."""
    assert arg.value is not None
    where = f"arg ({arg.name}).value"
    try:
        value = expr.evaluate(arg.value, case)
    except expr.ExprError as error:
        raise CaseError(f"{where}: {error}") from None
    dtype = lookup(arg.dtype)
    if dtype.is_float:
        largest = largest_finite(dtype)
        if abs(value) > largest:
            raise CaseError(f"{where}: {value:g} does not fit in {arg.dtype} (largest "
                            f"{largest:g})")
        return float(value)
    if isinstance(value, float) and not value.is_integer():
        raise CaseError(f"{where}: {arg.dtype} needs a whole number, got {value}")
    info = np.iinfo(dtype.numpy)  # type: ignore[type-var]
    if not info.min <= int(value) <= info.max:
        raise CaseError(f"{where}: {int(value)} does not fit in {arg.dtype}")
    return int(value)


def case_text(case: Case) -> str:
    """A case as the user would write it: {n=1000, m=3}."""
    return "{" + ", ".join(f"{k}={v}" for k, v in case.items()) + "}"


def resolve_each(spec: Spec, cases: list[Case]) -> list[Resolved]:
    """Every case resolved; a CaseError that names the case which cannot be."""
    resolved = []
    for case in cases:
        try:
            resolved.append(resolve(spec, case))
        except CaseError as error:
            raise CaseError(f"case {case_text(case)}: {error}") from None
    return resolved


def used_variables(spec: Spec) -> set[str]:
    """The size variables that the spec's expressions use (bench formulas included)."""
    texts = [s for a in spec.args for s in a.shape] + [a.value for a in spec.args if a.value]
    for launch in spec.launches:
        texts += [*launch.grid, *launch.block, launch.shared_bytes]
    texts += [t for t in (spec.bench_bytes, spec.bench_flops) if t]
    return {name for text in texts for name in expr.names(text)}


def unknown_variables(spec: Spec, case: Case) -> str | None:
    """Why a case names variables the spec never uses (a typo the run would silently
    ignore), or None."""
    known = used_variables(spec)
    extra = sorted(set(case) - known)
    if not extra:
        return None
    return (f"{', '.join(repr(n) for n in extra)} is not a variable of this spec; its "
            f"variables are {', '.join(sorted(known)) or '(none)'}")


def check_case(spec: Spec, case: Case, label: str) -> str | None:
    """What is wrong with a case given outside the spec (the command line), named by `label`,
    or None: unknown or missing variables, and everything resolve() refuses."""
    problem = unknown_variables(spec, case)
    missing = sorted(used_variables(spec) - set(case))
    if problem is None and missing:
        problem = f"does not define {', '.join(repr(n) for n in missing)}, which the spec uses"
    if problem is None:
        try:
            resolve(spec, case)
        except CaseError as error:
            problem = str(error)
    return f"{label}: {problem}" if problem else None


def resolve(spec: Spec, case: Case) -> Resolved:
    """Evaluate every expression of the spec for one case. A CaseError's message starts with
    the field (the spec form reads it from there); callers that list several cases prefix
    case_label() themselves."""
    shapes: dict[str, tuple[int, ...]] = {}
    for arg in spec.args:
        if arg.is_buffer:
            shape = tuple(_int(s, case, f"arg ({arg.name}).shape[{i}]")
                          for i, s in enumerate(arg.shape))
            if any(d < 0 for d in shape):
                raise CaseError(f"arg ({arg.name}).shape is {shape}; sizes cannot be negative")
            shapes[arg.name] = shape
    scalars = {a.name: _scalar(a, case) for a in spec.args if not a.is_buffer}
    launches = tuple(_launch(launch, case, label)
                     for launch, label in zip(spec.launches, launch_labels(spec), strict=True))
    first = launches[0]
    resolved = Resolved(dict(case), shapes, scalars, first.grid, first.block, first.shared_bytes,
                        launches)
    if resolved.nbytes(spec) > MAX_TOTAL_BYTES:
        raise CaseError(f"case {case}: buffers need {resolved.nbytes(spec) / 2**30:.1f} GiB, "
                        f"more than the {MAX_TOTAL_BYTES // 2**30} GiB limit; check the sizes")
    return resolved


def _launch(launch: LaunchSpec, case: Case, label: str) -> ResolvedLaunch:
    """One launch's grid, block and shared memory for a case, within CUDA's limits; errors
    name the launch by `label`."""
    grid = _dims(launch.grid, case, f"{label}.grid", MAX_GRID)
    block = _dims(launch.block, case, f"{label}.block", MAX_BLOCK)
    if math.prod(block) > MAX_BLOCK_THREADS:
        raise CaseError(f"{label}.block has {math.prod(block)} threads; at most "
                        f"{MAX_BLOCK_THREADS} per block")
    shared = _int(launch.shared_bytes, case, f"{label}.shared_bytes")
    if shared < 0:
        raise CaseError(f"{label}.shared_bytes is {shared}; it cannot be negative")
    return ResolvedLaunch(grid, block, shared)
