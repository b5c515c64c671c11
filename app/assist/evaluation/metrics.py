"""Figures of an evaluation graded by execution: pass@k with the unbiased estimator, means by
level and dtype, and the lift between two arms with a bootstrap interval over tasks.

pass@k (Chen et al., 2021): with n samples of which c passed, the chance that at least one of k
drawn without replacement passes is 1 - C(n - c, k) / C(n, k); averaging it over tasks is
unbiased, unlike 1 - (1 - c/n)^k.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from statistics import fmean
from typing import Any

from app.base import codec

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_SEED = 20261
CONFIDENCE = 0.95


def pass_at_k(n: int, c: int, k: int) -> float:
    """The unbiased pass@k of one task from n samples, c of which passed (k <= n)."""
    if not 0 <= c <= n or not 1 <= k <= n:
        raise ValueError(f"pass@k needs 0 <= c <= n and 1 <= k <= n (n={n}, c={c}, k={k})")
    if n - c < k:
        return 1.0
    return 1.0 - math.comb(n - c, k) / math.comb(n, k)


@dataclass(frozen=True)
class TaskOutcome:
    """One task in one arm: how many chains ran, how many passed, and what they cost."""

    task: str
    level: int
    dtype: str
    chains: int
    passed: int
    attempts: int = 0
    compile_errors: int = 0
    rounds_to_pass: tuple[int, ...] = ()
    new_tokens: int = 0
    prompt_tokens: int = 0
    generate_s: float = 0.0
    verify_s: float = 0.0
    undecided: int = 0
    no_code: int = 0
    # With speed rounds: per chain that passed and was timed, its kept kernel's speedup over
    # its first passing one
    speedups: tuple[float, ...] = ()
    # Answers asked again because they repeated a kernel their chain had tried (not attempts)
    redraws: int = 0

    def pass_at(self, k: int) -> float:
        """pass@k of this task (k capped at the chains that ran)."""
        return pass_at_k(self.chains, self.passed, min(k, self.chains))

    @classmethod
    def from_dict(cls, data: Any) -> TaskOutcome:
        """An outcome from its stored JSON (CodecError naming the field when it is not one)."""
        return codec.from_data(cls, data, "task outcome")


def _rounded_times(outcome: TaskOutcome) -> dict[str, Any]:
    """An outcome's times as stored: to the millisecond."""
    return {"generate_s": round(outcome.generate_s, 3), "verify_s": round(outcome.verify_s, 3)}


# Speedups are written only where speed rounds ran: other results keep the lines they had.
codec.shape(TaskOutcome, _rounded_times, omit_empty=("speedups", "redraws"))


def _mean(values: Iterable[float]) -> float | None:
    """The mean, or None for no values."""
    listed = list(values)
    return fmean(listed) if listed else None


@dataclass(frozen=True)
class Summary:
    """The figures of one arm over its tasks."""

    tasks: int
    k: int
    pass_at_1: float | None
    pass_at_k: float | None
    compile_error_rate: float | None
    rounds_to_pass: float | None
    new_tokens: int
    prompt_tokens: int
    generate_s: float
    verify_s: float
    attempts: int
    by_level: dict[str, dict[str, float | int | None]] = field(default_factory=dict)
    by_dtype: dict[str, dict[str, float | int | None]] = field(default_factory=dict)
    # With speed rounds: the geometric mean of the kept kernels' speedups over the first
    # passing ones, and how many chains it covers
    speedup: float | None = None
    timed_chains: int = 0
    redraws: int = 0


codec.shape(Summary, omit_empty=("speedup", "timed_chains", "redraws"))


def _group(outcomes: list[TaskOutcome], key: Callable[[TaskOutcome], Any],
           k: int) -> dict[str, dict[str, float | int | None]]:
    """pass@1 and pass@k per group."""
    groups: dict[str, list[TaskOutcome]] = {}
    for outcome in outcomes:
        groups.setdefault(str(key(outcome)), []).append(outcome)
    return {name: {"tasks": len(items), "pass_at_1": _mean(o.pass_at(1) for o in items),
                   f"pass_at_{k}": _mean(o.pass_at(k) for o in items)}
            for name, items in sorted(groups.items())}


def summarize(outcomes: list[TaskOutcome], k: int) -> Summary:
    """The arm's figures; tasks where no chain could be decided are left out of pass@k."""
    decided = [o for o in outcomes if o.chains > 0]
    attempts = sum(o.attempts for o in outcomes)
    rounds = [r for o in outcomes for r in o.rounds_to_pass]
    return Summary(
        tasks=len(decided), k=k,
        pass_at_1=_mean(o.pass_at(1) for o in decided),
        pass_at_k=_mean(o.pass_at(k) for o in decided),
        compile_error_rate=sum(o.compile_errors for o in outcomes) / attempts if attempts else None,
        rounds_to_pass=_mean(rounds), new_tokens=sum(o.new_tokens for o in outcomes),
        prompt_tokens=sum(o.prompt_tokens for o in outcomes),
        generate_s=round(sum(o.generate_s for o in outcomes), 3),
        verify_s=round(sum(o.verify_s for o in outcomes), 3), attempts=attempts,
        by_level=_group(decided, lambda o: o.level, k),
        by_dtype=_group(decided, lambda o: o.dtype, k),
        speedup=_geomean(s for o in outcomes for s in o.speedups),
        timed_chains=sum(len(o.speedups) for o in outcomes),
        redraws=sum(o.redraws for o in outcomes))


def _geomean(values: Iterable[float]) -> float | None:
    """The geometric mean of positive values, or None for none."""
    listed = [v for v in values if v > 0]
    return math.exp(fmean(math.log(v) for v in listed)) if listed else None


@dataclass(frozen=True)
class Lift:
    """The mean difference of pass@1 (treatment minus control) over the tasks both arms
    decided, with a percentile bootstrap interval over tasks."""

    control: str
    treatment: str
    tasks: int
    mean: float | None
    low: float | None
    high: float | None
    confidence: float = CONFIDENCE

    def as_dict(self) -> dict[str, Any]:
        """A JSON-ready description (the codec's)."""
        return codec.to_object(self)

    def describe(self) -> str:
        """'+0.031 (95% interval -0.010 to +0.072) over 40 tasks'."""
        if self.mean is None or self.low is None or self.high is None:
            return "no task was decided in both arms"
        return (f"{self.mean:+.3f} ({self.confidence:.0%} interval {self.low:+.3f} to "
                f"{self.high:+.3f}) over {self.tasks} tasks")


def bootstrap_interval(differences: list[float], resamples: int = BOOTSTRAP_RESAMPLES,
                       seed: int = BOOTSTRAP_SEED,
                       confidence: float = CONFIDENCE) -> tuple[float, float]:
    """The percentile interval of the mean of `differences` over resampled tasks."""
    rng = random.Random(seed)
    count = len(differences)
    means = sorted(fmean(rng.choices(differences, k=count)) for _ in range(resamples))
    tail = (1.0 - confidence) / 2
    low = means[int(math.floor(tail * (resamples - 1)))]
    high = means[int(math.ceil((1.0 - tail) * (resamples - 1)))]
    return low, high


def lift(control: str, treatment: str, before: list[TaskOutcome],
         after: list[TaskOutcome]) -> Lift:
    """The lift of `treatment` over `control` on the tasks both decided (paired by task)."""
    mine = {o.task: o for o in after if o.chains > 0}
    pairs = [(o, mine[o.task]) for o in before if o.chains > 0 and o.task in mine]
    differences = [b.pass_at(1) - a.pass_at(1) for a, b in pairs]
    if not differences:
        return Lift(control, treatment, 0, None, None, None)
    low, high = bootstrap_interval(differences)
    return Lift(control, treatment, len(differences), fmean(differences), low, high)
