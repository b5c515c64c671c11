"""A timing report (an engine BenchReport) handed to the charts as the plain arrays they take.

The report provides the arrays itself (samples per variant, the size sweep, the roofline
points) and, for A/B, its Comparison describes the ratio of medians with its bootstrap interval
(shown over the bars); this module only feeds them to the charts, with each variant's median
interval for the bars' whiskers from the engine's statistics (bootstrap_median).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from app.engine.bench.reports import BenchReport
from app.engine.bench.stats import bootstrap_median

BOOTSTRAP_RESAMPLES = 1000
CONFIDENCE = 0.95


class ChartsLike(Protocol):
    """The charts pane's feeding surface."""

    samples: Any
    variants: Any
    sweep: Any
    roofline: Any

    def show_fed(self, fed: set[str], why_not: str) -> None:
        """Show the charts that got data; say `why_not` when none did."""


def comparison_text(report: BenchReport) -> str:
    """The A/B comparison of the last case as the report states it, or '' without one."""
    comparison = report.points[-1].comparison if report.points else None
    return comparison.describe() if comparison is not None else ""


def median_interval(samples: Sequence[float], seed: int = 0) -> tuple[float, float, float]:
    """The median and a bootstrap confidence interval of it (NaN when empty), computed by the
    engine's own statistics."""
    return bootstrap_median(samples, CONFIDENCE, BOOTSTRAP_RESAMPLES, seed)


def feed_samples(charts: ChartsLike, names: Sequence[str],
                 samples: Sequence[Sequence[float]]) -> bool:
    """Strip plot of the samples, and bars at the medians with their intervals."""
    if not names:
        return False
    charts.samples.set_samples(list(names), [list(s) for s in samples])
    intervals = [median_interval(s) for s in samples]
    charts.variants.set_variants(list(names), [i[0] for i in intervals],
                                 [i[1] for i in intervals], [i[2] for i in intervals])
    return True


def feed_sweep(charts: ChartsLike, sizes: Sequence[float],
               series: Mapping[str, tuple[list[float], list[float]]]) -> bool:
    """Time and GB/s against size, when there are several sizes."""
    if len(sizes) < 2 or not series:
        return False
    charts.sweep.set_sweep(list(sizes), dict(series))
    return True


def feed_roofline(charts: ChartsLike, roofline: Mapping[str, Any]) -> bool:
    """Kernels under the measured roofs, when the peaks are known."""
    peak_gflops, peak_gbps = roofline.get("peak_gflops"), roofline.get("peak_gbps")
    if not peak_gflops or not peak_gbps:
        return False
    charts.roofline.set_roofline(float(peak_gflops), float(peak_gbps), list(roofline["names"]),
                                 list(roofline["intensity"]), list(roofline["gflops"]))
    return True


def feed_charts(charts: ChartsLike, report: BenchReport) -> str:
    """Feed every chart the report has data for; returns what was shown, in words."""
    shown, fed = [], set()
    names, samples = report.samples_chart()
    if feed_samples(charts, names, samples):
        shown.append(f"{len(names)} variant(s)")
        fed |= {"samples", "variants"}
    if feed_sweep(charts, *report.sweep_series()):
        shown.append("size sweep")
        fed.add("sweep")
    if feed_roofline(charts, report.roofline_points()):
        shown.append("roofline")
        fed.add("roofline")
    charts.variants.set_note(comparison_text(report))
    charts.show_fed(fed, f"Not timed: {report.message.removeprefix('not timed: ')}"
                    if report.message else "The timing run produced no samples.")
    return ", ".join(shown) or "no timing data in the result"
