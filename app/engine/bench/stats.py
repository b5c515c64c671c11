"""Statistics over timing samples: summaries of one variant and the bootstrap ratio of two.

Method (Triton's do_bench and NVIDIA nvbench): every sample is kept; two variants are compared
by the ratio of their medians, with a seeded (so repeatable) percentile-bootstrap confidence
interval.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from app.engine.worker.timing import relative_standard_error

BOOTSTRAP_RESAMPLES = 2000
BOOTSTRAP_CHUNK = 200


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

    @classmethod
    def from_json(cls, data: dict[str, Any] | None) -> Stats | None:
        """Stats from their JSON (None stays None)."""
        return None if data is None else cls(**data)


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
