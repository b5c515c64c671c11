"""KernelBench's own measures of an evaluation: correctness and fast_p, computed as KernelBench
computes them (its src/kernelbench/score.py and scripts/benchmark_eval_analysis.py).

- One sample per problem: KernelBench scores sample 0, so here the first chain of the first arm
  (chain 1; its last round when refining); the other chains count towards pass@k only.
- fast_p is the share of *all* problems evaluated that are correct and whose speedup over the
  baseline (the baseline's time over the kernel's) is greater than p: a problem that is wrong,
  or did not compile, counts in the denominator and never in the numerator. fast_0 is therefore
  the correctness rate of the timed problems; fast_1 asks for faster than PyTorch.
- Baselines: eager PyTorch (KernelBench's main figure) and torch.compile (inductor, default
  mode), timed on the same GPU, case and inputs as the kernel (app.engine.bench.torch_forward).
  A correct problem whose timing could not be had is left out of that baseline's denominator
  and counted in `unknown`, never guessed.

Differences from KernelBench, said where the figures are shown: times are medians of cold
samples with the host's queueing hidden (KernelBench: means of events around the call), and
each share has a percentile bootstrap interval over problems (metrics.bootstrap_interval).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from app.assist.evaluation.metrics import bootstrap_interval
from app.base import codec

P_VALUES = (0.0, 1.0, 2.0)
EAGER = "eager"
COMPILE = "compile"
BASELINES = (EAGER, COMPILE)
BASELINE_WORDS = {EAGER: "eager PyTorch", COMPILE: "torch.compile"}


@dataclass(frozen=True)
class ProblemOutcome:
    """One KernelBench problem: whether its first chain's kernel was correct, and (on a GPU)
    the kernel's and the forward's median times and the speedups with their intervals."""

    task: str
    level: int
    correct: bool
    kernel_ms: float | None = None
    eager_ms: float | None = None
    compile_ms: float | None = None
    speedup_eager: float | None = None
    eager_low: float | None = None
    eager_high: float | None = None
    speedup_compile: float | None = None
    compile_low: float | None = None
    compile_high: float | None = None
    note: str = ""

    def speedup(self, baseline: str) -> float | None:
        """The speedup over eager or compile, when it was measured."""
        return self.speedup_eager if baseline == EAGER else self.speedup_compile

    def faster_than(self, baseline: str, p: float) -> bool | None:
        """Whether this problem counts in fast_p: False when it is wrong, None when it is
        correct but its speedup is unknown."""
        if not self.correct:
            return False
        speedup = self.speedup(baseline)
        return None if speedup is None else speedup > p


@dataclass(frozen=True)
class Share:
    """How many of `total` problems meet a condition, as a share with its bootstrap interval
    over problems; `unknown` problems could not be decided and are left out of `total`."""

    count: int
    total: int
    share: float | None
    low: float | None
    high: float | None
    unknown: int = 0

    def describe(self) -> str:
        """'0.500 (95% interval 0.000 to 1.000), 1 of 2'."""
        if self.share is None or self.low is None or self.high is None:
            return "no problem decided"
        unknown = f"; {self.unknown} not timed, left out" if self.unknown else ""
        return (f"{self.share:.3f} (95% interval {self.low:.3f} to {self.high:.3f}), "
                f"{self.count} of {self.total}{unknown}")


def share_of(marks: list[bool | None]) -> Share:
    """The share of True among the decided marks (None: undecided), with its interval."""
    decided = [m for m in marks if m is not None]
    unknown = len(marks) - len(decided)
    if not decided:
        return Share(0, 0, None, None, None, unknown)
    values = [1.0 if m else 0.0 for m in decided]
    low, high = bootstrap_interval(values)
    return Share(int(sum(values)), len(values), sum(values) / len(values), low, high, unknown)


@dataclass(frozen=True)
class FastP:
    """fast_p over one baseline."""

    baseline: str
    p: float
    share: Share


def fast_p(outcomes: list[ProblemOutcome], p: float, baseline: str = EAGER) -> FastP:
    """fast_p: the share of problems both correct and more than p times faster than the
    baseline (see the module's notes)."""
    return FastP(baseline, p, share_of([o.faster_than(baseline, p) for o in outcomes]))


def geometric_mean_speedup(outcomes: list[ProblemOutcome], baseline: str = EAGER) -> float | None:
    """The geometric mean of the speedups of the correct problems (KernelBench reports it
    beside fast_p), None when none was timed."""
    values = [s for o in outcomes if o.correct and (s := o.speedup(baseline)) and s > 0]
    return math.exp(sum(map(math.log, values)) / len(values)) if values else None


@dataclass
class KernelBenchMeasures:
    """What an evaluation stores under "kernelbench": the arm scored, every problem's outcome,
    and whether speedups were measured (`timed`; `reason` says why not, e.g. no GPU)."""

    arm: str
    problems: list[ProblemOutcome] = field(default_factory=list)
    timed: bool = False
    reason: str = ""
    device: str = ""

    def correctness(self) -> Share:
        """The share of problems whose first chain was correct."""
        return share_of([o.correct for o in self.problems])

    def fast_p_table(self) -> list[FastP]:
        """fast_p for every p of P_VALUES over both baselines (none when not timed)."""
        if not self.timed:
            return []
        return [fast_p(self.problems, p, b) for b in BASELINES for p in P_VALUES]

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready data (the codec's), with the computed figures beside the records."""
        return codec.to_object(self)

    @classmethod
    def from_dict(cls, data: Any) -> KernelBenchMeasures:
        """From stored data (CodecError naming the field when it is not one)."""
        return codec.from_data(cls, data, "kernelbench measures")


def _figures(measures: KernelBenchMeasures) -> dict[str, Any]:
    """The stored figures: correctness, fast_p by baseline and p, geometric mean speedups."""
    table: dict[str, dict[str, Any]] = {}
    for item in measures.fast_p_table():
        table.setdefault(item.baseline, {})[f"fast_{item.p:g}"] = codec.to_object(item.share)
    geomeans = {b: geometric_mean_speedup(measures.problems, b) for b in BASELINES} \
        if measures.timed else {}
    return {"correct": codec.to_object(measures.correctness()), "fast_p": table,
            "geomean_speedup": geomeans}


codec.shape(KernelBenchMeasures, _figures)


def describe(measures: KernelBenchMeasures, pass_line: str = "") -> str:
    """KernelBench's measures in words: correctness, then fast_p per baseline (or why they
    were not measured), then a line per problem."""
    lines = [f"KernelBench measures ({len(measures.problems)} problems; sample 0 = chain 1 of "
             f"{measures.arm}, as KernelBench scores):",
             f"  correct: {measures.correctness().describe()}"]
    if pass_line:
        lines.append(f"  next to pass@k: {pass_line}")
    if not measures.timed:
        lines.append(f"  fast_p: not measured: {measures.reason}")
    for baseline in BASELINES if measures.timed else ():
        cells = [f"fast_{f.p:g} {f.share.describe()}" for f in measures.fast_p_table()
                 if f.baseline == baseline]
        mean = geometric_mean_speedup(measures.problems, baseline)
        lines.append(f"  over {BASELINE_WORDS[baseline]}" + (f" on {measures.device}" if
                     measures.device else "") + ":")
        lines += [f"    {cell}" for cell in cells]
        lines.append("    geometric mean speedup of the correct ones: "
                     + ("-" if mean is None else f"{mean:.3g}x"))
    lines += [f"  {_problem_line(o)}" for o in measures.problems]
    return "\n".join(lines)


def _problem_line(outcome: ProblemOutcome) -> str:
    """One problem: correct or not, times, speedups with intervals, what went wrong."""
    parts = [f"{outcome.task} (level {outcome.level}): "
             + ("correct" if outcome.correct else "not correct")]
    if outcome.kernel_ms is not None:
        parts.append(f"kernel {outcome.kernel_ms:.4g} ms")
    for baseline, ms, low, high in ((EAGER, outcome.eager_ms, outcome.eager_low,
                                     outcome.eager_high),
                                    (COMPILE, outcome.compile_ms, outcome.compile_low,
                                     outcome.compile_high)):
        speedup = outcome.speedup(baseline)
        if ms is not None and speedup is not None:
            parts.append(f"{baseline} {ms:.4g} ms, speedup {speedup:.3g}x ({low:.3g}..{high:.3g})")
    if outcome.note:
        parts.append(outcome.note)
    return "; ".join(parts)
