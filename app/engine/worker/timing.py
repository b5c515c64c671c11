"""What a timing request asks of a worker and when its sampling stops, free of any device: the
plan that travels in a `bench` message, the noise-based stopping rule, and the sampling outcome
and record a backend answers with. Summaries and comparisons of samples: app.engine.bench.stats.

Method (docs/architecture.md, house style; Triton's do_bench and NVIDIA nvbench): every sample
is one run of a variant (one launch, or the whole sequence of a spec of several launches) timed
by its own event pair; sampling stops when the relative standard error of
the mean falls under a target (at least `min_samples` first), when the time budget is spent, or
at a sample cap; every sample is kept.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from enum import StrEnum
from typing import Any

import numpy as np


class TimingMode(StrEnum):
    """Cold: L2 flushed before each sample; hot: caches stay warm between samples."""

    COLD = "cold"
    HOT = "hot"


MODES = tuple(TimingMode)


class StopReason(StrEnum):
    """Why sampling stopped (its value is the word the JSON keeps)."""

    NOISE = "noise"
    BUDGET = "budget"
    CAP = "cap"
    LIMIT = "limit"


# Stop reasons, in the words the reports use.
STOP_WORDS = {
    StopReason.NOISE: "the noise fell under the target",
    StopReason.BUDGET: "the time budget was spent",
    StopReason.CAP: "the sample cap was reached",
    StopReason.LIMIT: "the hard time limit was reached before the minimum sample count",
}
_PLAN_FIELDS = ("mode", "budget_ms", "min_samples", "max_samples", "rse_target", "warmup_ms",
                "max_warmup", "limit_ms")


class PlanError(ValueError):
    """A timing plan that cannot be followed; the message names the field."""


@dataclass(frozen=True)
class TimingPlan:
    """How to time: cache mode, budget per variant, sample bounds, noise target, warm-up."""

    mode: TimingMode = TimingMode.COLD
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
        object.__setattr__(self, "mode", TimingMode(self.mode))  # a plain string from JSON
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


def relative_standard_error(samples: Sequence[float]) -> float | None:
    """Standard error of the mean over the mean; None when it is not defined."""
    if len(samples) < 2:
        return None
    values = np.asarray(samples, dtype=np.float64)
    mean = float(values.mean())
    if mean <= 0:
        return None
    return float(values.std(ddof=1)) / math.sqrt(values.size) / mean


def _quiet(samples: Sequence[float], target: float) -> bool:
    """Whether one variant's noise is under the target."""
    rse = relative_standard_error(samples)
    return rse is not None and rse < target


def stop_reason(plan: TimingPlan, samples: Sequence[Sequence[float]],
                elapsed_ms: float) -> StopReason | None:
    """Why sampling should stop now, or None to go on.

    `samples` holds each variant's samples so far; `elapsed_ms` the time spent sampling. The
    budget is per variant, so two interleaved variants get twice the time."""
    counts = [len(s) for s in samples]
    if not counts or min(counts) >= plan.max_samples:
        return StopReason.CAP
    enough = min(counts) >= plan.min_samples
    if enough and all(_quiet(s, plan.rse_target) for s in samples):
        return StopReason.NOISE
    if enough and elapsed_ms >= plan.budget_ms * len(counts):
        return StopReason.BUDGET
    if elapsed_ms >= plan.hard_limit_ms(len(counts)):
        return StopReason.LIMIT
    return None


def interleave_order(rounds: int, variants: int) -> list[int]:
    """The launch order of interleaved timing: ABAB... (one sample of each variant per round)."""
    return [variant for _ in range(rounds) for variant in range(variants)]


@dataclass
class SamplingOutcome:
    """What the loop measured; every sample is kept, in milliseconds."""

    samples_ms: list[list[float]]
    order: list[int]
    stop_reason: StopReason
    warmup_launches: list[int]
    clock_start_mhz: float | None = None
    clock_end_mhz: float | None = None
    clock_min_mhz: float | None = None
    sampling_ms: float = 0.0
    # Per-launch times (asked for): launch_ms[variant][launch][sample], each launch's part of
    # the sample of the same index; empty when not asked.
    launch_ms: list[list[list[float]]] = field(default_factory=list)

    def to_reply(self) -> dict[str, Any]:
        """JSON for the protocol."""
        reply: dict[str, Any] = {
            "samples_ms": self.samples_ms, "order": self.order, "stop_reason": self.stop_reason,
            "warmup_launches": self.warmup_launches,
            "clocks": {"start_mhz": self.clock_start_mhz, "end_mhz": self.clock_end_mhz,
                       "min_mhz": self.clock_min_mhz},
            "sampling_ms": self.sampling_ms}
        if self.launch_ms:
            reply["launch_ms"] = self.launch_ms
        return reply


@dataclass
class TimingRecord:
    """A backend's answer to a timing request: the outcome, the images of each variant's first
    timed sample (one entry per argument of each of its launches in turn, None for scalars; a
    buffer several launches share appears once per launch naming it), and device facts."""

    outcome: SamplingOutcome
    first_images: list[list[np.ndarray[Any, Any] | None]]
    facts: dict[str, Any] = field(default_factory=dict)
