"""Timing results (a bench job's JSON) turned into the plain arrays the charts take.

The engine's report provides the arrays itself (BenchReport.to_json()["charts"]: samples,
sweep, roofline) and, for A/B, the ratio of medians with its bootstrap interval (shown over the
bars); this module hands them to the charts, with each variant's median interval for the bars'
whiskers from the engine's statistics (app.engine.worker.timing.bootstrap_median).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from app.engine.bench.stats import bootstrap_median

BOOTSTRAP_RESAMPLES = 1000
CONFIDENCE = 0.95


def comparison_text(data: Mapping[str, Any]) -> str:
    """The A/B comparison of the last case as the report states it (its ratio of medians with
    the report's bootstrap interval), or '' without a baseline."""
    points = data.get("points") or []
    found = points[-1].get("comparison") if points else None
    if not found:
        return ""
    level = float(found.get("level") or 0.95)
    text = (f"time ratio {found['candidate']}/{found['baseline']} = {found['ratio']:.4f} "
            f"({level:.0%} CI {found['low']:.4f}..{found['high']:.4f})")
    return text + (": no measurable difference" if found.get("no_difference") else "")


class ChartsLike(Protocol):
    """The charts pane's feeding surface."""

    samples: Any
    variants: Any
    sweep: Any
    roofline: Any


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


def _floats(values: Sequence[Any] | None) -> list[float]:
    """Numbers from JSON, null (an unknown value) as NaN."""
    return [float("nan") if v is None else float(v) for v in values or []]


def feed_sweep(charts: ChartsLike, sizes: Sequence[float],
               series: Mapping[str, Mapping[str, Any]]) -> bool:
    """Time and GB/s against size, when there are several sizes."""
    if len(sizes) < 2 or not series:
        return False
    charts.sweep.set_sweep(_floats(sizes), {
        name: (_floats(s.get("time_ms")), _floats(s.get("gbps"))) for name, s in series.items()})
    return True


def feed_roofline(charts: ChartsLike, roofline: Mapping[str, Any]) -> bool:
    """Kernels under the measured roofs, when the peaks are known."""
    peak_gflops, peak_gbps = roofline.get("peak_gflops"), roofline.get("peak_gbps")
    if not peak_gflops or not peak_gbps:
        return False
    charts.roofline.set_roofline(float(peak_gflops), float(peak_gbps),
                                 list(roofline.get("names") or []),
                                 list(roofline.get("intensity") or []),
                                 list(roofline.get("gflops") or []))
    return True


def feed_charts(charts: ChartsLike, data: Mapping[str, Any]) -> str:
    """Feed every chart the result has data for; returns what was shown, in words."""
    arrays = data.get("charts") or {}
    shown = []
    samples = arrays.get("samples") or {}
    names = list(samples.get("names") or [])
    if feed_samples(charts, names, [_floats(s) for s in samples.get("samples_ms") or []]):
        shown.append(f"{len(names)} variant(s)")
    sweep = arrays.get("sweep") or {}
    if feed_sweep(charts, sweep.get("sizes") or [], sweep.get("series") or {}):
        shown.append("size sweep")
    if feed_roofline(charts, arrays.get("roofline") or {}):
        shown.append("roofline")
    charts.variants.set_note(comparison_text(data))
    return ", ".join(shown) or "no timing data in the result"
