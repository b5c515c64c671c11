"""The warnings of `spec-check`: weaknesses of a spec that no single impostor proves but that
make wrong kernels easier to miss. A loose absolute tolerance, outputs that do not depend on the
random inputs, a launch whose edges no case reaches, inputs with too few distinct values.

They advise; they never change spec-check's exit code (the impostors do)."""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np

from app.engine.verify import checks
from app.engine.verify.impostors import Forgery, Lab, Trial, judge, other_seed, show_case
from app.spec import expr
from app.spec.dtypes import lookup
from app.spec.model import Arg, Case, Spec

Array = np.ndarray[Any, Any]
# atol above this share of the median |expected| of a case lets errors of that size through.
ATOL_SHARE = 0.01
# An rtol above this lets results off by more than 5% pass: far beyond any float format's own
# rounding (bfloat16's unit is 0.8%), so it hides wrong maths rather than rounding.
LOOSE_RTOL = 0.05
# Medians come from at most this many evenly spaced elements (a million-element median costs
# more than the rest of a case's checks).
MEDIAN_SAMPLE = 65536
# Cases whose buffers take more bytes than this are judged on one seed: a second would double
# the reference's work where it costs most, and the dependence of the output on the inputs
# shows as well in the smaller cases.
LARGE_BYTES = 1 << 20
# An input whose first DISTINCT_SAMPLE elements take fewer than FEW_VALUES values.
DISTINCT_SAMPLE = 4096
FEW_VALUES = 4
# Size variables are multiplied by this to see whether the grid stops growing (a capped grid,
# so the kernel must loop).
HUGE = 2**24
# Inits that start an accumulator deliberately; few distinct values are the point there.
STARTING_STATES = ("zeros", "ones")
# A bench case whose size variable passes this many times the largest verified value of it runs
# where no verify case looked: loops and reductions over that size accumulate more rounding.
BENCH_BEYOND = 4.0


class WarningKind(StrEnum):
    """What a warning is about; JSON keeps the strings."""

    LOOSE_ATOL = "loose_atol"
    LOOSE_RTOL = "loose_rtol"
    IDENTITY_SCALAR = "identity_scalar"
    SEED_INDEPENDENT = "seed_independent"
    CONSTANT_OUTPUT = "constant_output"
    NO_PARTIAL_BLOCK = "no_partial_block"
    NO_STRIDE_LOOP = "no_stride_loop"
    FEW_DISTINCT_VALUES = "few_distinct_values"
    BENCH_BEYOND_VERIFIED = "bench_beyond_verified"


@dataclass(frozen=True)
class SpecWarning:
    """One weakness of a spec, with the cases it concerns (none: the spec as a whole)."""

    kind: WarningKind
    message: str
    cases: list[Case] = field(default_factory=list)

    def describe(self) -> str:
        """`kind: message`."""
        return f"{self.kind}: {self.message}"


def find_warnings(lab: Lab) -> list[SpecWarning]:
    """Every warning for the spec in `lab`, in a fixed order."""
    return (_loose_atol(lab) + _loose_rtol(lab) + _identity_scalars(lab)
            + _seed_independent(lab) + _constant_outputs(lab) + _launch_coverage(lab)
            + _few_distinct(lab) + bench_beyond_verified(lab.spec))


def _pair(lab: Lab, index: int) -> tuple[Trial, Trial]:
    """Two trials of one case with different seeds."""
    return lab.trial(index, 0), lab.trial(index, other_seed(lab, 0))


def _large(lab: Lab, index: int) -> bool:
    """Whether a case's buffers pass LARGE_BYTES."""
    return lab.resolved[index].nbytes(lab.spec) > LARGE_BYTES


def _samples(lab: Lab, index: int) -> tuple[Trial, ...]:
    """The trials a case's statistics come from: two seeds, one for a large case."""
    return (lab.trial(index, 0),) if _large(lab, index) else _pair(lab, index)


def _seed_cases(lab: Lab) -> list[int]:
    """The cases whose dependence on the seed is tested: those with more than one output
    element (one value may be fixed by the maths: a softmax of one element is 1) that are not
    large, or the smallest case with more than one where all are large."""
    several = [i for i in range(len(lab.resolved)) if _elements(lab, i) > 1]
    small = [i for i in several if not _large(lab, i)]
    return small or sorted(several, key=lambda i: lab.resolved[i].nbytes(lab.spec))[:1]


def _cases(lab: Lab, indices: list[int]) -> list[Case]:
    """The cases at some indices."""
    return [lab.resolved[i].case for i in indices]


def _named(cases: list[Case]) -> str:
    """`{n=1}, {n=3}`."""
    return ", ".join(show_case(c) for c in cases)


# ---------------------------------------------------------------------------------------------
# Tolerance and outputs


def _magnitudes(trials: tuple[Trial, ...], name: str) -> Array:
    """|expected| of an output over some trials: finite values, evenly sampled."""
    parts = []
    for trial in trials:
        flat = trial.expected[name].reshape(-1)
        sample = flat[::max(1, flat.size // MEDIAN_SAMPLE)].astype(np.float64)
        parts.append(np.abs(sample[np.isfinite(sample)]))
    return np.concatenate(parts)


@dataclass(frozen=True)
class _AtolShare:
    """An output's atol against its expected values in one case."""

    atol: float
    median: float  # of |expected|
    below: float  # the share of elements whose |expected| is under atol

    @property
    def share(self) -> float:
        """atol / median (0 when the median is 0: nothing to compare with)."""
        return self.atol / self.median if self.median > 0 else 0.0


def _atol_share(lab: Lab, index: int, arg: Arg) -> _AtolShare:
    """One output's atol, median |expected| and share of elements below atol in one case. The
    atol is the one the verifier uses: the spec's, else checks.default_atol (the dtype's,
    scaled down for outputs below 1), applied here to the sample the median comes from."""
    magnitudes = _magnitudes(_samples(lab, index), arg.name)
    median = float(np.median(magnitudes)) if magnitudes.size else 0.0
    dtype = lookup(arg.dtype)
    atol = lab.spec.atol if lab.spec.atol is not None else checks.default_atol(dtype, magnitudes)
    below = float(np.mean(magnitudes < atol)) if magnitudes.size else 0.0
    return _AtolShare(atol, median, below)


def _atol_advice(name: str, found: _AtolShare, cases: int, worst: str) -> str:
    """The loose-atol warning in words a person can act on: how atol compares with the values
    (never a percentage past 100), what that lets through, and the atol to use instead."""
    suggested = f"{found.median * ATOL_SHARE:.1g}"
    where = f"in {cases} case(s), at worst {worst}"
    if found.share >= 1:
        return (f"atol {found.atol:.3g} is larger than most expected |{name}| values (median "
                f"{found.median:.2g}) {where}: {found.below:.0%} of its elements are below atol "
                "and barely checked (an error as large as the value itself passes there); "
                f"lower atol to about {suggested}, or scale the inputs so the outputs are not "
                "that small")
    return (f"atol {found.atol:.3g} is about 1/{round(1 / found.share)} of the median expected "
            f"|{name}| ({found.median:.2g}) {where}: errors of that size pass unnoticed; lower "
            f"atol to about {suggested} and let rtol cover the large values")


def _loose_atol(lab: Lab) -> list[SpecWarning]:
    """One warning per float output whose atol is large against its values in some case."""
    warnings = []
    for arg in (a for a in lab.outputs if lookup(a.dtype).is_float):
        shares = {index: _atol_share(lab, index, arg) for index in range(len(lab.resolved))}
        # The slack keeps a default atol of exactly 1% of the median (float16's) from warning.
        loose = [i for i, found in shares.items() if found.share > ATOL_SHARE * (1 + 1e-9)]
        if loose:
            worst = max(loose, key=lambda i: shares[i].share)
            warnings.append(SpecWarning(WarningKind.LOOSE_ATOL, _atol_advice(
                arg.name, shares[worst], len(loose), f"in {show_case(lab.resolved[worst].case)}"),
                _cases(lab, loose)))
    return warnings


def _bench_elements(spec: Spec, arg: Arg) -> int:
    """How many elements an output has in the bench case (0 when its shape cannot be worked
    out there: spec-check reports bad expressions elsewhere)."""
    try:
        return math.prod(expr.evaluate_int(t, spec.bench_case, arg.name) for t in arg.shape)
    except (ValueError, TypeError, ArithmeticError):
        return 0


def _reduced(spec: Spec) -> set[str]:
    """The bench case's size variables that some float output with many elements is reduced
    over: used by no output's shape (K of a matmul), so each element sums more terms as they
    grow, and with many elements some sum to near zero, where only atol holds (a single total,
    as a sum of everything, is large and held by rtol). A variable an output's shape uses sizes
    the output instead: each element sees the same work at any size."""
    outputs = [a for a in spec.args if a.is_buffer and a.kind in ("out", "inout")]
    if not any(lookup(a.dtype).is_float and _bench_elements(spec, a) > 1 for a in outputs):
        return set()
    shaped = {name for arg in outputs for text in arg.shape for name in expr.names(text)}
    return set(spec.bench_case) - shaped


def bench_beyond_verified(spec: Spec) -> list[SpecWarning]:
    """One warning per reduced size variable (_reduced) whose [bench] value passes BENCH_BEYOND
    times the largest value any verify case gives it: bench checks its results against the same
    tolerances, and a reduction over that size accumulates more rounding than any verify case
    showed."""
    warnings = []
    for name, value in spec.bench_case.items():
        if name not in _reduced(spec):
            continue
        verified = [c[name] for c in spec.cases if isinstance(c.get(name), int | float)]
        largest = max(verified, default=0)
        if largest <= 0 or value <= BENCH_BEYOND * largest:
            continue
        warnings.append(SpecWarning(WarningKind.BENCH_BEYOND_VERIFIED, (
            f"bench case {name}={value} is {value / largest:.0f}x the largest verified {name} "
            f"({largest}): a loop or reduction over {name} accumulates more rounding error "
            "there than any verify case shows, and bench checks it against the same rtol/atol; "
            f"add a verify case near {name}={value}, or loosen rtol"), [dict(spec.bench_case)]))
    return warnings


def _loose_rtol(lab: Lab) -> list[SpecWarning]:
    """A warning when the spec's rtol lets float results off by more than LOOSE_RTOL pass."""
    rtol = lab.spec.rtol
    floats = [a.name for a in lab.outputs if lookup(a.dtype).is_float]
    if rtol is None or rtol <= LOOSE_RTOL or not floats:
        return []
    return [SpecWarning(WarningKind.LOOSE_RTOL, (
        f"rtol {rtol:g} lets {', '.join(floats)} be off by up to {rtol:.0%} and still pass: "
        f"far more than any float format's rounding (bfloat16's unit is 0.8%), so a kernel "
        f"with wrong maths (a wrong constant, a missing term) can pass; keep rtol at or under "
        f"{LOOSE_RTOL:g} unless the algorithm itself is that inexact"))]


def _identity_scalars(lab: Lab) -> list[SpecWarning]:
    """One warning per float scalar that is 0, 1 or -1 in every case: a kernel that leaves out
    the term or factor it belongs to computes the same thing there, and passes."""
    warnings = []
    for arg in (a for a in lab.spec.args if a.kind == "scalar" and lookup(a.dtype).is_float):
        values = {lab.resolved[i].scalars[arg.name] for i in range(len(lab.resolved))}
        if values and values <= {0.0, 1.0, -1.0}:
            shown = ", ".join(f"{v:g}" for v in sorted(values))
            warnings.append(SpecWarning(WarningKind.IDENTITY_SCALAR, (
                f"{arg.name} is {shown} in every case: a kernel that ignores {arg.name} (drops "
                f"the term it adds or the factor it scales by) gives the same answer and "
                f"passes; give {arg.name} another value, such as 2.5")))
    return warnings


def _elements(lab: Lab, index: int) -> int:
    """The largest output's element count in a case."""
    return max(math.prod(lab.resolved[index].shapes[a.name]) for a in lab.outputs)


def _seed_independent(lab: Lab) -> list[SpecWarning]:
    """Cases (among _seed_cases) whose answer is the same for two seeds."""
    same = []
    for index in _seed_cases(lab):
        first, second = _pair(lab, index)
        replay: Forgery = {a.name: second.expected[a.name].reshape(-1) for a in lab.outputs}
        if not judge(lab, first, replay):
            same.append(index)
    if not same:
        return []
    return [SpecWarning(WarningKind.SEED_INDEPENDENT, (
        f"in {_named(_cases(lab, same))} the reference gives the same output (within tolerance) "
        "for different seeds, so a kernel that replays an old result passes there; use random "
        "init for the inputs"), _cases(lab, same))]


def _constant_outputs(lab: Lab) -> list[SpecWarning]:
    """Outputs whose every element is the same value in some case."""
    warnings = []
    for arg in lab.outputs:
        constant = [i for i in range(len(lab.resolved))
                    if _elements(lab, i) > 1 and _is_constant(lab.trial(i, 0).expected[arg.name])]
        if constant:
            warnings.append(SpecWarning(WarningKind.CONSTANT_OUTPUT, (
                f"every element of {arg.name} has the same expected value in "
                f"{_named(_cases(lab, constant))}: a kernel that writes that constant passes "
                "there"), _cases(lab, constant)))
    return warnings


def _is_constant(values: Array) -> bool:
    """Whether an array (of more than one element) holds one value throughout."""
    flat = values.reshape(-1)
    return flat.size > 1 and bool(np.all(flat == flat[0]))


# ---------------------------------------------------------------------------------------------
# Launch coverage: partial blocks and loops that take a second pass


@dataclass(frozen=True)
class _Coverage:
    """For one way of reading the launch: which cases leave a partial block, which make a
    loop take a second pass, whether the launch has such a loop, and words for messages."""

    partial: list[int]
    strided: list[int]
    loops: bool
    aligned: str
    one_pass: str


def _cdivs(text: str) -> list[tuple[str, str]]:
    """The `cdiv(X, B)` terms of a grid expression, as (X, B) texts."""
    return [(ast.unparse(node.args[0]), ast.unparse(node.args[1]))
            for node in ast.walk(expr.parse(text))
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id == "cdiv"]


def _huge(case: Case) -> Case:
    """The case with every whole-number size scaled far up."""
    return {k: v * HUGE if isinstance(v, int) else v for k, v in case.items()}


def _capped(lab: Lab, dim: int, size: str, tile: str) -> bool:
    """Whether the grid stops growing before it covers `size` (a `min` cap, say), so that the
    kernel must loop: seen by scaling the largest case far up."""
    largest = max(lab.resolved, key=lambda r: r.nbytes(lab.spec))
    huge = _huge(largest.case)
    try:
        grid, b, x = (expr.evaluate(t, huge) for t in (lab.spec.grid[dim], tile, size))
    except expr.ExprError:  # too large to evaluate: no cap can be seen
        return False
    return bool(grid * b < x)


def _tiled(lab: Lab, dim: int, size: str, tile: str) -> _Coverage:
    """A grid dimension `cdiv(size, tile)` (perhaps capped): a partial block where size is
    not a multiple of tile; a grid-stride pass where grid * tile falls short of size."""
    partial, strided = [], []
    for index, resolved in enumerate(lab.resolved):
        x, b = expr.evaluate(size, resolved.case), expr.evaluate(tile, resolved.case)
        if b > 0 and x % b:
            partial.append(index)
        if resolved.grid[dim] * b < x:
            strided.append(index)
    return _Coverage(partial, strided, _capped(lab, dim, size, tile),
                     f"{size} is always a multiple of {tile}",
                     f"grid {lab.spec.grid[dim]!r} times {tile} always covers {size}")


def _block_strided(lab: Lab) -> _Coverage | None:
    """A grid without cdiv: each block (or, for a constant grid, the whole grid) loops over
    the sizes the grid does not name, in steps of its thread count."""
    in_grid = set().union(*(expr.names(g) for g in lab.spec.grid))
    shapes = {n for a in lab.spec.args if a.is_buffer for s in a.shape for n in expr.names(s)}
    free = sorted(shapes - in_grid)
    if not free and in_grid:
        return None
    partial, strided = [], []
    for index, resolved in enumerate(lab.resolved):
        threads = math.prod(resolved.block) * (1 if in_grid else math.prod(resolved.grid))
        sizes = [int(resolved.case[n]) for n in free] if in_grid else [_elements(lab, index)]
        if any(s % threads for s in sizes):
            partial.append(index)
        if any(s > threads for s in sizes):
            strided.append(index)
    size = " and ".join(free) if in_grid else "the output size"
    unit = "the block's threads" if in_grid else "the grid's threads"
    return _Coverage(partial, strided, True, f"{size} is always a multiple of {unit}",
                     f"{size} never exceeds {unit}")


def _coverages(lab: Lab) -> list[_Coverage]:
    """Every reading of the launch the spec allows."""
    tiled = [_tiled(lab, dim, size, tile) for dim, text in enumerate(lab.spec.grid)
             for size, tile in _cdivs(text)]
    if tiled:
        return tiled
    strided = _block_strided(lab)
    return [strided] if strided else []


def _launch_coverage(lab: Lab) -> list[SpecWarning]:
    """No case with a partial block; a loop in the launch that no case makes go round twice."""
    coverages = _coverages(lab)
    warnings = []
    if coverages and not any(c.partial for c in coverages):
        what = "; ".join(c.aligned for c in coverages)
        warnings.append(SpecWarning(WarningKind.NO_PARTIAL_BLOCK, (
            f"no case leaves a partial block ({what}): add sizes such as 1023 and 1025 so that "
            "a missing bounds check shows")))
    looping = [c for c in coverages if c.loops]
    if looping and not any(c.strided for c in looping):
        what = "; ".join(c.one_pass for c in looping)
        warnings.append(SpecWarning(WarningKind.NO_STRIDE_LOOP, (
            f"the launch has a stride loop that no case makes take a second pass ({what}): "
            "add a case large enough for it")))
    return warnings


# ---------------------------------------------------------------------------------------------
# Inputs


def _few_distinct(lab: Lab) -> list[SpecWarning]:
    """Inputs (in the largest case) whose values repeat so much that wrong indexing could go
    unnoticed. Accumulators that start at zeros or ones are left alone."""
    largest = max(range(len(lab.resolved)), key=lambda i: lab.resolved[i].nbytes(lab.spec))
    trial = lab.trial(largest, 0)
    warnings = []
    for arg in lab.spec.args:
        if arg.kind == "in" or (arg.kind == "inout" and arg.init not in STARTING_STATES):
            sample = trial.inputs[arg.name].reshape(-1)[:DISTINCT_SAMPLE]
            distinct = len(np.unique(sample))
            if sample.size >= 4 * FEW_VALUES and distinct < FEW_VALUES:
                warnings.append(SpecWarning(WarningKind.FEW_DISTINCT_VALUES, (
                    f"input {arg.name} (init {arg.init}) holds only {distinct} distinct "
                    f"value(s) in case {show_case(trial.resolved.case)}: a kernel that reads the "
                    "wrong element would often read the right value; widen the init"),
                    [trial.resolved.case]))
    return warnings
