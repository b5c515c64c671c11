"""The impostors of `spec-check`: wrong kernels simulated without a compiler or a GPU. Each one
forges the output buffers that a particular wrong kernel would leave behind; spec-check puts
them through the verifier's own checks to see whether the spec would let that kernel pass.

A forgery is, per output, the values written from element 0 onwards (shorter than the buffer:
the rest is left as the kernel found it; longer: the excess lands in the guard zone after it;
None: nothing written). Buffers start exactly as in a real run (app.engine.verify.buffers):
poison for `out`, the input values for `inout`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.engine.verify import buffers, checks
from app.engine.verify.reference import ReferenceError, expected_outputs
from app.engine.verify.results import Finding
from app.spec import expr
from app.spec.cases import Resolved
from app.spec.dtypes import lookup
from app.spec.model import Arg, Spec

Array = np.ndarray[Any, Any]
Forgery = dict[str, Array | None]
# Inputs of these types are rounded to float16 by the precision-downgrade impostor.
WIDE_FLOATS = ("float32", "float64")


class SpecProblem(Exception):
    """The spec's own inputs or reference fail: a bad spec, not a verdict on any kernel."""


@dataclass(frozen=True)
class Trial:
    """One case and seed of a spec: its inputs and the reference's answer for them."""

    index: int
    seed: int
    resolved: Resolved
    inputs: dict[str, Array]
    expected: dict[str, Array]


class Lab:
    """The spec, its reference and the trials made so far (each is computed once)."""

    def __init__(self, spec: Spec, reference: Callable[..., Any],
                 resolved: list[Resolved]) -> None:
        """Nothing is computed until a trial is asked for."""
        self.spec = spec
        self.reference = reference
        self.resolved = resolved
        self.trials: dict[tuple[int, int], Trial] = {}

    def trial(self, index: int, seed: int) -> Trial:
        """Case `index` with `seed`: the same inputs and expected values verify would use."""
        key = (index, seed)
        if key not in self.trials:
            resolved = self.resolved[index]
            where = f"case {show_case(resolved.case)} seed {seed}"
            try:
                inputs = buffers.generate_inputs(self.spec, resolved, seed, index)
            except ValueError as error:  # NumPy refuses bounds such as randint(5, 1)
                raise SpecProblem(f"{where}: cannot make the inputs: {error}") from None
            try:
                expected = expected_outputs(self.reference, self.spec, resolved, inputs)
            except ReferenceError as error:
                raise SpecProblem(f"{where}: {error}") from None
            self.trials[key] = Trial(index, seed, resolved, inputs, expected)
        return self.trials[key]

    def answer(self, resolved: Resolved, inputs: dict[str, Array]) -> dict[str, Array]:
        """The reference's answer for other inputs (an impostor's); ReferenceError if it fails."""
        return expected_outputs(self.reference, self.spec, resolved, inputs)

    @property
    def outputs(self) -> list[Arg]:
        """The buffers the kernel writes, in parameter order."""
        return [a for a in self.spec.args if a.kind in ("out", "inout")]


def show_case(case: dict[str, int | float]) -> str:
    """`{n=1000}`, as results print cases."""
    return "{" + ", ".join(f"{k}={v}" for k, v in case.items()) + "}"


def _write(image: Array, guard: int, values: Array) -> None:
    """Put values into an image from the start of its data; any excess overruns the guard."""
    body = np.ascontiguousarray(values).reshape(-1).view(np.uint8)
    end = min(image.size, guard + body.size)
    image[guard:end] = body[:end - guard]


def judge(lab: Lab, trial: Trial, forgery: Forgery,
          guard: int = buffers.GUARD_BYTES) -> list[Finding]:
    """The verifier's checks (guard zones, then the output against the reference) on a forged
    run. `in` buffers are left out: no impostor touches them, so their checks always pass."""
    findings: list[Finding] = []
    for arg in lab.outputs:
        with np.errstate(all="ignore"):  # forged values are wild on purpose; the checks judge
            findings += _judge_output(lab, trial, arg, forgery.get(arg.name), guard)
    return findings


def _judge_output(lab: Lab, trial: Trial, arg: Arg, values: Array | None,
                  guard: int) -> list[Finding]:
    """One output's image: the guard zones, then the values against the reference."""
    salt = f"spec-check {trial.index} {trial.seed}".encode()  # any salt will do: nothing reads
    image = buffers.image_for(arg, trial.resolved, trial.inputs, guard, salt)
    if values is not None:
        _write(image, guard, values.astype(lookup(arg.dtype).numpy, copy=False))
    data = buffers.data_of(image, arg, trial.resolved, guard)
    guard_finding = checks.check_guards(arg.name, image, guard, data.nbytes,
                                        buffers.expected_guards(arg, guard, salt),
                                        lookup(arg.dtype).itemsize)
    findings = [guard_finding] if guard_finding else []
    return findings + checks.check_output(arg.name, data, trial.expected[arg.name], arg.dtype,
                                          lab.spec.rtol, lab.spec.atol)


def _flat(trial: Trial, name: str) -> Array:
    """The expected values of one output, flat."""
    return trial.expected[name].reshape(-1)


def _starting(trial: Trial, arg: Arg) -> Array:
    """An output as the kernel finds it (poison, or the inout's input values), flat, a copy."""
    image = buffers.image_for(arg, trial.resolved, trial.inputs, 0)
    return buffers.data_of(image, arg, trial.resolved, 0).reshape(-1).copy()


def _constant(value: float) -> Callable[[Lab, Trial], Forgery]:
    """A kernel that fills every output with one value."""
    def forge(lab: Lab, trial: Trial) -> Forgery:
        """Every element the same."""
        return {a.name: np.full(_flat(trial, a.name).size, value) for a in lab.outputs}
    return forge


def _mean(lab: Lab, trial: Trial) -> Forgery:
    """A kernel that writes one plausible value everywhere: the mean of the expected output for
    another seed of the same case (this run's own mean would be the answer itself wherever an
    output has a single element)."""
    other = lab.trial(trial.index, other_seed(lab, trial.seed))
    forged: Forgery = {}
    for arg in lab.outputs:
        wide = _flat(other, arg.name).astype(np.float64)
        finite = wide[np.isfinite(wide)]
        mean = float(finite.mean()) if finite.size else 0.0
        if not lookup(arg.dtype).is_float:
            mean = float(round(mean))  # an integer kernel stores a whole number
        forged[arg.name] = np.full(wide.size, mean)
    return forged


def copy_sources(lab: Lab) -> dict[str, str]:
    """For each output, the first other input buffer with as many elements in every case."""
    sources: dict[str, str] = {}
    for out in lab.outputs:
        for arg in (a for a in lab.spec.args if a.kind in ("in", "inout") and a is not out):
            if all(math.prod(r.shapes[out.name]) == math.prod(r.shapes[arg.name])
                   for r in lab.resolved):
                sources[out.name] = arg.name
                break
    return sources


def _copy(lab: Lab, trial: Trial) -> Forgery:
    """A kernel that copies its input to its output; outputs without a matching input get the
    right answer, so that only the copied ones are put to the test."""
    sources = copy_sources(lab)
    return {a.name: trial.inputs[sources[a.name]].reshape(-1) if a.name in sources
            else _flat(trial, a.name) for a in lab.outputs}


def _skip_copy(lab: Lab) -> str:
    """The copy impostor needs an input as large as some output in every case."""
    return "" if copy_sources(lab) else "no input has as many elements as an output in every case"


def _nothing(lab: Lab, trial: Trial) -> Forgery:
    """A kernel that returns without writing."""
    return {a.name: None for a in lab.outputs}


def _prefix(count: Callable[[int], int]) -> Callable[[Lab, Trial], Forgery]:
    """A kernel that writes the right values to the first `count` elements only."""
    def forge(lab: Lab, trial: Trial) -> Forgery:
        """The expected values, cut short."""
        forged: Forgery = {}
        for arg in lab.outputs:
            flat = _flat(trial, arg.name)
            forged[arg.name] = flat[:count(flat.size)]
        return forged
    return forge


def _first_block(lab: Lab, trial: Trial) -> Forgery:
    """A kernel whose only working block is the first: for a 1-D block, the first block-size
    elements; for a 2-D or 3-D block over an output of as many dimensions, the corner tile."""
    block = trial.resolved.block[:len(lab.spec.block)]
    forged: Forgery = {}
    for arg in lab.outputs:
        expected = trial.expected[arg.name]
        if len(block) == 1 or expected.ndim < len(block):
            forged[arg.name] = expected.reshape(-1)[:math.prod(block)]
            continue
        lead = (slice(0, 1),) * (expected.ndim - len(block))
        tile = lead + tuple(slice(0, b) for b in reversed(block))  # x is the last dimension
        values = _starting(trial, arg).reshape(expected.shape)
        values[tile] = expected[tile].astype(values.dtype)
        forged[arg.name] = values.reshape(-1)
    return forged


def _same_bytes(one: Array, other: Array) -> bool:
    """Whether two arrays hold exactly the same bytes (NaN payloads included)."""
    return bool(np.array_equal(np.ascontiguousarray(one).view(np.uint8),
                               np.ascontiguousarray(other).view(np.uint8)))


def _unless_whole(forge: Callable[[Lab, Trial], Forgery]) -> Callable[[Lab], str]:
    """Skip a partial-write impostor where every output has a fixed size (no size variable in
    its shape) that it writes in full anyway: writing the first element of a one-element total,
    or the first 256 bins of a 256-bin histogram, is the right kernel, not an impostor."""
    def skip(lab: Lab) -> str:
        """Why the impostor is no impostor here, or "" where it is one."""
        if any(expr.names(s) for a in lab.outputs for s in a.shape):
            return ""
        trial = lab.trial(0, 0)
        forged = forge(lab, trial)
        for arg in lab.outputs:
            dtype = lookup(arg.dtype).numpy
            want = trial.expected[arg.name].astype(dtype).reshape(-1)
            values = forged[arg.name]
            if values is None or values.size < want.size or not _same_bytes(
                    values[:want.size].astype(dtype), want):
                return ""
        return "every output has a fixed size that this impostor writes in full (it is right)"
    return skip


def other_seed(lab: Lab, seed: int) -> int:
    """A different seed: the next of the spec's, or a neighbour where the spec has one."""
    if seed + 1 < lab.spec.seeds:
        return seed + 1
    return seed - 1 if seed > 0 else seed + 1


def _stale(lab: Lab, trial: Trial) -> Forgery:
    """A kernel that replays the answer it gave for other inputs (same case, another seed)."""
    other = lab.trial(trial.index, other_seed(lab, trial.seed))
    return {a.name: _flat(other, a.name) for a in lab.outputs}


def _half_inputs(lab: Lab) -> list[str]:
    """The float32 and float64 inputs, which a lazy kernel might read as float16."""
    return [a.name for a in lab.spec.args
            if a.kind in ("in", "inout") and a.dtype in WIDE_FLOATS]


def _skip_precision(lab: Lab) -> str:
    """Half-precision and integer inputs cannot be downgraded further."""
    return "" if _half_inputs(lab) else "no float32 or float64 input to round to float16"


def _precision(lab: Lab, trial: Trial) -> Forgery:
    """A kernel that computes from its inputs rounded to float16."""
    rounded = dict(trial.inputs)
    with np.errstate(over="ignore"):  # out-of-range values become inf, as a real cast would
        for name in _half_inputs(lab):
            rounded[name] = trial.inputs[name].astype(np.float16).astype(
                trial.inputs[name].dtype)
    answer = lab.answer(trial.resolved, rounded)
    return {a.name: answer[a.name].reshape(-1) for a in lab.outputs}


def _hard_coded(rest_zero: bool) -> Callable[[Lab, Trial], Forgery]:
    """A kernel that only knows the first case's sizes: it reads that many input elements
    (from the start), computes with the first case's scalars, and writes that many outputs."""
    def forge(lab: Lab, trial: Trial) -> Forgery:
        """The reference on the inputs' prefixes, placed at the start of each output."""
        first = lab.resolved[0]
        prefixes = {name: _fit(array, first.shapes[name]) for name, array in trial.inputs.items()}
        answer = lab.answer(first, prefixes) if trial.index else trial.expected
        forged: Forgery = {}
        for arg in lab.outputs:
            values = answer[arg.name].reshape(-1)
            size = _flat(trial, arg.name).size
            if rest_zero and values.size < size:
                values = np.concatenate([values, np.zeros(size - values.size, values.dtype)])
            forged[arg.name] = values
        return forged
    return forge


def _fit(array: Array, shape: tuple[int, ...]) -> Array:
    """The first elements of an array (zeros past its end), in another shape."""
    flat = array.reshape(-1)[:math.prod(shape)]
    if flat.size < math.prod(shape):
        flat = np.concatenate([flat, np.zeros(math.prod(shape) - flat.size, flat.dtype)])
    return flat.reshape(shape)


def _never_skip(lab: Lab) -> str:
    """Applies to every spec."""
    return ""


_FIRST_ELEMENT = _prefix(lambda _size: 1)
_FIRST_HALF = _prefix(lambda size: (size + 1) // 2)


@dataclass(frozen=True)
class Impostor:
    """One wrong kernel: how it forges outputs, and what to change in a spec it fools."""

    name: str
    description: str
    hint: str
    forge: Callable[[Lab, Trial], Forgery]
    skip: Callable[[Lab], str] = _never_skip


PANEL = (
    Impostor("zeros", "writes 0 to every output element",
             "the expected outputs are all zero: choose inputs that give nonzero results",
             _constant(0.0)),
    Impostor("ones", "writes 1 to every output element",
             "the expected outputs are all one: choose inputs that give varied results",
             _constant(1.0)),
    Impostor("mean", "writes one value, the mean of an expected output, to every element",
             "the expected output is (nearly) constant: choose inputs that give varied results",
             _mean),
    Impostor("copy_input", "copies the first input of the same size to the output",
             "the output equals the input in every case: add cases where it differs",
             _copy, _skip_copy),
    Impostor("nothing_written", "returns without writing anything",
             "the outputs as they start already match: give out buffers values the reference "
             "changes", _nothing),
    Impostor("first_element", "writes only the first element of each output",
             "every case has a single output element: add larger cases such as 1023 and 1025",
             _FIRST_ELEMENT, _unless_whole(_FIRST_ELEMENT)),
    Impostor("first_block", "writes only what the first thread block covers",
             "no case is larger than one block: add cases that need several blocks",
             _first_block, _unless_whole(_first_block)),
    Impostor("first_half", "writes only the first half of each output",
             "every case is too small to tell: add larger cases",
             _FIRST_HALF, _unless_whole(_FIRST_HALF)),
    Impostor("stale", "returns the answer for another seed's inputs (a cached result)",
             "the reference output does not depend on the random inputs: use random init "
             "(normal, uniform, randint) for the inputs", _stale),
    Impostor("precision_downgrade", "computes from its inputs rounded to float16",
             "the tolerance is too loose to tell float16 arithmetic from the real thing: "
             "tighten atol/rtol", _precision, _skip_precision),
    Impostor("hard_coded_size", "only handles the first case's sizes and leaves the rest "
             "unwritten", "add cases whose sizes differ from the first case's",
             _hard_coded(rest_zero=False)),
    Impostor("hard_coded_size_zero_rest", "only handles the first case's sizes and writes "
             "zeros past them", "add cases whose sizes differ from the first case's",
             _hard_coded(rest_zero=True)),
)
