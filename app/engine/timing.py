"""The statistics of kernel timing, free of any device: what a plan asks for, when sampling
stops, how samples are summarised, and how two variants are compared.

Method (DESIGN.md, house style; Triton's do_bench and NVIDIA nvbench): every sample is one launch
timed by its own event pair; sampling stops when the relative standard error of the mean falls
under a target (at least `min_samples` first), when the time budget is spent, or at a sample
cap; every sample is kept. Two variants are compared by the ratio of their medians, with a
seeded (so repeatable) percentile-bootstrap confidence interval.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

MODES = ("cold", "hot")
# Stop reasons, in the words the reports use.
STOP_WORDS = {
    "noise": "the noise fell under the target",
    "budget": "the time budget was spent",
    "cap": "the sample cap was reached",
    "limit": "the hard time limit was reached before the minimum sample count",
}
BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_CHUNK = 200
_PLAN_FIELDS = ("mode", "budget_ms", "min_samples", "max_samples", "rse_target", "warmup_ms",
                "max_warmup", "limit_ms")


class PlanError(ValueError):
    """A timing plan that cannot be followed; the message names the field."""


@dataclass(frozen=True)
class TimingPlan:
    """How to time: cache mode, budget per variant, sample bounds, noise target, warm-up."""

    mode: str = "cold"
    budget_ms: float = 2000.0
    min_samples: int = 10
    max_samples: int = 10_000
    rse_target: float = 0.005
    warmup_ms: float = 25.0
    max_warmup: int = 1000
    # A hard stop even below min_samples (a kernel of seconds); None: ten budgets, at least 20 s.
    limit_ms: float | None = None

    def __post_init__(self) -> None:
        """Refuse plans that make no sense, naming the field."""
        if self.mode not in MODES:
            raise PlanError(f"mode must be one of {', '.join(MODES)}, not {self.mode!r}")
        if not self.budget_ms > 0:
            raise PlanError("budget_ms must be positive")
        if not 1 <= self.min_samples <= self.max_samples:
            raise PlanError("min_samples must be at least 1 and at most max_samples")
        if not 0 < self.rse_target < 1:
            raise PlanError("rse_target must be between 0 and 1 (0.005 is 0.5%)")
        if self.warmup_ms < 0 or self.max_warmup < 1:
            raise PlanError("warmup_ms cannot be negative and max_warmup must be at least 1")

    def hard_limit_ms(self, variants: int) -> float:
        """When sampling stops whatever the sample count."""
        if self.limit_ms is not None:
            return self.limit_ms
        return max(10 * self.budget_ms * variants, 20_000.0)

    def to_message(self) -> dict[str, Any]:
        """The plan as JSON for the worker."""
        return asdict(self)

    @classmethod
    def from_message(cls, data: dict[str, Any]) -> TimingPlan:
        """A plan from the worker protocol (unknown keys are refused)."""
        unknown = set(data) - set(_PLAN_FIELDS)
        if unknown:
            raise PlanError(f"unknown plan fields: {', '.join(sorted(unknown))}")
        return cls(**data)


@dataclass(frozen=True)
class Stats:
    """A summary of one variant's samples (milliseconds)."""

    count: int
    median: float
    mean: float
    min: float
    max: float
    p10: float
    p90: float
    iqr: float
    stdev: float
    rse: float | None  # relative standard error of the mean; None below two samples


def relative_standard_error(samples: Sequence[float]) -> float | None:
    """Standard error of the mean over the mean; None when it is not defined."""
    if len(samples) < 2:
        return None
    values = np.asarray(samples, dtype=np.float64)
    mean = float(values.mean())
    if mean <= 0:
        return None
    return float(values.std(ddof=1)) / math.sqrt(values.size) / mean


def summarize(samples: Sequence[float]) -> Stats:
    """Median, mean, min, max, p10, p90, IQR, standard deviation and RSE of the samples."""
    if not samples:
        raise ValueError("no samples to summarise")
    values = np.asarray(samples, dtype=np.float64)
    p10, q1, median, q3, p90 = (float(v) for v in np.percentile(values, [10, 25, 50, 75, 90]))
    stdev = float(values.std(ddof=1)) if values.size > 1 else 0.0
    return Stats(count=int(values.size), median=median, mean=float(values.mean()),
                 min=float(values.min()), max=float(values.max()), p10=p10, p90=p90,
                 iqr=q3 - q1, stdev=stdev, rse=relative_standard_error(samples))


def _quiet(samples: Sequence[float], target: float) -> bool:
    """Whether one variant's noise is under the target."""
    rse = relative_standard_error(samples)
    return rse is not None and rse < target


def stop_reason(plan: TimingPlan, samples: Sequence[Sequence[float]],
                elapsed_ms: float) -> str | None:
    """Why sampling should stop now (a key of STOP_WORDS), or None to go on.

    `samples` holds each variant's samples so far; `elapsed_ms` the time spent sampling. The
    budget is per variant, so two interleaved variants get twice the time."""
    counts = [len(s) for s in samples]
    if not counts:
        return "cap"
    if min(counts) >= plan.max_samples:
        return "cap"
    enough = min(counts) >= plan.min_samples
    if enough and all(_quiet(s, plan.rse_target) for s in samples):
        return "noise"
    if enough and elapsed_ms >= plan.budget_ms * len(counts):
        return "budget"
    if elapsed_ms >= plan.hard_limit_ms(len(counts)):
        return "limit"
    return None


def interleave_order(rounds: int, variants: int) -> list[int]:
    """The launch order of interleaved timing: ABAB... (one sample of each variant per round)."""
    return [variant for _ in range(rounds) for variant in range(variants)]


@dataclass(frozen=True)
class RatioInterval:
    """median(a) / median(b), with a bootstrap confidence interval."""

    ratio: float
    low: float
    high: float
    level: float
    resamples: int
    seed: int

    @property
    def no_difference(self) -> bool:
        """The interval includes 1.0: the data cannot tell the two apart."""
        return self.low <= 1.0 <= self.high


def _bootstrap_medians(values: np.ndarray[Any, Any], resamples: int,
                       rng: np.random.Generator) -> np.ndarray[Any, Any]:
    """Medians of `resamples` resamples (with replacement) of `values`, in chunks."""
    medians = np.empty(resamples, dtype=np.float64)
    for start in range(0, resamples, BOOTSTRAP_CHUNK):
        stop = min(start + BOOTSTRAP_CHUNK, resamples)
        picks = rng.integers(0, values.size, size=(stop - start, values.size))
        medians[start:stop] = np.median(values[picks], axis=1)
    return medians


def bootstrap_median(samples: Sequence[float], level: float = 0.95,
                     resamples: int = BOOTSTRAP_RESAMPLES,
                     seed: int = 0) -> tuple[float, float, float]:
    """The median of the finite samples and its percentile-bootstrap interval, seeded (NaN
    three times when there is no sample): the whiskers of a variant's bar."""
    values = np.asarray(samples, dtype=np.float64)
    values = values[np.isfinite(values)]
    if values.size == 0:
        return float("nan"), float("nan"), float("nan")
    medians = _bootstrap_medians(values, resamples, np.random.default_rng(seed))
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = (float(v) for v in np.percentile(medians, [tail, 100.0 - tail]))
    return float(np.median(values)), low, high


def bootstrap_ratio(a: Sequence[float], b: Sequence[float], level: float = 0.95,
                    resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> RatioInterval:
    """The ratio of medians of a over b and its percentile-bootstrap interval.

    Each variant is resampled on its own; the generator is seeded, so the same samples always
    give the same interval."""
    if not a or not b:
        raise ValueError("both variants need samples")
    if not 0 < level < 1:
        raise ValueError("level must be between 0 and 1")
    first = np.asarray(a, dtype=np.float64)
    second = np.asarray(b, dtype=np.float64)
    rng = np.random.default_rng(seed)
    ratios = _bootstrap_medians(first, resamples, rng) / _bootstrap_medians(second, resamples,
                                                                             rng)
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = (float(v) for v in np.percentile(ratios, [tail, 100.0 - tail]))
    ratio = float(np.median(first) / np.median(second))
    return RatioInterval(ratio, low, high, level, resamples, seed)
